//! Boot test: kernel calls change only `rax`, `rcx` and `r11` (`abi::syscall`,
//! `docs/abi.md`). Sentinels in the argument registers survive a call that
//! returns straight away, one that fails, and one that switches to another
//! environment and is resumed from its saved frame later.
#![no_std]
#![no_main]

use abi::syscall as sc;
use abi::tables::env_state;
use core::arch::asm;
use user::{kinfo, println, spawn, sys};

/// Values no kernel path would leave in a register by chance.
const SENTINELS: [u64; 6] = [
    0x5151_0000_0000_00d1,
    0x5151_0000_0000_0051,
    0x5151_0000_0000_00d2,
    0x5151_0000_0000_0010,
    0x5151_0000_0000_0008,
    0x5151_0000_0000_0009,
];

/// Makes call `n` with the sentinels as its arguments; returns the result,
/// what rdi, rsi, rdx, r10, r8, r9 held afterwards, and whether rcx and
/// r11 held the return address and the flags (what SYSCALL put there; no
/// kernel value).
fn call_with_sentinels(n: u64) -> (i64, [u64; 6], bool) {
    let r: i64;
    let mut a = SENTINELS;
    let (rcx, r11, ret, flags): (u64, u64, u64, u64);
    // SAFETY: a kernel call with sentinel arguments (none of them names
    // anything of ours); the registers are declared as read back, which is
    // what the test checks; rcx and r11 are clobbered by SYSCALL itself.
    unsafe {
        asm!("lea {ret}, [rip + 2f]",
            "syscall",
            "2:",
            "pushfq",
            "pop {flags}",
            ret = out(reg) ret, flags = out(reg) flags,
            inlateout("rax") n as i64 => r,
            inout("rdi") a[0], inout("rsi") a[1], inout("rdx") a[2],
            inout("r10") a[3], inout("r8") a[4], inout("r9") a[5],
            lateout("rcx") rcx, lateout("r11") r11);
    }
    (r, a, rcx == ret && r11 == flags)
}

fn check(what: &str, n: u64, want: impl Fn(i64) -> bool) -> bool {
    let (r, regs, rcx_r11) = call_with_sentinels(n);
    let names = ["rdi", "rsi", "rdx", "r10", "r8", "r9"];
    let mut ok = want(r);
    if !ok {
        println!("abi: {what}: unexpected result {r}");
    }
    for ((name, got), sent) in names.iter().zip(regs).zip(SENTINELS) {
        if got != sent {
            println!("abi: {what}: {name} came back {got:#x}, was {sent:#x}");
            ok = false;
        }
    }
    if !rcx_r11 {
        println!("abi: {what}: rcx and r11 do not hold the return address and flags");
        ok = false;
    }
    if ok {
        println!("abi: {what}: argument registers preserved, rcx and r11 as SYSCALL left them");
    }
    ok
}

fn main(_: u64) -> i32 {
    let me = sys::self_id() as i64;
    let mut ok = check("self_id (returns at once)", sc::SELF_ID, |r| r == me);
    // The sentinel "frame" is no frame: the call fails on its way out.
    ok &= check("frame_free (fails)", sc::FRAME_FREE, |r| r < 0);
    // With a child owning a slice, yield switches to it; this environment
    // comes back later through its saved frame.
    let child = match spawn::spawn("yielder", 3) {
        Ok(c) => c,
        Err(e) => {
            println!("abi: cannot spawn yielder: {e:?}");
            return 1;
        }
    };
    // It needs four turns; a timer tick may take one of ours, so yield
    // until it has ended (each yield checked), within a bound.
    for _ in 0..64 {
        ok &= check("yield (switches away and back)", sc::YIELD, |r| r == 0);
        if kinfo::env_by_id(child).map(|e| e.state) == Some(env_state::EXITED) {
            break;
        }
    }
    // The yielder yields 3 times and exits: it ran between our yields.
    if kinfo::env_by_id(child).map(|e| e.state) != Some(env_state::EXITED) {
        println!("abi: the yielder has not run to its end, so no switch was tested");
        return 1;
    }
    if ok {
        0
    } else {
        1
    }
}

user::entry!(main);
