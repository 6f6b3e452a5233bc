//! Boot test: a `syscall` whose number is not a kernel call reaches this
//! environment's own handler with every register, and the handler's result
//! comes back in `rax` with the other registers intact (the mechanism a
//! Linux personality in the library OS uses).
#![no_std]
#![no_main]

use abi::exception::{vector, ExceptionFrame};
use core::arch::asm;
use user::println;

fn handler(f: &mut ExceptionFrame) -> bool {
    if f.vector != vector::SYSCALL {
        return false;
    }
    let r = &mut f.regs;
    r.rax = r.rax * 1000 + r.rdi + r.rsi + r.rdx + r.r10 + r.r8 + r.r9;
    true
}

fn main(_: u64) -> i32 {
    user::exc::install(handler).unwrap();
    let (rax, rbx, r12, r15): (u64, u64, u64, u64);
    // SAFETY: a reflected syscall; the handler only changes rax. rbx, r12
    // and r15 carry sentinels across it.
    unsafe {
        asm!(
            "push rbx",
            "mov rbx, 0x1111",
            "mov r12, 0x2222",
            "mov r15, 0x3333",
            "syscall",
            "mov r13, rbx",
            "pop rbx",
            out("r13") rbx,
            inlateout("rax") 39u64 => rax,
            in("rdi") 1u64, in("rsi") 2u64, in("rdx") 3u64, in("r10") 4u64, in("r8") 5u64, in("r9") 6u64,
            out("r12") r12, out("r15") r15, out("rcx") _, out("r11") _,
        )
    };
    println!("reflected call 39 returned {rax}; rbx {rbx:#x} r12 {r12:#x} r15 {r15:#x}");
    let ok = rax == 39_021 && rbx == 0x1111 && r12 == 0x2222 && r15 == 0x3333;
    if ok {
        0
    } else {
        1
    }
}

user::entry!(main);
