//! The fault-injection campaign's workloads (`cargo xtask faults`, paper
//! 004 §4; `faultload=blk` or `faultload=net` on the command line): each
//! drives one driver through the kernel's block or packet interface, checks
//! its own data, and prints one verdict line that the campaign classifies
//! (`ok`, `error`, `hang`, `lost` or `corrupt`). Unlike the self-tests it
//! never powers off on a failure: the kernel must go on to its first
//! environment, which is what shows it survived.

use super::driver::Span;
use super::{block, packet, selftest, Global};
use crate::state::Kernel;
use drvapi::{disk_pattern_byte, status, workload_byte};

/// Requests that ended and were not collected yet: (tag, status).
static ENDED: Global<[Option<(u64, i32)>; 64]> = Global::new([None; 64]);

fn done(tag: u64, st: i32, _len: usize) {
    // A full table (a driver completing what it was never given is
    // refused before this) loses the note: the workload then reports a hang.
    ENDED.with(|e| e.iter_mut().find(|e| e.is_none()).map(|free| *free = Some((tag, st))));
}

fn ended(tag: u64) -> Option<i32> {
    ENDED
        .with(|e| e.iter_mut().find(|e| e.is_some_and(|(t, _)| t == tag)).and_then(Option::take))
        .map(|(_, s)| s)
}

/// How long the workload waits for any progress before it calls the
/// driver hung (3 s of timer ticks: longer than the kernel's own request
/// deadline, so that a hang here is one the kernel did not notice).
const PATIENCE: u64 = 3_000_000_000 / crate::arch::apic::TICK_NS;

/// Halts until `ready` or until `PATIENCE` has passed: whether it is.
fn settle(k: &mut Kernel, mut ready: impl FnMut() -> bool) -> bool {
    let start = k.kinfo.ticks;
    while !ready() {
        if k.kinfo.ticks - start > PATIENCE {
            return false;
        }
        k.idle();
    }
    true
}

/// The verdict, worst first: what the campaign classifies by.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Verdict {
    Ok,
    Error,
    Hang,
    Lost,
    Corrupt,
}

impl Verdict {
    fn word(self) -> &'static str {
        ["ok", "error", "hang", "lost", "corrupt"][self as usize]
    }
}

/// The workload's findings: the worst verdict and the first reason for it.
struct Report {
    name: &'static str,
    verdict: Verdict,
    why: alloc::string::String,
}

impl Report {
    fn new(name: &'static str) -> Self {
        Report { name, verdict: Verdict::Ok, why: alloc::string::String::new() }
    }

    fn note(&mut self, v: Verdict, why: core::fmt::Arguments) {
        if v > self.verdict {
            self.verdict = v;
            self.why = alloc::format!("{why}");
        }
    }

    fn print(&self) {
        let why = if self.verdict == Verdict::Ok { "all data verified" } else { self.why.as_str() };
        crate::kprintln!("faultload {}: {}: {why}", self.name, self.verdict.word());
    }
}

/// Block workload: blocks of the disk's pattern read, then blocks written
/// and read back, as many requests in flight as the driver takes.
const PATTERN_AT: u64 = 512;
const WRITE_AT: u64 = drvapi::WORKLOAD_SECTOR;
const BLOCKS: usize = drvapi::WORKLOAD_BLOCKS;
const SECTORS_PER_BLOCK: u64 = 8;

/// Whether block `j` of a pass holds what it should: the disk's pattern
/// (`written` false) or the workload's own bytes. The first wrong byte.
fn check_block(f: u64, sector: u64, j: usize, written: bool) -> Option<usize> {
    let b = selftest::bytes(f);
    (0..4096).find(|&i| {
        let want =
            if written { workload_byte(j, i) } else { disk_pattern_byte(sector + (i / 512) as u64, i % 512) };
        b[i] != want
    })
}

/// One pass over `BLOCKS` blocks from `first`: writes (filling each frame
/// first) or reads (checking each against what it must hold). Returns the
/// blocks whose request ended well.
fn pass(k: &mut Kernel, r: &mut Report, frames: &[u64], first: u64, write: bool, written: bool) -> u32 {
    let mut tags: [Option<u64>; BLOCKS] = [None; BLOCKS];
    let (mut next, mut good) = (0, 0u32);
    let mut open = 0;
    loop {
        // Submit until the driver's queue is full.
        while next < BLOCKS {
            let sector = first + next as u64 * SECTORS_PER_BLOCK;
            if write {
                for (i, b) in selftest::bytes(frames[next]).iter_mut().enumerate() {
                    *b = workload_byte(next, i);
                }
            } else {
                selftest::bytes(frames[next]).fill(0xEE);
            }
            match block::submit(k, write, 0, Span { frame: frames[next], offset: 0, len: 4096 }, sector, done)
            {
                Ok(tag) => (tags[next], open) = (Some(tag), open + 1),
                Err(block::BlockError::Driver(status::NO_SPACE)) if open > 0 => break,
                Err(e) => {
                    r.note(Verdict::Error, format_args!("block {next} (sector {sector}) refused: {e:?}"))
                }
            }
            next += 1;
        }
        if open == 0 {
            return good;
        }
        let mut finished = None;
        let progressed = settle(k, || {
            finished = tags.iter().enumerate().find_map(|(j, t)| t.and_then(|t| ended(t).map(|s| (j, s))));
            finished.is_some()
        });
        let Some((j, st)) = finished.filter(|_| progressed) else {
            let j = tags.iter().position(Option::is_some).unwrap_or(0);
            r.note(Verdict::Hang, format_args!("block {j}'s request did not complete within 3 s"));
            return good;
        };
        (tags[j], open) = (None, open - 1);
        let sector = first + j as u64 * SECTORS_PER_BLOCK;
        if st != status::OK {
            r.note(Verdict::Error, format_args!("block {j} (sector {sector}) ended with status {st}"));
            continue;
        }
        good |= 1 << j;
        if let (false, Some(at)) = (write, check_block(frames[j], sector, j, written)) {
            let v = if written { Verdict::Lost } else { Verdict::Corrupt };
            r.note(v, format_args!("block {j} (sector {sector}) read back wrong at byte {at}"));
        }
    }
}

fn blk(k: &mut Kernel) {
    let mut r = Report::new("blk");
    crate::kprintln!("faultload blk: capacity {}", block::capacity());
    let frames: [u64; BLOCKS] = core::array::from_fn(|_| selftest::frame(k));
    pass(k, &mut r, &frames, PATTERN_AT, false, false);
    let acked = pass(k, &mut r, &frames, WRITE_AT, true, true);
    // The campaign checks the disk image for every acknowledged write.
    crate::kprintln!("faultload blk: acked writes {acked:#x}");
    let read = pass(k, &mut r, &frames, WRITE_AT, false, true);
    if read & acked != acked && r.verdict == Verdict::Ok {
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

/// The Internet checksum (RFC 1071) of `b`.
fn inet_checksum(b: &[u8]) -> u16 {
    let mut sum: u32 =
        b.chunks(2).map(|c| u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]))).sum();
    while sum >> 16 != 0 {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    !(sum as u16)
}

/// Builds echo request `seq` to the gateway (at `gw`) in frame `f`: its
/// length.
fn echo_request(f: u64, mac: [u8; 6], gw: [u8; 6], seq: u16) -> usize {
    let p = selftest::bytes(f);
    p[0..6].copy_from_slice(&gw);
    p[6..12].copy_from_slice(&mac);
    p[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
    let ip = &mut p[14..34];
    ip.copy_from_slice(&[0x45, 0, 0, 0, 0, 0, 0, 0, 64, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    ip[2..4].copy_from_slice(&((20 + 8 + PAYLOAD) as u16).to_be_bytes());
    ip[4..6].copy_from_slice(&seq.to_be_bytes());
    ip[12..16].copy_from_slice(&OUR_IP);
    ip[16..20].copy_from_slice(&selftest::GATEWAY);
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

/// Transmits `len` bytes of frame `f`: whether it went out.
fn send(k: &mut Kernel, r: &mut Report, f: u64, len: usize, what: &str) -> bool {
    let tag = match packet::transmit(k, 0, Span { frame: f, offset: 0, len }, done) {
        Ok(tag) => tag,
        Err(e) => {
            r.note(Verdict::Error, format_args!("{what}: transmit refused: {e:?}"));
            return false;
        }
    };
    let mut st = None;
    if !settle(k, || {
        st = ended(tag);
        st.is_some()
    }) {
        r.note(Verdict::Hang, format_args!("{what}: the transmission did not complete within 3 s"));
        return false;
    }
    match st {
        Some(status::OK) => true,
        other => {
            r.note(Verdict::Error, format_args!("{what}: transmission ended with status {other:?}"));
            false
        }
    }
}

fn net(k: &mut Kernel) {
    let mut r = Report::new("net");
    let Some(mac) = packet::mac() else {
        r.note(Verdict::Error, format_args!("no network device"));
        return r.print();
    };
    crate::kprintln!("faultload net: mac {mac:02x?}");
    let f = selftest::frame(k);
    selftest::arp_request(f);
    packet::forget_arp_reply();
    if !send(k, &mut r, f, selftest::ARP_LEN, "ARP request") {
        return r.print();
    }
    let mut gw = None;
    if !settle(k, || {
        gw = packet::seen().arp_reply.filter(|(ip, _)| *ip == selftest::GATEWAY).map(|(_, m)| m);
        gw.is_some()
    }) {
        r.note(Verdict::Lost, format_args!("no ARP reply from the gateway within 3 s"));
        return r.print();
    }
    let gw = gw.expect("settled");
    for seq in 0..ECHOES {
        let len = echo_request(f, mac, gw, seq);
        let want = packet::checksum64(&selftest::bytes(f)[42..42 + PAYLOAD]);
        if !send(k, &mut r, f, len, "echo request") {
            continue;
        }
        let mut reply = None;
        if !settle(k, || {
            reply = packet::seen().echo_reply.filter(|&(s, _)| s == seq);
            reply.is_some()
        }) {
            r.note(Verdict::Lost, format_args!("no reply to echo request {seq} within 3 s"));
        } else if reply.is_some_and(|(_, h)| h != want) {
            r.note(Verdict::Corrupt, format_args!("echo reply {seq} brought back a different payload"));
        }
    }
    r.print();
}

/// Runs the workload `name` (`blk` or `net`).
pub fn run(k: &mut Kernel, name: &str) {
    match name {
        "blk" => blk(k),
        "net" => net(k),
        other => crate::kprintln!("faultload {other}: error: no such workload"),
    }
}
