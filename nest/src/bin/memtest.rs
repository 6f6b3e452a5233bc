//! Paper 003 §6's memtest, natively: allocates `arg` pages (frames mapped
//! into its own address space), then makes four passes over them, each
//! writing and reading back a distinct pattern. Exits with the guest
//! instructions it took (the TSC under `-icount`), or -1 on a bit error
//! or a failed allocation. Run by the nesting bench rows under `limiter`s.
#![no_std]
#![no_main]

use abi::syscall::{map as mf, ENV_SELF, FRAME_ANY};
use user::sys;

const BASE: u64 = 0x5800_0000_0000;

fn rdtsc() -> u64 {
    // SAFETY: lfence and RDTSC only order and read the time-stamp counter.
    unsafe {
        core::arch::x86_64::_mm_lfence();
        core::arch::x86_64::_rdtsc()
    }
}

fn main(pages: u64) -> i32 {
    let t = rdtsc();
    for p in 0..pages {
        let Ok(f) = sys::frame_alloc(ENV_SELF, FRAME_ANY) else { return -1 };
        if sys::map(ENV_SELF, BASE + p * 4096, f, mf::WRITE).is_err() {
            return -1;
        }
    }
    let words = (pages * 512) as usize;
    // SAFETY: `pages` pages were just mapped writable from BASE.
    let mem = unsafe { core::slice::from_raw_parts_mut(BASE as *mut u64, words) };
    for pass in 0..4u64 {
        let pattern = |i: usize| (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ pass;
        for (i, w) in mem.iter_mut().enumerate() {
            // SAFETY: a plain store into the mapped region (volatile: the
            // pass must touch memory, not be folded away).
            unsafe { core::ptr::write_volatile(w, pattern(i)) };
        }
        for (i, w) in mem.iter().enumerate() {
            // SAFETY: as above, a load.
            if unsafe { core::ptr::read_volatile(w) } != pattern(i) {
                return -1;
            }
        }
    }
    i32::try_from(rdtsc() - t).unwrap_or(-1)
}

user::entry!(main);
