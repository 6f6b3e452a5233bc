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
use core::arch::global_asm;

const EFER: u32 = 0xC000_0080;
const STAR: u32 = 0xC000_0081;
const LSTAR: u32 = 0xC000_0082;
const SFMASK: u32 = 0xC000_0084;
/// Cleared on entry: IF, TF, DF, NT, AC.
const ENTRY_FLAGS_CLEARED: u64 = 0x200 | 0x100 | 0x400 | 0x4000 | 0x4_0000;

global_asm!(
    r#"
    .section .text
    .global syscall_entry
syscall_entry:
    swapgs
    movq %rsp, %gs:8
    movq %gs:16, %rsp
    movq %rsp, %gs:40
    movq $-1, 120(%rsp)
    movq %rcx, 136(%rsp)
    movq %r11, 152(%rsp)
    movq %gs:8, %r11
    movq %r11, 160(%rsp)
    movq %rbx, 104(%rsp)
    movq %rbp, 64(%rsp)
    movq %r12, 24(%rsp)
    movq %r13, 16(%rsp)
    movq %r14, 8(%rsp)
    movq %r15, 0(%rsp)
    movq %rdi, 72(%rsp)
    movq %rsi, 80(%rsp)
    movq %rdx, 88(%rsp)
    movq %r8, 56(%rsp)
    movq %r9, 48(%rsp)
    movq %r10, 40(%rsp)
    movq %gs:0, %rsp
    subq ${base}, %rax
    cmpq ${count}, %rax
    jae 2f
    movq %r10, %rcx
    call *{table}(, %rax, 8)
    movq %gs:16, %rcx
    cmpq %rcx, %gs:40
    jne 1f
    movq 152(%rcx), %r11
    movq 72(%rcx), %rdi
    movq 80(%rcx), %rsi
    movq 88(%rcx), %rdx
    movq 56(%rcx), %r8
    movq 48(%rcx), %r9
    movq 40(%rcx), %r10
    movq 136(%rcx), %rcx
    movq %gs:8, %rsp
    swapgs
    sysretq
    /* The handler switched: the caller gets its result when resumed, and
     * the new current environment (rcx) resumes from its frame. */
1:  movq %gs:40, %rdx
    movq %rax, 112(%rdx)
    movq %rcx, %rsp
    jmp resume_frame
    /* Not a kernel call: the frame now holds every register (rax last),
     * and the handler gets them all. */
2:  addq ${base}, %rax
    movq %gs:16, %rcx
    movq $0, 120(%rcx)
    movq %rax, 112(%rcx)
    call {reflect}
    jmp return_to_user
    "#,
    base = const abi::syscall::BASE,
    count = const abi::syscall::END - abi::syscall::BASE,
    table = sym crate::syscall::TABLE,
    reflect = sym crate::syscall::reflect,
    options(att_syntax)
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
