//! SYSCALL/SYSRET entry.
//!
//! Kernel calls clobber only the registers the System V ABI lets a function
//! clobber, so the entry saves just what a switch to another environment
//! needs (callee-saved registers, rip, rflags, rsp), marks the frame as a
//! system-call frame (vector -1), and calls the handler straight from a
//! table with the arguments still in registers. When the handler switched
//! environments, `return_to_user` resumes the new one from its frame (with
//! SYSRETQ again if it, too, was in a system call); otherwise SYSRETQ
//! returns directly.
//!
//! Numbers outside the kernel's range are *reflected*: every register is
//! saved and the environment's own handler (say, a Linux personality) gets
//! them, so the kernel knows nothing of any other system-call ABI.
//!
//! SYSRETQ with a non-canonical `rcx` would fault in ring 0; `rcx` here is
//! always the address after the environment's own SYSCALL instruction, and
//! user code can never execute at the top of the lower half (that region is
//! the kernel's exposed window, mapped no-execute), so it is canonical.

use super::cpu::wrmsr;
use super::gdt::{KERNEL_CS, SYSRET_BASE};
use super::percpu::PerCpu;
use core::mem::offset_of;

const EFER: u32 = 0xC000_0080;
const STAR: u32 = 0xC000_0081;
const LSTAR: u32 = 0xC000_0082;
const SFMASK: u32 = 0xC000_0084;
/// Cleared on entry: IF, TF, DF, NT, AC.
const ENTRY_FLAGS_CLEARED: u64 = 0x200 | 0x100 | 0x400 | 0x4000 | 0x4_0000;

frame_asm!(
    r#"
    .section .text
    /* Aligned so that the stub, and its dispatch, lie in one page: the
     * interposed view replaces that page (see interpose.rs). */
    .balign 256
    .global syscall_entry
syscall_entry:
    swapgs
    movq %rsp, %gs:{user_rsp}
    movq %gs:{cur_tf}, %rsp
    movq %rsp, %gs:{caller_tf}
    movq $-1, {vector}(%rsp)
    movq %rcx, {rip}(%rsp)
    movq %r11, {rflags}(%rsp)
    movq %gs:{user_rsp}, %r11
    movq %r11, {rsp}(%rsp)
    movq %rbx, {rbx}(%rsp)
    movq %rbp, {rbp}(%rsp)
    movq %r12, {r12}(%rsp)
    movq %r13, {r13}(%rsp)
    movq %r14, {r14}(%rsp)
    movq %r15, {r15}(%rsp)
    movq %rdi, {rdi}(%rsp)
    movq %rsi, {rsi}(%rsp)
    movq %rdx, {rdx}(%rsp)
    movq %r8, {r8}(%rsp)
    movq %r9, {r9}(%rsp)
    movq %r10, {r10}(%rsp)
    movq %gs:{kstack_top}, %rsp
    subq ${base}, %rax
    cmpq ${count}, %rax
    jae 2f
    movq %r10, %rcx
    .global syscall_dispatch
syscall_dispatch:
    call *{table}(, %rax, 8)
    movq %gs:{cur_tf}, %rcx
    cmpq %rcx, %gs:{caller_tf}
    jne 1f
"#,
    sysret!("rcx"),
    r#"
    /* The handler switched: the caller gets its result when resumed, and
     * the new current environment (rcx) resumes from its frame. */
1:  movq %gs:{caller_tf}, %rdx
    movq %rax, {rax}(%rdx)
    movq %rcx, %rsp
    /* resume_frame's first test, made here: an environment that left by
     * a system call (yield's partner, say) resumes without one more jump. */
    cmpq $-1, {vector}(%rsp)
    je resume_syscall_frame
    jmp resume_frame
    /* Not a kernel call: the frame now holds every register (rax last),
     * and the handler gets them all. */
2:  addq ${base}, %rax
    movq %gs:{cur_tf}, %rcx
    movq $0, {vector}(%rcx)
    movq %rax, {rax}(%rcx)
    call {reflect}
    jmp return_to_user
    "#,
    base = const abi::syscall::BASE,
    count = const abi::syscall::END - abi::syscall::BASE,
    table = sym crate::syscall::TABLE,
    reflect = sym crate::syscall::reflect,
    user_rsp = const offset_of!(PerCpu, user_rsp),
    caller_tf = const offset_of!(PerCpu, caller_tf)
);

unsafe extern "C" {
    fn syscall_entry();
}

pub fn init() {
    // SAFETY: programs the architectural SYSCALL MSRs with this kernel's
    // selectors and entry point; SCE is required for SYSCALL to work.
    unsafe {
        wrmsr(EFER, super::cpu::rdmsr(EFER) | 1);
        wrmsr(STAR, (SYSRET_BASE as u64) << 48 | (KERNEL_CS as u64) << 32);
        wrmsr(LSTAR, syscall_entry as *const () as u64);
        wrmsr(SFMASK, ENTRY_FLAGS_CLEARED);
    }
}
