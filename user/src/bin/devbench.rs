//! The device benchmarks from ring 3 (`cargo xtask bench`, paper 004 §5):
//! `init=devbench` runs them through the device calls and prints the
//! harness's `BENCH` lines (see `xtask/src/bench/mod.rs`; under `-icount`
//! the TSC counts guest instructions). With `isolation=off` on the kernel
//! command line the same driver images run unisolated, and every name but
//! `calib` gets the suffix `_unisolated`; on the IOMMU's machine the
//! suffix is `_iommu` (translating) or `_iommu_off` (`iommu=off`).
//!
//! Waiting for the device sleeps in the kernel, whose idle loop halts the
//! processor; under `-icount ... sleep=off` QEMU then moves the clock on
//! by an amount that depends on the host. The time the processor spent
//! halted until the device's interrupt (`Clock::halted_tsc`, which the
//! idle loop accounts as the kernel's self-benchmarks did) is left out, so
//! the figures are the instructions the processor spends on an operation —
//! now including the system calls that start it and the wakeup that ends
//! its wait.
#![no_std]
#![no_main]

use abi::dev::{bytes_of, status, status_of, BLOCK, NET};
use abi::Error;
use user::dev::{self, Page};
use user::net::{arp_reply_from, arp_request};
use user::{kinfo, println, sys};

/// Under `-icount` with `sleep=off` an idle processor's virtual time jumps
/// from tick to tick at host speed while the host does the device's work:
/// a wait allows many ticks.
const TICKS: u64 = 1 << 22;

fn rdtsc() -> u64 {
    // SAFETY: RDTSC only reads the time-stamp counter; lfence keeps it
    // from moving across the measured code.
    unsafe { core::arch::x86_64::_mm_lfence() };
    // SAFETY: as above.
    unsafe { core::arch::x86_64::_rdtsc() }
}

/// TSC counts spent halted until a device's interrupt, so far.
fn halted() -> u64 {
    kinfo::clock().halted_tsc
}

fn fail(why: core::fmt::Arguments) -> ! {
    println!("BENCH-FAIL devbench {why}");
    sys::exit(1)
}

fn calib(n: u64) {
    for _ in 0..n {
        // SAFETY: nops only; the loop's dec/jnz are the other two of 1000.
        unsafe { core::arch::asm!(".rept 998", "nop", ".endr", options(nomem, nostack)) };
    }
}

fn wait(w: usize) -> u64 {
    match dev::wait(w, TICKS).map(|w| (status_of(w), w)) {
        Some((Some(status::OK), w)) => w,
        Some((s, _)) => fail(format_args!("a request ended with status {s:?}")),
        None => fail(format_args!("a request did not end")),
    }
}

/// One crossing into the block driver and back, `n` times (one call).
fn xpc(n: u64) {
    if sys::dev_ping(BLOCK, n) != Ok(n) {
        fail(format_args!("the null call into the driver did not come back refused"));
    }
}

/// Reads `kib` KiB from the start of the disk per iteration, 4 KiB per
/// request, keeping as many requests in flight as the driver takes.
fn blk_read(n: u64, kib: u64, pages: &[Page; 16]) {
    let per = kib / 4;
    for _ in 0..n {
        let (mut next, mut first) = (0u64, 0u64);
        while first < per {
            while next < per && next - first < dev::WORDS as u64 {
                let p = pages[next as usize];
                match sys::blk_io(false, p.frame, 0, 4096, next * 8, dev::word(next as usize)) {
                    Ok(_) => next += 1,
                    Err(Error::NoMemory) => break,
                    Err(e) => fail(format_args!("block request refused: {e:?}")),
                }
            }
            // In order: the device completes a sequential read in order.
            wait(first as usize);
            first += 1;
        }
    }
}

fn net_tx(n: u64, p: Page, len: u64) {
    for _ in 0..n {
        sys::net_send(p.frame, 0, len, dev::word(0)).unwrap_or_else(|e| fail(format_args!("{e:?}")));
        wait(0);
    }
}

/// An ARP request out and its reply back in, through the demultiplexer
/// into a posted buffer.
fn net_arp(n: u64, out: Page, into: Page, len: u64) {
    for _ in 0..n {
        sys::net_recv(into.frame, 0, 2048, dev::word(1)).unwrap_or_else(|e| fail(format_args!("{e:?}")));
        sys::net_send(out.frame, 0, len, dev::word(0)).unwrap_or_else(|e| fail(format_args!("{e:?}")));
        wait(0);
        loop {
            let w = wait(1);
            if arp_reply_from(&into.bytes()[..bytes_of(w) as usize], [10, 0, 2, 2]).is_some() {
                break;
            }
            sys::net_recv(into.frame, 0, 2048, dev::word(1)).unwrap_or_else(|e| fail(format_args!("{e:?}")));
        }
    }
}

fn main(_: u64) -> i32 {
    let words = || kinfo::cmdline().split_whitespace();
    let quick = words().any(|w| w == "quick");
    // Benchmark names after the program's own words: only those run (and
    // the calibration), as in the other benchmark programs, so that a
    // profile's baseline boot (`calib` alone) runs no device row.
    let names = || {
        words()
            .skip_while(|w| !w.starts_with("init="))
            .skip(1)
            .filter(|w| !matches!(*w, "quick" | "iommu") && !w.contains('='))
    };
    let block = sys::dev_info(BLOCK).unwrap_or_else(|e| fail(format_args!("no block device: {e:?}")));
    let net = sys::dev_info(NET).unwrap_or_else(|e| fail(format_args!("no network device: {e:?}")));
    let sfx = match (block.isolated != 0, block.confined) {
        (false, _) => "_unisolated",
        (true, abi::dev::confined::TRANSLATING) => "_iommu",
        (true, abi::dev::confined::OFF) => "_iommu_off",
        (true, _) => "",
    };
    let wanted = |name: &str| {
        name == "calib" || names().next().is_none() || names().any(|w| w.strip_suffix(sfx) == Some(name))
    };
    let runs =
        [("calib", 100), ("xpc", 1000), ("blk_4k", 10), ("blk_64k", 5), ("net_tx", 10), ("net_arp", 5)];
    user::print!("BENCH-PLAN");
    for (name, _) in runs.iter().filter(|(n, _)| wanted(n)) {
        user::print!(" {name}{}", if *name == "calib" { "" } else { sfx });
    }
    println!();
    let mut pages = [Page { frame: 0, va: 0 }; 16];
    for (i, p) in pages.iter_mut().enumerate() {
        *p = Page::new(i as u64).unwrap_or_else(|e| fail(format_args!("no memory: {e:?}")));
    }
    let (out, into) = (
        Page::new(16).unwrap_or_else(|e| fail(format_args!("no memory: {e:?}"))),
        Page::new(17).unwrap_or_else(|e| fail(format_args!("no memory: {e:?}"))),
    );
    let len = arp_request(out.bytes(), net.mac, [10, 0, 2, 2]) as u64;
    let (trials, scale) = if quick { (1, 1) } else { (5, 10) };
    for (name, per_scale) in runs.into_iter().filter(|(n, _)| wanted(n)) {
        let (s, iterations) = (if name == "calib" { "" } else { sfx }, per_scale * scale);
        for _ in 0..trials {
            let (h0, t0) = (halted(), rdtsc());
            match name {
                "calib" => calib(iterations),
                "xpc" => xpc(iterations),
                "blk_4k" => blk_read(iterations, 4, &pages),
                "blk_64k" => blk_read(iterations, 64, &pages),
                "net_tx" => net_tx(iterations, out, len),
                _ => net_arp(iterations, out, into, len),
            }
            let t = rdtsc() - t0 - (halted() - h0);
            println!("BENCH {name}{s} {iterations} {t}");
        }
    }
    println!("BENCH-DONE");
    0
}

user::entry!(main);
