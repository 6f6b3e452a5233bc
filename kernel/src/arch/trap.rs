//! Interrupt and exception entry. Every vector has a small stub that pushes
//! a uniform frame. From user mode the CPU pushes onto TSS.rsp0, which is
//! the top of the current environment's saved-register area, so the frame
//! *is* the environment's saved state: no copying on entry or switch.

use super::frame::TrapFrame;
use crate::env::{Env, ExcTarget};
use core::mem::offset_of;

// Vectors for which the CPU pushes an error code.
frame_asm!(
    r#"
    /* Pops a whole frame pushed by trap_common (and the vector and error
     * words), leaving the interrupt frame for IRETQ. */
    .macro restore_frame
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %r11
    popq %r10
    popq %r9
    popq %r8
    popq %rbp
    popq %rdi
    popq %rsi
    popq %rdx
    popq %rcx
    popq %rbx
    popq %rax
    addq $16, %rsp
    .endm

    /* One 16-byte stub per vector; with `fast`, the exceptions an
     * environment's handler may take go to exc_fast. */
    .macro stubs fast
    .set vec, 0
    .rept 256
    .balign 16
    .if (vec == 8) || (vec == 10) || (vec == 11) || (vec == 12) || (vec == 13) || (vec == 14) || (vec == 17) || (vec == 21) || (vec == 29) || (vec == 30)
    .else
    pushq $0
    .endif
    pushq $vec
    .if \fast && (vec < 32) && (vec != 2) && (vec != 8) && (vec != 18)
    jmp exc_fast
    .else
    jmp trap_common
    .endif
    .set vec, vec + 1
    .endr
    .endm

    .section .text
    .balign 16
    .global trap_stubs
trap_stubs:
    stubs 1
    /* The crossing's table (`idt.rs`): a trap a driver takes is the
     * kernel's whatever its frame says (a driver that ran `sysret` traps
     * from ring 3), so none goes to exc_fast. */
    .balign 16
    .global crossing_stubs
crossing_stubs:
    stubs 0

    /* Exception delivery (paper 001 §4.4), Aegis-style: only the registers
     * used here (rax, rcx) and the interrupt frame are written into the
     * environment's save area; every other register reaches the handler
     * live. Anything unusual (kernel mode, no handler, handler busy) takes
     * the general path, which ends the environment. rsp = tf + 120 here;
     * the environment's ExcTarget follows its TrapFrame (tf + 176).
     * Only the kernel's table leads here, and only for vectors without a
     * stack of their own: a frame from ring 3 is an environment's, on its
     * TSS.rsp0 (a driver's traps take the crossing's stubs). */
exc_fast:
    testb $3, {v_cs}(%rsp)
    jz trap_common
    swapgs
    movq %rax, {v_rax}(%rsp)
    movq %rcx, {v_rcx}(%rsp)
    .global exc_fast_save
exc_fast_save:
"#,
    claim_save_area!("rax", "{v_save}", "1f"),
    r#"
    movq {v_vector}(%rsp), %rcx
    movq %rcx, {f_vector}(%rax)
    movq {v_error}(%rsp), %rcx
    movq %rcx, {f_error}(%rax)
    xorl %ecx, %ecx
    cmpq ${page_fault}, {v_vector}(%rsp)
    jne 2f
    movq %cr2, %rcx
2:  movq %rcx, {f_addr}(%rax)
    movq {v_rax}(%rsp), %rcx
    movq %rcx, {f_rax}(%rax)
    movq {v_rcx}(%rsp), %rcx
    movq %rcx, {f_rcx}(%rax)
    movq {v_rip}(%rsp), %rcx
    movq %rcx, {f_rip}(%rax)
    movq {v_rflags}(%rsp), %rcx
    movq %rcx, {f_rflags}(%rax)
    movq {v_rsp}(%rsp), %rcx
    movq %rcx, {f_rsp}(%rax)
    movq {v_entry}(%rsp), %rcx
    movq %rcx, {v_rip}(%rsp)
    movq {v_stack}(%rsp), %rcx
    movq %rcx, {v_rsp}(%rsp)
    andq $~{handler_clears}, {v_rflags}(%rsp)
    swapgs
    addq $16, %rsp
    iretq
1:  movq {v_rax}(%rsp), %rax
    movq {v_rcx}(%rsp), %rcx
    swapgs

    /* The direction flag is whatever the interrupted code left (a user
     * program, a driver); the kernel's code expects it clear. */
trap_common:
    cld
    pushq %rax
    pushq %rbx
    pushq %rcx
    pushq %rdx
    pushq %rsi
    pushq %rdi
    pushq %rbp
    pushq %r8
    pushq %r9
    pushq %r10
    pushq %r11
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    /* A trap on the double fault's or the crossing's stack is the
     * kernel's (a driver's) whatever the frame says: a driver may raise
     * `int N` for a vector whose stub expects an error code the processor
     * then does not push, and the frame read is shifted by a word; or it
     * ran `sysret` and traps from ring 3. */
    leaq {trap_stacks}(%rip), %rax
    movq %rsp, %rcx
    subq %rax, %rcx
    cmpq ${trap_stacks_size}, %rcx
    jb 1f
    testb $3, {cs}(%rsp)
    jz 1f
    swapgs
    movq %rsp, %rdi
    movq %gs:{kstack_top}, %rsp
    call {from_user}
    jmp return_to_user
1:  movq %rsp, %rdi
    call {from_kernel}
    restore_frame
    iretq

    /* Resume the current environment with every register from its frame. */
    .global return_to_user
return_to_user:
    movq %gs:{cur_tf}, %rsp
    .global resume_frame
resume_frame:
    cmpq $-1, {vector}(%rsp)
    je resume_syscall_frame
    restore_frame
    swapgs
    iretq
    /* The environment last entered by SYSCALL: every register that path
     * saved (see arch/syscall.rs) comes back. */
    .global resume_syscall_frame
resume_syscall_frame:
    movq {r15}(%rsp), %r15
    movq {r14}(%rsp), %r14
    movq {r13}(%rsp), %r13
    movq {r12}(%rsp), %r12
    movq {rbp}(%rsp), %rbp
    movq {rbx}(%rsp), %rbx
    movq {rax}(%rsp), %rax
"#,
    sysret!("rsp"),
    from_user = sym crate::trap::from_user,
    from_kernel = sym crate::trap::from_kernel,
    trap_stacks = sym crate::arch::gdt::TRAP_STACKS,
    trap_stacks_size = const crate::arch::gdt::TRAP_STACKS_SIZE,
    // exc_fast runs with rsp at the frame's `vector` word (the stub pushed
    // it last), the environment's `ExcTarget` right after its frame.
    v_rax = const offset_of!(TrapFrame, rax) as isize - V,
    v_rcx = const offset_of!(TrapFrame, rcx) as isize - V,
    v_vector = const 0,
    v_error = const offset_of!(TrapFrame, error) as isize - V,
    v_rip = const offset_of!(TrapFrame, rip) as isize - V,
    v_cs = const offset_of!(TrapFrame, cs) as isize - V,
    v_rflags = const offset_of!(TrapFrame, rflags) as isize - V,
    v_rsp = const offset_of!(TrapFrame, rsp) as isize - V,
    v_save = const (offset_of!(Env, exc) + offset_of!(ExcTarget, save)) as isize - V,
    v_entry = const (offset_of!(Env, exc) + offset_of!(ExcTarget, entry)) as isize - V,
    v_stack = const (offset_of!(Env, exc) + offset_of!(ExcTarget, stack)) as isize - V,
    page_fault = const abi::exception::vector::PAGE_FAULT
);

/// Where exc_fast's stack pointer sits in the frame.
const V: isize = offset_of!(TrapFrame, vector) as isize;
const _: () = assert!(offset_of!(Env, tf) == 0, "exc_fast reaches the ExcTarget from the frame");
const _: () = assert!(
    offset_of!(TrapFrame, rax) as isize - V < 0 && offset_of!(TrapFrame, rcx) as isize - V < 0,
    "exc_fast parks rax and rcx in frame words below its stack pointer"
);

unsafe extern "C" {
    static trap_stubs: u8;
    static crossing_stubs: u8;
    fn return_to_user() -> !;
}

/// Address of the entry stub for `vector` in the kernel's table.
pub fn stub(vector: usize) -> u64 {
    (&raw const trap_stubs) as u64 + 16 * vector as u64
}

/// Address of the entry stub for `vector` in the crossing's table: the
/// same frame, never the exception fast path.
pub fn crossing_stub(vector: usize) -> u64 {
    (&raw const crossing_stubs) as u64 + 16 * vector as u64
}

/// Leaves the kernel into the current environment (used at boot and when
/// the kernel was idle).
pub fn enter_user() -> ! {
    // SAFETY: `percpu::set_current` has pointed the stubs at a valid frame
    // with user selectors; the kernel stack is abandoned, which is fine
    // because the kernel keeps no state on it between entries.
    unsafe { return_to_user() }
}
