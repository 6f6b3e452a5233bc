//! Protected control transfer from user code (paper 001 §4.6): the calls
//! that carry a message in registers, and the entry stub of a server that
//! answers every transfer with a reply transfer.

use abi::syscall as sc;
use core::arch::{asm, global_asm};

/// The message registers of a transfer (see `abi::syscall::PCT`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Msg {
    pub rdx: u64,
    pub r8: u64,
    pub r9: u64,
    pub r10: u64,
    pub rbx: u64,
    pub rbp: u64,
    pub r12: u64,
    pub r13: u64,
    pub r14: u64,
    pub r15: u64,
}

/// Transfers to `target` with `msg`; for a synchronous transfer, returns
/// (result, reply message) when the reply comes. `result` is the replier's
/// id, or a negative error.
pub fn call(target: u64, flags: u64, msg: &Msg) -> (i64, Msg) {
    let mut m = *msg;
    let r: i64;
    // SAFETY: a PCT system call; every message register is declared as
    // in/out, rbx and rbp are saved around the call because the compiler
    // reserves them, rcx/r11 are clobbered by SYSCALL, and rdi/rsi come
    // back changed (the kernel clears them on a transfer).
    unsafe {
        asm!(
            "push rbx",
            "push rbp",
            "mov rbx, [r11]",
            "mov rbp, [r11 + 8]",
            "push r11",
            "syscall",
            "pop r11",
            "mov [r11], rbx",
            "mov [r11 + 8], rbp",
            "pop rbp",
            "pop rbx",
            inlateout("rax") sc::PCT as i64 => r,
            // The kernel does not preserve these across a transfer.
            inlateout("rdi") target => _,
            inlateout("rsi") flags => _,
            inout("rdx") m.rdx,
            inout("r8") m.r8,
            inout("r9") m.r9,
            inout("r10") m.r10,
            inout("r12") m.r12,
            inout("r13") m.r13,
            inout("r14") m.r14,
            inout("r15") m.r15,
            inout("r11") (&mut m.rbx as *mut u64) => _,
            out("rcx") _,
        );
    }
    (r, m)
}

/// A bare transfer: the message is whatever the registers hold (all of
/// them are clobbered by the reply). Returns the replier's id or an error.
#[inline(always)]
pub fn call_raw(target: u64, flags: u64) -> i64 {
    let r: i64;
    // SAFETY: a PCT system call; every register the callee or the kernel
    // may change is declared clobbered (rbx and rbp are saved around it
    // because the compiler reserves them).
    unsafe {
        asm!(
            "push rbx",
            "push rbp",
            "syscall",
            "pop rbp",
            "pop rbx",
            inlateout("rax") sc::PCT as i64 => r,
            inlateout("rdi") target => _,
            inlateout("rsi") flags => _,
            out("rdx") _, out("rcx") _, out("r8") _, out("r9") _, out("r10") _, out("r11") _,
            out("r12") _, out("r13") _, out("r14") _, out("r15") _,
        );
    }
    r
}

/// Yields until `server` has opened its entry point (a call is refused
/// with `BadState` until then), making a first call with `msg`; returns its
/// result. Gives up after many tries.
pub fn first_call(server: u64, flags: u64, msg: &Msg) -> (i64, Msg) {
    let mut last = call(server, flags, msg);
    for _ in 0..10_000 {
        if last.0 != abi::Error::BadState.as_result() {
            break;
        }
        crate::sys::yield_now();
        last = call(server, flags, msg);
    }
    last
}

// A server entry: reply to the caller (whose id arrives in rax) with the
// message it sent, each word incremented by one except r15, which carries
// back the slot of a capability granted with the call (rcx; u64::MAX if
// none), then wait for the next
// transfer by yielding. It uses no memory and no stack: the cheapest
// possible callee ("trusted": it saves nothing).
global_asm!(
    ".globl pct_echo_entry",
    "pct_echo_entry:",
    "add rdx, 1",
    "add r8, 1",
    "add r9, 1",
    "add r10, 1",
    "add rbx, 1",
    "add rbp, 1",
    "add r12, 1",
    "add r13, 1",
    "add r14, 1",
    "mov r15, rcx",
    "mov rdi, rax",
    "xor esi, esi",
    "mov eax, {pct}",
    "syscall",
    "2:",
    "mov eax, {yield_}",
    "syscall",
    "jmp 2b",
    pct = const sc::PCT,
    yield_ = const sc::YIELD,
);

unsafe extern "C" {
    fn pct_echo_entry();
}

/// The address of the echo server's entry point.
pub fn echo_entry() -> u64 {
    pct_echo_entry as *const () as u64
}
