//! Boot test: a `syscall` whose number is not a kernel call reaches this
//! environment's own handler with every register, and the handler's result
//! comes back in `rax` with the other registers intact (the mechanism a
//! Linux personality in the library OS uses). The handler sees rip and rcx
//! as SYSCALL left them (the return address). Hostile cases: with no
//! handler the call is refused (`NoSuchCall`); a handler that makes a
//! reflected call while handling one ends its environment.
#![no_std]
#![no_main]

use abi::exception::{vector, ExceptionFrame};
use abi::tables::FAULT_EXIT_BASE;
use core::arch::asm;
use core::sync::atomic::{AtomicU64, Ordering::Relaxed};
use user::{println, spawn};

/// rip and rcx as the handler saw them.
static SEEN_RIP: AtomicU64 = AtomicU64::new(0);
static SEEN_RCX: AtomicU64 = AtomicU64::new(0);

fn handler(f: &mut ExceptionFrame) -> bool {
    if f.vector != vector::SYSCALL {
        return false;
    }
    SEEN_RIP.store(f.regs.rip, Relaxed);
    SEEN_RCX.store(f.regs.rcx, Relaxed);
    let r = &mut f.regs;
    r.rax = r.rax * 1000 + r.rdi + r.rsi + r.rdx + r.r10 + r.r8 + r.r9;
    true
}

fn main(_: u64) -> i32 {
    user::exc::install(handler).unwrap();
    let (rax, rbx, r12, r15, after): (u64, u64, u64, u64, u64);
    // SAFETY: a reflected syscall; the handler only changes rax. rbx, r12
    // and r15 carry sentinels across it.
    unsafe {
        asm!(
            "push rbx",
            "mov rbx, 0x1111",
            "mov r12, 0x2222",
            "mov r15, 0x3333",
            "lea r14, [rip + 2f]",
            "syscall",
            "2:",
            "mov r13, rbx",
            "pop rbx",
            out("r13") rbx,
            inlateout("rax") 39u64 => rax,
            in("rdi") 1u64, in("rsi") 2u64, in("rdx") 3u64, in("r10") 4u64, in("r8") 5u64, in("r9") 6u64,
            out("r12") r12, out("r15") r15, out("r14") after, out("rcx") _, out("r11") _,
        )
    };
    println!("reflected call 39 returned {rax}; rbx {rbx:#x} r12 {r12:#x} r15 {r15:#x}");
    let (rip, rcx) = (SEEN_RIP.load(Relaxed), SEEN_RCX.load(Relaxed));
    println!("the handler saw rip {rip:#x} rcx {rcx:#x}; the call returns to {after:#x}");
    let mut ok = rax == 39_021 && rbx == 0x1111 && r12 == 0x2222 && r15 == 0x3333;
    ok &= rip == after && rcx == after;
    for (mode, want, what) in
        [(5u64, 0, "refused with no handler"), (6, FAULT_EXIT_BASE - vector::SYSCALL as i32, "ended")]
    {
        let code = spawn::wait(spawn::spawn("faulter", mode).unwrap()).unwrap();
        println!("a reflected call {what}: child code {code} (want {want})");
        ok &= code == want;
    }
    if ok {
        0
    } else {
        1
    }
}

user::entry!(main);
