//! Helper for boot tests: misbehaves as its argument says, with no
//! exception handler installed.
//! 1: page fault, 2: invalid opcode, 3: spin forever, 4: probe the parent's
//! resources (every attempt must be refused), 5: a reflected call with no
//! handler (exits 0 if it was refused with `NoSuchCall`), 6: a reflected
//! call made by the handler of a reflected call (the handler is busy: the
//! kernel must end this environment).
#![no_std]
#![no_main]

use abi::syscall::{map as mf, ENV_SELF, FRAME_ANY};
use abi::Error;
use user::{kinfo, sys};

fn main(arg: u64) -> i32 {
    match arg {
        // SAFETY: deliberately faulting: this environment has no handler.
        1 => unsafe { core::ptr::read_volatile(0x10 as *const u64) as i32 },
        // SAFETY: as above.
        2 => unsafe { core::arch::asm!("ud2", options(noreturn)) },
        3 => loop {
            core::hint::spin_loop()
        },
        4 => probe_parent(),
        5 => (reflected_call() != abi::Error::NoSuchCall.as_result() as u64) as i32,
        6 => {
            user::exc::install(|_| {
                reflected_call();
                true
            })
            .unwrap();
            reflected_call();
            1 // not reached: the kernel ends it in the handler's call
        }
        _ => 0,
    }
}

/// `syscall` with a number outside the kernel's range (Linux's getpid).
fn reflected_call() -> u64 {
    let rax: u64;
    // SAFETY: a system call that the kernel refuses or reflects; SYSCALL
    // itself clobbers rcx and r11.
    unsafe { core::arch::asm!("syscall", inlateout("rax") 39u64 => rax, out("rcx") _, out("r11") _) };
    rax
}

/// A child presenting its parent's resources must be refused each time.
fn probe_parent() -> i32 {
    let me = kinfo::env_by_id(sys::self_id()).unwrap();
    let parent = me.parent as u64;
    let mine = sys::frame_alloc(ENV_SELF, FRAME_ANY).unwrap();
    let parents_frame =
        (0..kinfo::kernel().frames).find(|&f| kinfo::frame(f).owner as u64 == parent).unwrap();
    let checks = [
        (sys::frame_alloc(parent, FRAME_ANY), Error::NotPermitted),
        (sys::map(parent, 0x7000_0000_0000, mine, 0), Error::NotPermitted),
        (sys::env_destroy(parent), Error::NotPermitted),
        (sys::frame_free(parents_frame), Error::NotOwner),
        (sys::map(ENV_SELF, 0x7000_0000_0000, parents_frame, mf::WRITE), Error::NotOwner),
        (sys::shutdown(0), Error::NotPermitted),
    ];
    let mut bad = 0;
    for (i, (got, want)) in checks.iter().enumerate() {
        if *got != Err(*want) {
            user::println!("probe {i}: got {got:?}, want {want:?}");
            bad += 1;
        }
    }
    bad
}

user::entry!(main);
