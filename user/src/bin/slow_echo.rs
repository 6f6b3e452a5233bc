//! Helper for the state-visibility test: opens a PCT entry that yields
//! `SLOW_YIELDS` times before it replies to its caller with `rdx + 1`, so
//! that the caller stays waiting for the reply long enough to be held.
#![no_std]
#![no_main]

use abi::syscall as sc;
use core::arch::global_asm;

// The caller's id (rax) and its message (rdx) are kept in registers a
// kernel call preserves (r12, r14); r13 counts the yields. No stack.
global_asm!(
    ".globl slow_echo_entry",
    "slow_echo_entry:",
    "mov r12, rax",
    "mov r14, rdx",
    "mov r13, {yields}",
    "2:",
    "mov eax, {yield_}",
    "syscall",
    "dec r13",
    "jnz 2b",
    "lea rdx, [r14 + 1]",
    "mov rdi, r12",
    "xor esi, esi",
    "mov eax, {pct}",
    "syscall",
    "3:",
    "mov eax, {yield_}",
    "syscall",
    "jmp 3b",
    yields = const 2000,
    pct = const sc::PCT,
    yield_ = const sc::YIELD,
);

unsafe extern "C" {
    fn slow_echo_entry();
}

#[repr(C, align(16))]
struct Stack([u8; 4096]);
/// The entry's stack (the stub itself uses none).
static mut STACK: Stack = Stack([0; 4096]);

fn main(_: u64) -> i32 {
    let entry = slow_echo_entry as *const () as u64;
    let top = (&raw const STACK) as u64 + 4096;
    user::sys::set_pct_entry_guarded(0, entry, top, sc::NO_GUARD).unwrap();
    loop {
        user::sys::yield_now();
    }
}

user::entry!(main);
