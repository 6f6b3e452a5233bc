//! The device benchmarks (`cargo xtask bench`, paper 004 §5): a boot
//! whose first program is `devbench` runs them in the kernel and powers
//! off, printing the harness's `BENCH` lines (see `xtask/src/bench/mod.rs`;
//! under `-icount` the TSC counts guest instructions). With
//! `isolation=off` on the command line the same driver images run
//! unisolated, and every name but `calib` gets the suffix `_unisolated`;
//! on the IOMMU's machine (`iommu::Confinement`) the suffix is `_iommu`
//! (translating) or `_iommu_off` (`iommu=off`).
//!
//! Waiting for the device halts the CPU, and under `-icount ... sleep=off`
//! QEMU then moves the clock on to its next event, by an amount that
//! depends on the host: the time spent idle (halted until the device's
//! interrupt arrived, and the timer ticks that woke it meanwhile with
//! their accounting, `selftest::wait_for`) is left out, so the figures are
//! the instructions the processor spends on an operation (paper 004 §5
//! compares CPU cost too), not the device's latency. What still depends
//! on the device's pace is how many completions one interrupt brings.

use super::driver::Span;
use super::iommu::Confinement;
use super::selftest::{arp_request, done, fail, frame, wait, wait_for, ARP_LEN, GATEWAY, HALTED, WAIT_TICKS};
use super::{block, driver, packet, rdtsc};
use crate::state::Kernel;
use core::sync::atomic::Ordering::Relaxed;
use drvapi::status;

fn calib(n: u64) {
    for _ in 0..n {
        // SAFETY: nops only; the loop's dec/jnz are the other two of 1000.
        unsafe { core::arch::asm!(".rept 998", "nop", ".endr", options(nomem, nostack)) };
    }
}

fn xpc(k: &mut Kernel, n: u64) {
    let i = driver::find("virtio-blk").unwrap_or_else(|| fail(format_args!("no block driver")));
    for _ in 0..n {
        if driver::null_call(k, i).map(|v| v as i32) != Ok(status::INVALID) {
            fail(format_args!("the null call into the driver did not come back refused"));
        }
    }
}

/// Reads `kib` KiB from the start of the disk per iteration, 4 KiB per
/// request, keeping as many requests in flight as the driver takes.
fn blk_read(k: &mut Kernel, n: u64, kib: u64, frames: &[u64; 16]) {
    let per = kib / 4;
    for _ in 0..n {
        let (mut next, mut inflight) = (0u64, [0u64; 16]);
        let mut waiting = 0usize;
        while next < per || waiting > 0 {
            while next < per {
                match block::submit(
                    k,
                    false,
                    0,
                    Span { frame: frames[next as usize], offset: 0, len: 4096 },
                    next * 8,
                    done,
                ) {
                    Ok(tag) => {
                        inflight[waiting] = tag;
                        waiting += 1;
                        next += 1;
                    }
                    Err(block::BlockError::Driver(status::NO_SPACE)) => break,
                    Err(e) => fail(format_args!("block request refused: {e:?}")),
                }
            }
            // In order: the device completes a sequential read in order.
            if wait(k, inflight[0]) != status::OK {
                fail(format_args!("block read failed"));
            }
            inflight.copy_within(1..waiting, 0);
            waiting -= 1;
        }
    }
}

fn net_tx(k: &mut Kernel, n: u64, f: u64) {
    for _ in 0..n {
        let tag = packet::transmit(k, 0, Span { frame: f, offset: 0, len: ARP_LEN }, done)
            .unwrap_or_else(|e| fail(format_args!("{e:?}")));
        if wait(k, tag) != status::OK {
            fail(format_args!("transmit failed"));
        }
    }
}

/// An ARP request out and its reply back in, through the demultiplexer.
fn net_arp(k: &mut Kernel, n: u64, f: u64) {
    for _ in 0..n {
        packet::forget_arp_reply();
        let tag = packet::transmit(k, 0, Span { frame: f, offset: 0, len: ARP_LEN }, done)
            .unwrap_or_else(|e| fail(format_args!("{e:?}")));
        if wait(k, tag) != status::OK {
            fail(format_args!("transmit failed"));
        }
        wait_for(
            k,
            || packet::seen().arp_reply.is_some_and(|(ip, _)| ip == GATEWAY),
            format_args!("no ARP reply"),
        );
    }
}

/// Runs every device benchmark and powers off.
pub fn run(k: &mut Kernel, isolated: bool, quick: bool, iommu: Confinement) -> ! {
    let sfx = match (isolated, iommu) {
        (false, _) => "_unisolated",
        (true, Confinement::None) => "",
        (true, Confinement::Translating) => "_iommu",
        (true, Confinement::Off) => "_iommu_off",
    };
    WAIT_TICKS.store(1 << 22, Relaxed);
    super::detect::DEADLINE.store(1 << 22, Relaxed);
    crate::kprintln!("BENCH-PLAN calib xpc{sfx} blk_4k{sfx} blk_64k{sfx} net_tx{sfx} net_arp{sfx}");
    let frames: [u64; 16] = core::array::from_fn(|_| frame(k));
    let f = frame(k);
    arp_request(f);
    let (trials, scale) = if quick { (1, 1) } else { (5, 10) };
    let runs =
        [("calib", 100), ("xpc", 1000), ("blk_4k", 10), ("blk_64k", 5), ("net_tx", 10), ("net_arp", 5)];
    for (name, per_scale) in runs {
        let (s, iterations) = (if name == "calib" { "" } else { sfx }, per_scale * scale);
        for _ in 0..trials {
            HALTED.store(0, Relaxed);
            let t0 = rdtsc();
            match name {
                "calib" => calib(iterations),
                "xpc" => xpc(k, iterations),
                "blk_4k" => blk_read(k, iterations, 4, &frames),
                "blk_64k" => blk_read(k, iterations, 64, &frames),
                "net_tx" => net_tx(k, iterations, f),
                _ => net_arp(k, iterations, f),
            }
            let t = rdtsc() - t0 - HALTED.load(Relaxed);
            crate::kprintln!("BENCH {name}{s} {iterations} {t}");
        }
    }
    crate::kprintln!("BENCH-DONE");
    crate::arch::cpu::qemu_exit(crate::EXIT_SUCCESS)
}
