//! Helper for the interrupt test: takes `INTERRUPT` upcalls while it
//! computes, without system calls, a sum the interruptions must not
//! disturb. It ORs the bits it receives into `GOT` and stops when bit 8
//! arrives. It publishes `READY` once its handler is installed. Argument 1:
//! spin at once, publishing `GOT` at each interrupt. Argument 2: first spend 5 ticks in a
//! critical section, publishing 1 on entering it and 2 on leaving, so the
//! test can see an interrupt wait for the section to end. Argument 3: exit
//! at once, asking the kernel to interrupt the parent with 0x20. Exit code: 0 if
//! the sum is right and every interrupt named the parent as sender, 2 if
//! the sum is wrong, 3 if a sender was wrong.
#![no_std]
#![no_main]

use abi::exception::{vector, ExceptionFrame};
use core::sync::atomic::{AtomicU64, Ordering};
use user::{kinfo, sys};

static GOT: AtomicU64 = AtomicU64::new(0);
static BAD_SENDER: AtomicU64 = AtomicU64::new(0);
static PARENT: AtomicU64 = AtomicU64::new(0);
static MODE: AtomicU64 = AtomicU64::new(0);

/// Published once the handler is installed.
pub const READY: u64 = 1 << 40;

/// Bit the test sends to end the run.
const STOP: u64 = 1 << 8;

fn handler(f: &mut ExceptionFrame) -> bool {
    if f.vector != vector::INTERRUPT {
        return false;
    }
    let got = GOT.fetch_or(f.error_code, Ordering::SeqCst) | f.error_code;
    if MODE.load(Ordering::Relaxed) == 1 {
        let _ = sys::env_publish(0, got);
    }
    if f.fault_addr != PARENT.load(Ordering::Relaxed) {
        BAD_SENDER.store(1, Ordering::Relaxed);
    }
    true
}

fn main(mode: u64) -> i32 {
    MODE.store(mode, Ordering::Relaxed);
    if mode == 3 {
        sys::exit_telling_parent(0, 0x20, abi::syscall::CRED_SELF);
    }
    let me = sys::self_id();
    PARENT.store(kinfo::env_by_id(me).map_or(0, |e| e.parent as u64), Ordering::Relaxed);
    user::exc::install(handler).unwrap();
    sys::env_publish(0, READY).unwrap();
    if mode == 2 {
        user::exc::critical(|| {
            sys::env_publish(0, 1).unwrap();
            let until = kinfo::ticks() + 5;
            while kinfo::ticks() < until {
                core::hint::spin_loop();
            }
        });
        sys::env_publish(0, 2).unwrap();
    }
    // Registers only: upcalls land between these instructions.
    let (mut i, mut sum) = (0u64, 0u64);
    while GOT.load(Ordering::SeqCst) & STOP == 0 {
        sum = core::hint::black_box(sum.wrapping_add(i));
        i += 1;
    }
    if sum != i.wrapping_mul(i.wrapping_sub(1)) / 2 {
        return 2;
    }
    if BAD_SENDER.load(Ordering::Relaxed) != 0 {
        return 3;
    }
    GOT.load(Ordering::SeqCst) as i32 & 0xff
}
user::entry!(main);
