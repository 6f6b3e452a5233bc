//! The kernel's own block requests, waited for: XN's reads, writes and
//! flushes (`crate::xn::disk`). A call submits as many requests as the
//! driver takes, then halts until device interrupts end them, running
//! the drivers itself (the kernel state is held by the system call, so
//! the idle loop cannot), and keeps the requests' deadlines and restarts
//! failed drivers meanwhile (the clock hook's work). A device that
//! answers nothing for a minute all the same has its driver disabled,
//! which fails what is in flight: the kernel never waits forever.

use super::block::{self, BlockError};
use super::run::mergeable;
use super::{driver, Global, Span};
use drvapi::status;
use drvapi::MAX_PAGES;

/// The kernel's requests in flight at once (the driver takes fewer).
const SLOTS: usize = 16;

/// Wake-ups without progress before the device is given up on: at least
/// 60 s, as the timer alone wakes the processor every 2 ms.
const PATIENCE: u32 = 30_000;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Free,
    InFlight,
    Ended(i32),
}

static OUTCOMES: Global<[Outcome; SLOTS]> = Global::new([Outcome::Free; SLOTS]);

/// A request's end (from inside the driver's crossing: only this table).
fn done(cookie: u64, st: i32, _len: usize) {
    OUTCOMES.with(|o| {
        if let Some(x) = o.get_mut(cookie as usize) {
            *x = Outcome::Ended(st);
        }
    })
}

fn reserve() -> Option<usize> {
    OUTCOMES.with(|o| {
        let i = o.iter().position(|x| *x == Outcome::Free)?;
        o[i] = Outcome::InFlight;
        Some(i)
    })
}

fn release(slot: usize) {
    OUTCOMES.with(|o| o[slot] = Outcome::Free)
}

/// Takes the ends of `mine` that came: whether any did; a failed one sets
/// `failed`.
fn collect(mine: &mut [Option<usize>], failed: &mut Option<BlockError>) -> bool {
    let mut any = false;
    for m in mine.iter_mut() {
        let Some(slot) = *m else { continue };
        let ended = OUTCOMES.with(|o| match o[slot] {
            Outcome::Ended(st) => {
                o[slot] = Outcome::Free;
                Some(st)
            }
            _ => None,
        });
        if let Some(st) = ended {
            any = true;
            *m = None;
            if st != status::OK {
                failed.get_or_insert(BlockError::Driver(st));
            }
        }
    }
    any
}

/// The time a wait starts at (timer ticks), less the ticks counted while
/// idle that the scheduler has not taken yet, which `wait_once` adds.
fn start() -> u64 {
    super::detect::now().saturating_sub(crate::arch::percpu::idle_ticks())
}

/// Halts until an interrupt, then runs the drivers of the devices that
/// interrupted, and does the clock hook's work — requests past their
/// deadline fail their drivers, failed drivers are restarted — with the
/// ticks counted while idling since `start` (the hook itself does not run
/// while a system call waits, nor during the boot).
fn wait_once(start: u64) {
    if !super::pending() {
        crate::arch::cpu::idle();
    }
    super::run_drivers();
    super::clock(start + crate::arch::percpu::idle_ticks());
}

/// Gives up on a device that stopped answering: its driver is disabled,
/// which ends its requests with an I/O error.
fn give_up() {
    if let Some(i) = driver::find("virtio-blk") {
        driver::with(|ds| driver::disable(ds, i, "no answer to a request in a minute"));
    }
}

/// Moves each `(buffer, first sector)` of `reqs` to (`write`) or from the
/// disk, buffers in frames the kernel vouches for, and waits for all of
/// them; the first error, after every request started has ended. Whole
/// pages on consecutive sectors go as one request, as many as the driver
/// takes (`run::mergeable`): callers list runs in disk order.
pub fn transfer(write: bool, reqs: &[(Span, u64)]) -> Result<(), BlockError> {
    let t0 = start();
    let mut mine: [Option<usize>; SLOTS] = [None; SLOTS];
    let (mut next, mut failed, mut idle) = (0, None, 0);
    loop {
        while next < reqs.len() && failed.is_none() {
            let Some(at) = mine.iter().position(Option::is_none) else { break };
            let Some(slot) = reserve() else { break };
            let n = mergeable(&reqs[next..], block::max_pages());
            let mut bufs = [reqs[next].0; MAX_PAGES];
            for (b, r) in bufs.iter_mut().zip(&reqs[next..next + n]) {
                *b = r.0;
            }
            match block::submit_pinned(write, &bufs[..n], reqs[next].1, done, slot as u64) {
                Ok(_) => {
                    mine[at] = Some(slot);
                    next += n;
                }
                Err(e) => {
                    release(slot);
                    if e != BlockError::Driver(status::NO_SPACE) {
                        failed = Some(e);
                    }
                    break;
                }
            }
        }
        if mine.iter().all(Option::is_none) && (next == reqs.len() || failed.is_some()) {
            return failed.map_or(Ok(()), Err);
        }
        wait_once(t0);
        if collect(&mut mine, &mut failed) {
            idle = 0;
        } else {
            idle += 1;
            if idle == PATIENCE {
                give_up();
            }
        }
    }
}

/// Flushes the disk's write cache (`token`: a sector of a frame the
/// kernel holds). A device without a flush answers `UNSUPPORTED`.
pub fn flush(token: Span) -> Result<(), BlockError> {
    let t0 = start();
    let mut idle = 0;
    let slot = loop {
        let slot = reserve().ok_or(BlockError::Driver(status::NO_SPACE))?;
        match block::flush(token, done, slot as u64) {
            Ok(_) => break slot,
            // Others' requests in flight: a flush runs alone.
            Err(BlockError::Driver(status::NO_SPACE)) => {
                release(slot);
                wait_once(t0);
                idle += 1;
                if idle == PATIENCE {
                    give_up();
                }
            }
            Err(e) => {
                release(slot);
                return Err(e);
            }
        }
    };
    // The driver ends a flush before its call returns; waiting covers a
    // driver that would not.
    let (mut mine, mut failed) = ([Some(slot)], None);
    while !collect(&mut mine, &mut failed) {
        wait_once(t0);
        idle += 1;
        if idle == PATIENCE {
            give_up();
        }
    }
    failed.map_or(Ok(()), Err)
}
