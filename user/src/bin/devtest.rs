//! Device tests from ring 3 (`xtask/src/devtest.rs`): the first
//! environment drives the block and packet interfaces through their system
//! calls, with the device capability the kernel gave it, under interrupts,
//! and prints what it saw; the fault-injection tests (kernels built with
//! the `inject` feature) make a driver fail with a request in flight and
//! check that the driver is stopped, the request fails, and everything
//! else goes on. `init=devtest NAME,NAME...`; a failure exits with 1.
#![no_std]
#![no_main]

use abi::dev::{bytes_of, inject, status, status_of, BLOCK, NET};
use abi::Error;
use drvapi::disk_pattern_byte;
use user::dev::{self, Page};
use user::{kinfo, println, sys};

/// Sectors the write test writes and the second boot reads back.
const PERSIST_SECTOR: u64 = 100;
const PERSIST_TEXT: &[u8] = b"written by veneer before a reboot";
/// How long a request may take (5 s of 2 ms ticks).
const TICKS: u64 = 2500;

struct Failed;

type Test = Result<(), Failed>;

fn fail(why: core::fmt::Arguments) -> Failed {
    println!("devtest FAILED: {why}");
    Failed
}

fn ok<T>(r: Result<T, Error>, what: &str) -> Result<T, Failed> {
    r.map_err(|e| fail(format_args!("{what}: {e:?}")))
}

/// Waits for word `w`; the word.
fn ended_word(w: usize, what: &str) -> Result<u64, Failed> {
    dev::wait(w, TICKS).ok_or_else(|| fail(format_args!("{what} did not end")))
}

/// Waits for word `w`; its status.
fn ended(w: usize, what: &str) -> Result<u64, Failed> {
    ended_word(w, what).map(|w| status_of(w).unwrap_or(u64::MAX))
}

/// Reads or writes the 8 sectors from `sector` with `p`, and waits.
fn transfer(write: bool, p: Page, sector: u64) -> Test {
    ok(sys::blk_io(write, p.frame, 0, 4096, sector, dev::word(0)), "block request refused")?;
    match ended(0, "a block request")? {
        status::OK => Ok(()),
        s => Err(fail(format_args!("a block request ended with status {s}"))),
    }
}

/// Whether `p` holds the pattern xtask wrote on the 8 sectors from `sector`.
fn holds_pattern(p: Page, sector: u64) -> Test {
    for (i, &got) in p.bytes().iter().enumerate() {
        let (s, o) = (sector + (i / 512) as u64, i % 512);
        if got != disk_pattern_byte(s, o) {
            return Err(fail(format_args!(
                "sector {s} byte {o}: {got:#x}, want {:#x}",
                disk_pattern_byte(s, o)
            )));
        }
    }
    Ok(())
}

fn pattern(pages: &[Page; 4]) -> Test {
    let capacity = ok(sys::dev_info(BLOCK), "no block device")?.capacity;
    let sector = capacity / 2;
    transfer(false, pages[0], sector)?;
    holds_pattern(pages[0], sector)?;
    println!("devtest blk-pattern: read 8 sectors at {sector} under interrupts: the pattern xtask wrote");
    // Refusals leave the disk and the frame alone.
    let past = sys::blk_io(false, pages[0].frame, 0, 4096, capacity - 1, dev::word(0));
    let not_mine = sys::blk_io(false, 1, 0, 512, 0, dev::word(0));
    if past != Err(Error::BadAddress) || not_mine != Err(Error::NotOwner) {
        return Err(fail(format_args!("bad requests not refused: {past:?} {not_mine:?}")));
    }
    println!("devtest blk-pattern: a read past the end and a frame not the caller's are refused");
    Ok(())
}

fn write_marker(pages: &[Page; 4]) -> Test {
    for (i, chunk) in pages[0].bytes().chunks_mut(512).enumerate() {
        chunk[..PERSIST_TEXT.len()].copy_from_slice(PERSIST_TEXT);
        chunk[PERSIST_TEXT.len()] = i as u8;
    }
    transfer(true, pages[0], PERSIST_SECTOR)?;
    println!("devtest blk-write: wrote 8 sectors at {PERSIST_SECTOR}");
    Ok(())
}

fn read_marker(pages: &[Page; 4]) -> Test {
    transfer(false, pages[0], PERSIST_SECTOR)?;
    for (i, chunk) in pages[0].bytes().chunks(512).enumerate() {
        if &chunk[..PERSIST_TEXT.len()] != PERSIST_TEXT || chunk[PERSIST_TEXT.len()] != i as u8 {
            let s = PERSIST_SECTOR + i as u64;
            return Err(fail(format_args!("sector {s} does not hold what the first boot wrote")));
        }
    }
    println!("devtest blk-readback: the 8 sectors the previous boot wrote are on the disk");
    Ok(())
}

const GATEWAY: [u8; 4] = [10, 0, 2, 2];

/// Asks who has 10.0.2.2 and waits for the answer; the gateway's MAC.
fn arp(pages: &[Page; 4]) -> Result<[u8; 6], Failed> {
    let mac = ok(sys::dev_info(NET), "no network device")?.mac;
    let n = user::net::arp_request(pages[0].bytes(), mac, GATEWAY);
    ok(sys::net_recv(pages[1].frame, 0, 2048, dev::word(1)), "receive buffer refused")?;
    ok(sys::net_send(pages[0].frame, 0, n as u64, dev::word(0)), "transmit refused")?;
    if ended(0, "the transmission")? != status::OK {
        return Err(fail(format_args!("transmit failed")));
    }
    loop {
        let w = ended_word(1, "the ARP reply")?;
        let frame = &pages[1].bytes()[..bytes_of(w) as usize];
        if let Some(m) = user::net::arp_reply_from(frame, GATEWAY) {
            return Ok(m);
        }
        ok(sys::net_recv(pages[1].frame, 0, 2048, dev::word(1)), "receive buffer refused")?;
    }
}

fn arp_test(pages: &[Page; 4]) -> Test {
    let m = arp(pages)?;
    println!(
        "devtest arp: 10.0.2.2 is at {:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x} (answered through the virtio-net driver)",
        m[0], m[1], m[2], m[3], m[4], m[5]
    );
    Ok(())
}

/// Reads in flight (`READS`), then fault `f`
/// injected into the block driver with page 1 lent: the driver must be
/// stopped, the requests it still held fail with an I/O error (a read may
/// have ended well before the fault: the device is not stopped by a
/// system call, and its interrupt reaches ring 3 between two; the request
/// the driver was made to hold cannot), and the block device is gone.
/// The injection's answer.
fn stopped_with_read_in_flight(pages: &[Page; 4], f: u64) -> Result<u64, Failed> {
    let r = failed_in_flight(pages, f)?;
    if sys::dev_info(BLOCK).err() != Some(Error::NoDevice)
        || sys::blk_io(false, pages[0].frame, 0, 512, 0, dev::word(0)) != Err(Error::NoDevice)
    {
        return Err(fail(format_args!("the disabled driver still takes requests")));
    }
    Ok(r)
}

/// The completion word of the request `failed_in_flight` has the driver
/// hold (free in `READS`).
const HELD: usize = 6;

/// `stopped_with_read_in_flight` but for the device's absence afterwards
/// (a driver restarted at once may be back already). First the driver is
/// made to take a request it never ends (`LIE_DROP`): that one is surely
/// held at the fault and must fail with it. The reads alone could not
/// show it every time: each may end between the check that it is pending
/// and the injection (its interrupt reaches ring 3 between two system
/// calls; under a loaded host all five did).
fn failed_in_flight(pages: &[Page; 4], f: u64) -> Result<u64, Failed> {
    let drop = sys::dev_inject(BLOCK, inject::LIE_DROP, 0, pages[1].frame, dev::word(HELD));
    if ok(drop, "the request to hold")? != 0 {
        return Err(fail(format_args!("the driver was stopped when it took a request to hold")));
    }
    let (r, _, _) = in_flight(pages, f)?;
    if ended(HELD, "the held request")? != status::IO_ERROR {
        return Err(fail(format_args!("the request the driver held did not fail with it")));
    }
    Ok(r)
}

/// The reads of `in_flight`: (page, word, first sector), as many as the
/// block driver takes at once (5). With three, all had sometimes ended
/// between the check that one is pending and the injection (a disk in the
/// host's page cache answers at once). Reads into one page read the same
/// sectors, so the page holds them whichever lands last; `replay` writes
/// from page 0 beside `READS[1..]`; words 1 (the injection's) and 7
/// (`block_back`'s) are left free.
const READS: [(usize, usize, u64); 5] = [(0, 0, 0), (2, 2, 16), (3, 3, 24), (2, 4, 16), (3, 5, 24)];

/// Reads in flight (`READS`), then fault `f` injected into the block
/// driver with page 1 lent, which must stop it: the injection's answer,
/// how many reads failed, and how many were in flight at the injection.
fn in_flight(pages: &[Page; 4], f: u64) -> Result<(u64, usize, usize), Failed> {
    // On a fast host all three may end before the injection: then they are
    // made again (the driver is still sound), until one is in flight.
    let mut pending = 0;
    for attempt in 0.. {
        for (p, w, s) in READS {
            ok(sys::blk_io(false, pages[p].frame, 0, 4096, s, dev::word(w)), "block request refused")?;
        }
        pending = READS.iter().filter(|r| dev::peek(r.1) == 0).count();
        if pending > 0 || attempt == 20 {
            break;
        }
        for (_, w, _) in READS {
            ended(w, "a read before the injection")?;
        }
    }
    let r = ok(sys::dev_inject(BLOCK, f, 0, pages[1].frame, dev::word(1)), "the injection")?;
    if r == 0 {
        return Err(fail(format_args!("the driver was not stopped")));
    }
    let mut failed = 0;
    for (p, w, s) in READS {
        match ended(w, "a pending read")? {
            status::IO_ERROR => failed += 1,
            status::OK => holds_pattern(pages[p], s)?,
            s => return Err(fail(format_args!("a pending read ended with status {s}"))),
        }
    }
    Ok((r, failed, pending))
}

/// The reads of `in_flight` all end well with the disk's data after the
/// block driver fails with them in flight and is restarted: how many
/// were in flight.
fn recovered_in_flight(pages: &[Page; 4], f: u64) -> Result<usize, Failed> {
    match in_flight(pages, f)? {
        (_, 0, pending) => Ok(pending),
        (_, n, _) => Err(fail(format_args!("{n} reads in flight at the failure ended with an I/O error"))),
    }
}

/// Waits up to 2 s for the block device to be back (a restart); whether
/// it is.
fn block_back() -> bool {
    for _ in 0..200 {
        if sys::dev_info(BLOCK).is_ok() {
            return true;
        }
        // Word 7 is never used for a request: this sleeps 5 ticks.
        let _ = dev::wait(7, 5);
    }
    false
}

/// Recovery (`recover=restart`): the block driver lies (refuses requests
/// as if its queue were full, a state kept in its memory) and is stopped;
/// the read it refused is kept and made again by the driver restarted
/// from a fresh copy of its image — one that kept the old memory would
/// lie again — and the disk reads right. The injection itself is never
/// made again: it fails.
fn restart(pages: &[Page; 4]) -> Test {
    if ok(sys::dev_inject(BLOCK, inject::LIE_FULL, 0, pages[1].frame, dev::word(1)), "the injection")? != 0 {
        return Err(fail(format_args!("the lying driver was stopped at once")));
    }
    ok(sys::blk_io(false, pages[2].frame, 0, 4096, 16, dev::word(2)), "the read the driver refused")?;
    if ended(1, "the injection")? != status::IO_ERROR {
        return Err(fail(format_args!("the lie went unnoticed")));
    }
    match ended(2, "the read the driver refused")? {
        status::OK => holds_pattern(pages[2], 16)?,
        s => return Err(fail(format_args!("the read the lying driver refused ended with status {s}"))),
    }
    if !block_back() {
        return Err(fail(format_args!("the block driver did not come back")));
    }
    pattern(pages)?;
    println!("devtest restart: the block driver was stopped, restarted afresh, and the disk reads right");
    Ok(())
}

/// A driver that fails again at once (a wild call each time it is back)
/// is restarted three times, the reads in flight made again each time,
/// then left disabled: the reads in flight at its fourth failure fail.
fn restart_loop(pages: &[Page; 4]) -> Test {
    for n in 0..3 {
        recovered_in_flight(pages, inject::WILD_CALL)?;
        if !block_back() {
            return Err(fail(format_args!("the block driver did not come back after failure {}", n + 1)));
        }
    }
    failed_in_flight(pages, inject::WILD_CALL)?;
    if block_back() {
        return Err(fail(format_args!("the block driver was restarted a fourth time")));
    }
    println!(
        "devtest restart-loop: the block driver failing at once was restarted 3 times, then left disabled"
    );
    Ok(())
}

/// Transparent recovery (`recover=restart`, paper 004 §3.5): a write
/// and two reads in flight when the block driver fails (a wild call) are
/// kept by the kernel and made again, in order, by the restarted driver:
/// each ends well, the reads hold the disk's pattern, the write is on
/// the disk.
fn replay(pages: &[Page; 4]) -> Test {
    const AT: u64 = 200;
    let (p, mut pending) = (pages[0], 0);
    for attempt in 0..=20u8 {
        for (i, b) in p.bytes().iter_mut().enumerate() {
            *b = (i as u8).wrapping_mul(7) ^ attempt;
        }
        ok(sys::blk_io(true, p.frame, 0, 4096, AT, dev::word(0)), "the write refused")?;
        for (p, w, s) in &READS[1..] {
            ok(sys::blk_io(false, pages[*p].frame, 0, 4096, *s, dev::word(*w)), "a read refused")?;
        }
        pending = [0, 2, 3].iter().filter(|&&w| dev::peek(w) == 0).count();
        if pending > 0 {
            break;
        }
        for w in [0, 2, 3] {
            ended(w, "a request before the injection")?;
        }
    }
    if pending == 0 {
        return Err(fail(format_args!("no request was in flight at the injection in 21 tries")));
    }
    let want = *p.bytes();
    if ok(sys::dev_inject(BLOCK, inject::WILD_CALL, 0, pages[1].frame, dev::word(1)), "the injection")? == 0 {
        return Err(fail(format_args!("the driver was not stopped")));
    }
    for w in [0, 2, 3] {
        let s = ended(w, "a request in flight at the failure")?;
        if s != status::OK {
            return Err(fail(format_args!("a request in flight at the failure ended with status {s}")));
        }
    }
    for (p, _, s) in &READS[1..] {
        holds_pattern(pages[*p], *s)?;
    }
    p.bytes().fill(0);
    transfer(false, p, AT)?;
    if *p.bytes() != want {
        return Err(fail(format_args!("the write in flight at the failure is not on the disk")));
    }
    println!(
        "devtest replay: {pending} of 3 requests in flight when the block driver failed; after its restart each ended well, the reads with the disk's pattern, the write on the disk"
    );
    Ok(())
}

/// Lies no exception shows (`recover=restart`): the driver refuses a
/// read the kernel checked with an I/O error its device never reported
/// (`LIE_REFUSE`), ends one with such an error (`LIE_ERROR`) or calls it
/// invalid when it ends (`LIE_INVALID`). The kernel has the read made
/// again by a fresh copy of the driver, which tells the truth: the read
/// ends well with the disk's pattern. The injection, which the lying
/// driver never ended, fails with it.
fn asked_again(pages: &[Page; 4], lie: u64, name: &str) -> Test {
    if ok(sys::dev_inject(BLOCK, lie, 0, pages[1].frame, dev::word(1)), "the injection")? != 0 {
        return Err(fail(format_args!("the driver was stopped at the injection")));
    }
    ok(sys::blk_io(false, pages[2].frame, 0, 4096, 16, dev::word(2)), "the read the driver lied about")?;
    match ended(2, "the read the driver lied about")? {
        status::OK => holds_pattern(pages[2], 16)?,
        s => return Err(fail(format_args!("the read the driver lied about ended with status {s}"))),
    }
    if ended(1, "the injection")? != status::IO_ERROR || !block_back() {
        return Err(fail(format_args!("the lying driver was not stopped and restarted")));
    }
    println!("devtest {name}: the block driver's lie about a valid read was not believed; a fresh copy of it read the disk's pattern");
    Ok(())
}

/// `asked_again` for a transmission: the network driver refuses the ARP
/// request with an I/O error; a fresh copy sends it and the answer comes.
fn net_asked_again(pages: &[Page; 4]) -> Test {
    let r = sys::dev_inject(NET, inject::LIE_REFUSE, 0, pages[1].frame, dev::word(1));
    if ok(r, "the injection")? != 0 {
        return Err(fail(format_args!("the network driver was stopped at the injection")));
    }
    arp(pages)?;
    println!("devtest net-lie-refuse: the network driver's refusal was not believed; a fresh copy sent the ARP request, answered");
    Ok(())
}

/// The network driver fails (a wild call) and is restarted: frames go
/// out and come in again (the ARP exchange).
fn net_restart(pages: &[Page; 4]) -> Test {
    if ok(sys::dev_inject(NET, inject::WILD_CALL, 0, pages[1].frame, dev::word(1)), "the injection")? == 0 {
        return Err(fail(format_args!("the network driver was not stopped")));
    }
    arp(pages)?;
    println!("devtest net-restart: the network driver was stopped and restarted; ARP is answered again");
    Ok(())
}

fn wild_write(pages: &[Page; 4]) -> Test {
    stopped_with_read_in_flight(pages, inject::WILD_WRITE)?;
    println!(
        "devtest wild: the write to kernel memory was stopped; its pending read failed with an I/O error; the kernel runs on"
    );
    Ok(())
}

fn wild_call(pages: &[Page; 4]) -> Test {
    stopped_with_read_in_flight(pages, inject::WILD_CALL)?;
    println!("devtest wild-call: the block driver's jump to 0x1000 was stopped; its pending read failed");
    Ok(())
}

fn livelock(pages: &[Page; 4]) -> Test {
    stopped_with_read_in_flight(pages, inject::LIVELOCK)?;
    println!("devtest livelock: the block driver looping in a call was stopped; its pending read failed");
    Ok(())
}

fn cli_livelock(pages: &[Page; 4]) -> Test {
    stopped_with_read_in_flight(pages, inject::CLI_LIVELOCK)?;
    println!(
        "devtest cli-livelock: the block driver looping with interrupts off was stopped; its pending read failed"
    );
    Ok(())
}

fn wild_call_high(pages: &[Page; 4]) -> Test {
    stopped_with_read_in_flight(pages, inject::WILD_CALL_HIGH)?;
    println!("devtest wild-call-high: the block driver's call to 0xffffffffb0000000 was stopped");
    Ok(())
}

/// The block driver, with reads in flight, points its stack pointer at
/// its device's registers and then takes an interrupt (`call` false) or
/// calls the kernel (`call` true) there: neither the trap's frame nor a
/// wrapper may land on that stack.
fn bad_stack(pages: &[Page; 4], call: bool) -> Test {
    let f = if call { inject::BAD_STACK_CALL } else { inject::BAD_STACK_IRQ };
    stopped_with_read_in_flight(pages, f)?;
    let how = if call { "called the kernel" } else { "took an interrupt" };
    println!("devtest bad-stack: the block driver {how} with its stack on its registers and was stopped");
    Ok(())
}

/// The driver of `dev` runs an instruction only ring 0 may (`sysret`,
/// then a trap from ring 3; or `int 14`, a frame shifted by a word): it
/// is stopped, not the kernel.
fn privileged(pages: &[Page; 4], dev: u64, f: u64) -> Test {
    let r = ok(sys::dev_inject(dev, f, 0, pages[1].frame, dev::word(1)), "the injection")?;
    if r == 0 || sys::dev_info(dev).is_ok() {
        return Err(fail(format_args!("the driver was not stopped")));
    }
    let (name, what) = if dev == BLOCK { ("virtio-blk", "sysret") } else { ("virtio-net", "int 14") };
    println!("devtest privileged: {name}'s {what} was stopped");
    Ok(())
}

/// The block driver takes a request and never ends it (alive but
/// useless): the kernel's deadline fails the request and the driver.
fn deadline(pages: &[Page; 4]) -> Test {
    let r = ok(sys::dev_inject(BLOCK, inject::LIE_DROP, 0, pages[1].frame, dev::word(1)), "the injection")?;
    if r != 0 {
        return Err(fail(format_args!("the driver was stopped at once")));
    }
    if ended(1, "the dropped request")? != status::IO_ERROR || sys::dev_info(BLOCK).is_ok() {
        return Err(fail(format_args!("the request the driver dropped did not fail it")));
    }
    println!("devtest deadline: the request the block driver never ended failed it");
    Ok(())
}

/// A driver lies about its work: the block driver refuses requests as
/// if its queue were full (`LIE_FULL`), the network driver says a frame
/// went out whole reporting half its bytes (`LIE_SHORT`). Each is stopped
/// at its first lie; the request it lied about fails.
fn lie(pages: &[Page; 4], dev: u64) -> Test {
    let how = if dev == BLOCK { inject::LIE_FULL } else { inject::LIE_SHORT };
    // The injection itself stays in flight (word 1) until the driver stops.
    if ok(sys::dev_inject(dev, how, 0, pages[1].frame, dev::word(1)), "the injection")? != 0 {
        return Err(fail(format_args!("the lying driver was stopped at once")));
    }
    let caught = if dev == BLOCK {
        sys::blk_io(false, pages[0].frame, 0, 4096, 0, dev::word(0)).is_err()
    } else {
        let mac = ok(sys::dev_info(NET), "no network device")?.mac;
        let n = user::net::arp_request(pages[0].bytes(), mac, GATEWAY);
        ok(sys::net_send(pages[0].frame, 0, n as u64, dev::word(0)), "transmit refused")?;
        ended(0, "the transmission")? == status::IO_ERROR
    };
    if !caught || sys::dev_info(dev).is_ok() || ended(1, "the injection")? != status::IO_ERROR {
        return Err(fail(format_args!("the lie went unnoticed")));
    }
    let name = if dev == BLOCK { "virtio-blk" } else { "virtio-net" };
    println!("devtest lie: {name}'s lie was caught; it was stopped");
    Ok(())
}

/// The block driver reads sector 0 but gives its device the address of
/// page 2 — one lent to it for an earlier read and given back, so a
/// translation the IOMMU kept cached would let the write through. Under
/// the IOMMU the write is blocked, the driver stopped, its read failed,
/// the page unchanged.
fn wild_dma(pages: &[Page; 4]) -> Test {
    let target = pages[2];
    transfer(false, target, 0)?;
    target.bytes().fill(0x5A);
    let r = sys::dev_inject(BLOCK, inject::WILD_DMA, target.frame, pages[1].frame, dev::word(1));
    ok(r, "the block driver did not take the injection")?;
    let st = ended(1, "the injected read")?;
    if let Some(o) = target.bytes().iter().position(|&b| b != 0x5A) {
        return Err(fail(format_args!(
            "the device wrote the page at {:#x} it was not lent (byte {o})",
            target.frame * 4096
        )));
    }
    if st != status::IO_ERROR || sys::dev_info(BLOCK).is_ok() {
        return Err(fail(format_args!("the driver whose device DMAed astray was not stopped (status {st})")));
    }
    println!(
        "devtest wild-dma: the device's write to {:#x} was blocked; the page is unchanged; its read failed",
        target.frame * 4096
    );
    Ok(())
}

fn overflow(pages: &[Page; 4]) -> Test {
    let r =
        ok(sys::dev_inject(NET, inject::STACK_OVERFLOW, 0, pages[1].frame, dev::word(1)), "the injection")?;
    if r == 0 || sys::dev_info(NET).is_ok() {
        return Err(fail(format_args!("the driver whose stack overflowed was not stopped")));
    }
    println!("devtest overflow: the network driver's stack overflow was stopped; the kernel runs on");
    Ok(())
}

/// The network driver's next interrupt handler loops: the frame sent
/// next fails with an I/O error when the watchdog stops it.
fn irq_livelock(pages: &[Page; 4]) -> Test {
    let mac = ok(sys::dev_info(NET), "no network device")?.mac;
    // The driver keeps this request (and page 2) until it is disabled.
    let r = sys::dev_inject(NET, inject::IRQ_LIVELOCK, 0, pages[2].frame, dev::word(2));
    if ok(r, "the network driver did not take the injection")? != 0 {
        return Err(fail(format_args!("the armed driver was stopped at once")));
    }
    let n = user::net::arp_request(pages[0].bytes(), mac, GATEWAY);
    ok(sys::net_send(pages[0].frame, 0, n as u64, dev::word(0)), "transmit refused")?;
    if ended(0, "the transmission")? != status::IO_ERROR || sys::dev_info(NET).is_ok() {
        return Err(fail(format_args!("the driver looping in its interrupt handler was not stopped")));
    }
    println!("devtest irq-livelock: the network driver looping in its interrupt handler was stopped");
    Ok(())
}

fn run(name: &str, pages: &[Page; 4]) -> Test {
    match name {
        "blk-pattern" => pattern(pages),
        "blk-write" => write_marker(pages),
        "blk-readback" => read_marker(pages),
        "arp" => arp_test(pages),
        "wild" => wild_write(pages),
        "overflow" => overflow(pages),
        "livelock" => livelock(pages),
        "cli-livelock" => cli_livelock(pages),
        "wild-call" => wild_call(pages),
        "wild-call-high" => wild_call_high(pages),
        "bad-stack-irq" => bad_stack(pages, false),
        "bad-stack-call" => bad_stack(pages, true),
        "sysret" => privileged(pages, BLOCK, inject::SYSRET),
        "int14" => privileged(pages, NET, inject::INT14),
        "deadline" => deadline(pages),
        "lie-full" => lie(pages, BLOCK),
        "lie-short" => lie(pages, NET),
        "restart" => restart(pages),
        "restart-loop" => restart_loop(pages),
        "replay" => replay(pages),
        "net-restart" => net_restart(pages),
        "lie-refuse" => asked_again(pages, inject::LIE_REFUSE, "lie-refuse"),
        "lie-error" => asked_again(pages, inject::LIE_ERROR, "lie-error"),
        "lie-invalid" => asked_again(pages, inject::LIE_INVALID, "lie-invalid"),
        "net-lie-refuse" => net_asked_again(pages),
        "wild-dma" => wild_dma(pages),
        "irq-livelock" => irq_livelock(pages),
        other => Err(fail(format_args!("no device test {other:?}"))),
    }
}

fn main(_: u64) -> i32 {
    let mut pages = [Page { frame: 0, va: 0 }; 4];
    for (i, p) in pages.iter_mut().enumerate() {
        match Page::new(i as u64) {
            Ok(page) => *p = page,
            Err(e) => {
                println!("devtest FAILED: no memory for buffers: {e:?}");
                return 1;
            }
        }
    }
    let words = kinfo::cmdline().split_whitespace().skip_while(|w| *w != "init=devtest").nth(1);
    for name in words.unwrap_or("").split(',').filter(|n| !n.is_empty()) {
        if run(name, &pages).is_err() {
            return 1;
        }
    }
    println!("hello from ring 3: the first environment runs on");
    0
}

user::entry!(main);
