//! Helper for the pager test: writes a pattern into `arg` pages of a
//! region nobody mapped, then reads every page back, twice. Exits with the
//! number of wrong words (0: its memory behaved as memory). It has an
//! exception handler of its own, which must never see those faults: the
//! interposing pager gets them first.
#![no_std]
#![no_main]

/// Where its memory is (the pager maps it on demand).
pub const REGION: u64 = 0x2000_0000_0000;
const WORDS: u64 = 512;

fn word(page: u64, i: u64) -> *mut u64 {
    (REGION + page * 4096 + i * 8) as *mut u64
}

/// A fault that reached the program itself: the pager was bypassed.
fn unexpected(f: &mut abi::exception::ExceptionFrame) -> bool {
    user::println!("pagee: fault at {:#x} reached its own handler", f.fault_addr);
    false
}

fn main(pages: u64) -> i32 {
    user::exc::install(unexpected).unwrap();
    for p in 0..pages {
        for i in (0..WORDS).step_by(61) {
            // SAFETY: the region is the pager's to provide; a fault here is
            // what it answers.
            unsafe { word(p, i).write_volatile(p << 32 | i) };
        }
    }
    let mut wrong = 0;
    for _ in 0..2 {
        for p in 0..pages {
            for i in (0..WORDS).step_by(61) {
                // SAFETY: as above.
                wrong += (unsafe { word(p, i).read_volatile() } != p << 32 | i) as i32;
            }
        }
    }
    wrong
}

user::entry!(main);
