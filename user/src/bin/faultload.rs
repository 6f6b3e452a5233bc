//! The fault-injection campaign's workloads (`cargo xtask faults`, paper
//! 004 §4; `init=faultload blk,net`): each drives one driver through the
//! block or packet system calls, checks its own data, and prints one
//! verdict line that the campaign classifies (`ok`, `error`, `hang`,
//! `lost` or `corrupt`). A failed workload does not stop the program: it
//! goes on to its last line, which is what shows that the kernel
//! survived the faulty driver.
#![no_std]
#![no_main]

use abi::dev::{bytes_of, status, status_of, BLOCK, NET};
use drvapi::{disk_pattern_byte, workload_byte, WORKLOAD_BLOCKS, WORKLOAD_SECTOR};
use user::dev::{self, Page};
use user::{kinfo, println, sys};

/// How long the workload waits for a request before it calls the driver
/// hung (3 s of 2 ms ticks: longer than the kernel's own request
/// deadline, so that a hang here is one the kernel did not notice).
const PATIENCE: u64 = 1500;

/// The verdict, worst first: what the campaign classifies by.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Verdict {
    Ok,
    Error,
    Hang,
    Lost,
    Corrupt,
}

/// The workload's findings: the worst verdict and the first reason for it.
struct Report {
    name: &'static str,
    verdict: Verdict,
    why: [u8; 120],
    len: usize,
}

impl core::fmt::Write for Report {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        // Whole characters only, so that `why` stays UTF-8.
        for c in s.chars() {
            if self.len + c.len_utf8() > self.why.len() {
                break;
            }
            self.len += c.encode_utf8(&mut self.why[self.len..]).len();
        }
        Ok(())
    }
}

impl Report {
    fn new(name: &'static str) -> Self {
        Report { name, verdict: Verdict::Ok, why: [0; 120], len: 0 }
    }

    fn note(&mut self, v: Verdict, why: core::fmt::Arguments) {
        if v > self.verdict {
            self.verdict = v;
            self.len = 0;
            let _ = core::fmt::Write::write_fmt(self, why);
        }
    }

    fn print(&self) {
        let word = ["ok", "error", "hang", "lost", "corrupt"][self.verdict as usize];
        let why = core::str::from_utf8(&self.why[..self.len]).unwrap_or("");
        let why = if self.verdict == Verdict::Ok { "all data verified" } else { why };
        println!("faultload {}: {word}: {why}", self.name);
    }
}

/// Block workload: blocks of the disk's pattern read, then blocks written
/// and read back, several requests in flight.
const PATTERN_AT: u64 = 512;
const BLOCKS: usize = WORKLOAD_BLOCKS;
const SECTORS_PER_BLOCK: u64 = 8;
/// Most requests in flight at once (completion words 0..IN_FLIGHT), fewer
/// if the driver's queue is shorter.
const IN_FLIGHT: usize = 6;

/// The first wrong byte of block `j` at `sector`: the disk's pattern
/// (`written` false) or the workload's own bytes.
fn check_block(b: &[u8; 4096], sector: u64, j: usize, written: bool) -> Option<usize> {
    (0..4096).find(|&i| {
        let want =
            if written { workload_byte(j, i) } else { disk_pattern_byte(sector + (i / 512) as u64, i % 512) };
        b[i] != want
    })
}

/// One pass over `BLOCKS` blocks from `first`: writes (filling each page
/// first) or reads (checking each against what it must hold), waited for
/// in order, `depth` in flight. Returns the blocks whose request ended
/// well.
fn pass(r: &mut Report, pages: &[Page], depth: usize, first: u64, write: bool, written: bool) -> u32 {
    let mut started = [false; BLOCKS];
    let mut good = 0u32;
    let sector = |j: usize| first + j as u64 * SECTORS_PER_BLOCK;
    for j in 0..BLOCKS + depth {
        if j < BLOCKS {
            let b = pages[j].bytes();
            if write {
                b.iter_mut().enumerate().for_each(|(i, x)| *x = workload_byte(j, i));
            } else {
                b.fill(0xEE);
            }
            match sys::blk_io(write, pages[j].frame, 0, 4096, sector(j), dev::word(j % depth)) {
                Ok(_) => started[j] = true,
                Err(e) => {
                    r.note(Verdict::Error, format_args!("block {j} (sector {}) refused: {e:?}", sector(j)))
                }
            }
        }
        // The oldest request in flight ends before its word is reused.
        let Some(k) = j.checked_sub(depth - 1).filter(|&k| k < BLOCKS && started[k]) else { continue };
        let Some(w) = dev::wait(k % depth, PATIENCE) else {
            r.note(Verdict::Hang, format_args!("block {k}'s request did not complete within 3 s"));
            return good;
        };
        match status_of(w) {
            Some(status::OK) => good |= 1 << k,
            st => {
                r.note(
                    Verdict::Error,
                    format_args!("block {k} (sector {}) ended with status {st:?}", sector(k)),
                );
                continue;
            }
        }
        if let (false, Some(at)) = (write, check_block(pages[k].bytes(), sector(k), k, written)) {
            let v = if written { Verdict::Lost } else { Verdict::Corrupt };
            r.note(v, format_args!("block {k} (sector {}) read back wrong at byte {at}", sector(k)));
        }
    }
    good
}

fn blk(pages: &[Page]) {
    let mut r = Report::new("blk");
    let info = sys::dev_info(BLOCK).unwrap_or_default();
    println!("faultload blk: capacity {}", info.capacity);
    let depth = (info.queue_depth as usize).clamp(1, IN_FLIGHT);
    pass(&mut r, pages, depth, PATTERN_AT, false, false);
    let acked = pass(&mut r, pages, depth, WORKLOAD_SECTOR, true, true);
    // The campaign checks the disk image for every acknowledged write.
    println!("faultload blk: acked writes {acked:#x}");
    let read = pass(&mut r, pages, depth, WORKLOAD_SECTOR, false, true);
    if read & acked != acked {
        r.note(Verdict::Error, format_args!("acknowledged blocks could not be read back"));
    }
    r.print();
}

/// Network workload: an ARP request for the gateway, then ICMP echo
/// requests to it (QEMU's user network answers them itself), each
/// carrying its own payload, which the reply must bring back intact.
const ECHOES: u16 = 16;
const PAYLOAD: usize = 1000;
const OUR_IP: [u8; 4] = [10, 0, 2, 15];
const GATEWAY: [u8; 4] = [10, 0, 2, 2];

/// The Internet checksum (RFC 1071) of `b`.
fn inet_checksum(b: &[u8]) -> u16 {
    let mut sum: u32 =
        b.chunks(2).map(|c| u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]))).sum();
    while sum >> 16 != 0 {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    !(sum as u16)
}

/// Builds echo request `seq` to the gateway (at `gw`) in `p`: its length.
fn echo_request(p: &mut [u8; 4096], mac: [u8; 6], gw: [u8; 6], seq: u16) -> usize {
    p[0..6].copy_from_slice(&gw);
    p[6..12].copy_from_slice(&mac);
    p[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
    let ip = &mut p[14..34];
    ip.copy_from_slice(&[0x45, 0, 0, 0, 0, 0, 0, 0, 64, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    ip[2..4].copy_from_slice(&((20 + 8 + PAYLOAD) as u16).to_be_bytes());
    ip[4..6].copy_from_slice(&seq.to_be_bytes());
    ip[12..16].copy_from_slice(&OUR_IP);
    ip[16..20].copy_from_slice(&GATEWAY);
    let sum = inet_checksum(ip);
    ip[10..12].copy_from_slice(&sum.to_be_bytes());
    let icmp = &mut p[34..34 + 8 + PAYLOAD];
    icmp[..8].copy_from_slice(&[8, 0, 0, 0, 0x56, 0x4E, 0, 0]);
    icmp[6..8].copy_from_slice(&seq.to_be_bytes());
    for (i, b) in icmp[8..].iter_mut().enumerate() {
        *b = workload_byte(seq as usize, i);
    }
    let sum = inet_checksum(icmp);
    icmp[2..4].copy_from_slice(&sum.to_be_bytes());
    34 + 8 + PAYLOAD
}

/// The sequence number and payload of an ICMP echo reply in an Ethernet
/// frame (IPv4 without options), if it is one.
fn echo_reply(frame: &[u8]) -> Option<(u16, &[u8])> {
    let be16 = |o: usize| u16::from_be_bytes([frame[o], frame[o + 1]]);
    if frame.len() < 42 || be16(12) != 0x0800 || frame[14] != 0x45 || frame[23] != 1 || frame[34] != 0 {
        return None;
    }
    let end = 14 + be16(16) as usize;
    frame.get(42..end).map(|p| (be16(40), p))
}

/// Transmits `len` bytes of `page` on word 0: whether it went out.
fn send(r: &mut Report, page: Page, len: usize, what: &str) -> bool {
    if let Err(e) = sys::net_send(page.frame, 0, len as u64, dev::word(0)) {
        r.note(Verdict::Error, format_args!("{what}: transmit refused: {e:?}"));
        return false;
    }
    match dev::wait(0, PATIENCE).map(status_of) {
        None => {
            r.note(Verdict::Hang, format_args!("{what}: the transmission did not complete within 3 s"));
            false
        }
        Some(Some(status::OK)) => true,
        Some(st) => {
            r.note(Verdict::Error, format_args!("{what}: transmission ended with status {st:?}"));
            false
        }
    }
}

/// The receive buffer (word 1): posted before anything is sent, so that
/// no answer arrives with nowhere to go.
struct Rx {
    page: Page,
    posted: bool,
}

impl Rx {
    fn post(&mut self) -> bool {
        self.posted = self.posted || sys::net_recv(self.page.frame, 0, 2048, dev::word(1)).is_ok();
        self.posted
    }

    /// Receives frames until `want` accepts one or `ticks` have passed;
    /// what `want` returned.
    fn until<T>(&mut self, ticks: u64, mut want: impl FnMut(&[u8]) -> Option<T>) -> Option<T> {
        let end = kinfo::ticks() + ticks;
        while kinfo::ticks() < end && self.post() {
            let w = dev::wait(1, end.saturating_sub(kinfo::ticks()))?;
            self.posted = false;
            if status_of(w) != Some(status::OK) {
                return None;
            }
            if let Some(t) = want(&self.page.bytes()[..bytes_of(w).min(2048) as usize]) {
                return Some(t);
            }
        }
        None
    }
}

fn net(pages: &[Page]) {
    let mut r = Report::new("net");
    let Ok(info) = sys::dev_info(NET) else {
        r.note(Verdict::Error, format_args!("no network device"));
        return r.print();
    };
    let (tx, mut rx) = (pages[0], Rx { page: pages[1], posted: false });
    println!("faultload net: mac {:02x?}", info.mac);
    let n = user::net::arp_request(tx.bytes(), info.mac, GATEWAY);
    if !rx.post() {
        r.note(Verdict::Error, format_args!("receive buffer refused"));
        return r.print();
    }
    // A frame may be lost (a driver restarted while it was on its way):
    // as the protocols above do, the workload sends a request again when
    // no answer came within a second, three times in all.
    let mut gw = None;
    for _ in 0..TRIES {
        if !send(&mut r, tx, n, "ARP request") {
            return r.print();
        }
        gw = rx.until(PATIENCE / TRIES, |f| user::net::arp_reply_from(f, GATEWAY));
        if gw.is_some() {
            break;
        }
    }
    let Some(gw) = gw else {
        r.note(Verdict::Lost, format_args!("no ARP reply from the gateway within 3 s"));
        return r.print();
    };
    'echo: for seq in 0..ECHOES {
        let mut answer = None;
        for _ in 0..TRIES {
            let len = echo_request(tx.bytes(), info.mac, gw, seq);
            if !rx.post() {
                r.note(Verdict::Error, format_args!("receive buffer refused"));
                return r.print();
            }
            if !send(&mut r, tx, len, "echo request") {
                continue 'echo;
            }
            let want = &tx.bytes()[42..42 + PAYLOAD];
            answer = rx.until(PATIENCE / TRIES, |f| {
                echo_reply(f).filter(|&(s, _)| s == seq).map(|(_, p)| p == want)
            });
            if answer.is_some() {
                break;
            }
        }
        match answer {
            None => r.note(Verdict::Lost, format_args!("no reply to echo request {seq} within 3 s")),
            Some(false) => {
                r.note(Verdict::Corrupt, format_args!("echo reply {seq} brought back a different payload"))
            }
            Some(true) => {}
        }
    }
    r.print();
}

/// Times a frame is sent before its answer is called lost.
const TRIES: u64 = 3;

fn main(_: u64) -> i32 {
    let mut pages = [Page { frame: 0, va: 0 }; BLOCKS];
    for (i, p) in pages.iter_mut().enumerate() {
        match Page::new(i as u64) {
            Ok(page) => *p = page,
            Err(e) => {
                println!("faultload: no memory for buffers: {e:?}");
                return 1;
            }
        }
    }
    let words = kinfo::cmdline().split_whitespace().skip_while(|w| *w != "init=faultload").nth(1);
    for name in words.unwrap_or("").split(',').filter(|n| !n.is_empty()) {
        match name {
            "blk" => blk(&pages),
            "net" => net(&pages),
            other => println!("faultload {other}: error: no such workload"),
        }
    }
    println!("hello from ring 3: the first environment runs on");
    0
}

user::entry!(main);
