//! The debugger stub's subject (`test_debug`): publishes the address of a
//! short routine of known instructions (`env_publish`), then runs it and
//! exits with what it returns (7). With `arg` 1 it is hostile first: it
//! installs its own exception handler (which would count every #DB it
//! got into the exit code) and runs `hostile`, whose first instructions
//! clear the trap flag with `popf`.
#![no_std]
#![no_main]

use core::sync::atomic::{AtomicI32, Ordering};
use user::{exc, sys};

// Offsets, as `test_debug` expects them: step_me: 0 mov, 5 mov, 10 add,
// 12 dec, 14 jnz (to 10, three times), 16 ret. hostile: 0 pushfq,
// 1 andq, 9 popfq, then step_me's instructions from 10 (26: ret).
core::arch::global_asm!(
    ".global step_me",
    "step_me:",
    "mov $1, %eax",
    "mov $3, %ecx",
    "1: add %ecx, %eax",
    "dec %ecx",
    "jnz 1b",
    "ret",
    ".global hostile",
    "hostile:",
    "pushfq",
    "andq $~0x100, (%rsp)",
    "popfq",
    "mov $1, %eax",
    "mov $3, %ecx",
    "2: add %ecx, %eax",
    "dec %ecx",
    "jnz 2b",
    "ret",
    options(att_syntax)
);

unsafe extern "C" {
    fn step_me() -> i32;
    fn hostile() -> i32;
}

/// The exceptions the program's own handler got.
static OWN: AtomicI32 = AtomicI32::new(0);

fn own_handler(f: &mut abi::exception::ExceptionFrame) -> bool {
    OWN.fetch_add(1, Ordering::Relaxed);
    // Try to escape the stepping from inside the handler too.
    f.regs.rflags &= !0x100;
    true
}

fn main(arg: u64) -> i32 {
    let routine: unsafe extern "C" fn() -> i32 = if arg == 1 { hostile } else { step_me };
    if arg == 1 && exc::install(own_handler).is_err() {
        return -1;
    }
    if sys::env_publish(0, routine as usize as u64).is_err() {
        return -1;
    }
    // SAFETY: both routines only compute in eax and ecx and return.
    let r = unsafe { routine() };
    r + 1000 * OWN.load(Ordering::Relaxed)
}

user::entry!(main);
