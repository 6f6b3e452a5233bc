//! Interrupt and exception entry. Every vector has a small stub that pushes
//! a uniform frame. From user mode the CPU pushes onto TSS.rsp0, which is
//! the top of the current environment's saved-register area, so the frame
//! *is* the environment's saved state: no copying on entry or switch.

use core::arch::global_asm;

/// An environment's saved user registers, in the order the stubs push them.
/// Offsets are used by assembly: keep them in sync.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct TrapFrame {
    pub r15: u64,
    pub r14: u64,
    pub r13: u64,
    pub r12: u64,
    pub r11: u64,
    pub r10: u64,
    pub r9: u64,
    pub r8: u64,
    pub rbp: u64,
    pub rdi: u64,
    pub rsi: u64,
    pub rdx: u64,
    pub rcx: u64,
    pub rbx: u64,
    pub rax: u64,
    pub vector: u64,
    pub error: u64,
    pub rip: u64,
    pub cs: u64,
    pub rflags: u64,
    pub rsp: u64,
    pub ss: u64,
}

const _: () = assert!(core::mem::size_of::<TrapFrame>() == 176);

// Vectors for which the CPU pushes an error code.
global_asm!(
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

    .section .text
    .balign 16
    .global trap_stubs
trap_stubs:
    .set vec, 0
    .rept 256
    .balign 16
    .if (vec == 8) || (vec == 10) || (vec == 11) || (vec == 12) || (vec == 13) || (vec == 14) || (vec == 17) || (vec == 21) || (vec == 29) || (vec == 30)
    .else
    pushq $0
    .endif
    pushq $vec
    .if (vec < 32) && (vec != 2) && (vec != 8) && (vec != 18)
    jmp exc_fast
    .else
    jmp trap_common
    .endif
    .set vec, vec + 1
    .endr

    /* Exception delivery (paper 001 §4.4), Aegis-style: only the registers
     * used here (rax, rcx) and the interrupt frame are written into the
     * environment's save area; every other register reaches the handler
     * live. Anything unusual (kernel mode, no handler, handler busy) takes
     * the general path, which ends the environment. rsp = tf + 120 here;
     * the environment's ExcTarget follows its TrapFrame (tf + 176). */
exc_fast:
    testb $3, 24(%rsp)
    jz trap_common
    swapgs
    movq %rax, -8(%rsp)
    movq %rcx, -24(%rsp)
    movq 56(%rsp), %rax
    testq %rax, %rax
    jz 1f
    cmpq $0, (%rax)
    jne 1f
    movq $1, (%rax)
    movq 0(%rsp), %rcx
    movq %rcx, 8(%rax)
    movq 8(%rsp), %rcx
    movq %rcx, 16(%rax)
    xorl %ecx, %ecx
    cmpq $14, 0(%rsp)
    jne 2f
    movq %cr2, %rcx
2:  movq %rcx, 24(%rax)
    movq -8(%rsp), %rcx
    movq %rcx, 32(%rax)
    movq -24(%rsp), %rcx
    movq %rcx, 48(%rax)
    movq 16(%rsp), %rcx
    movq %rcx, 160(%rax)
    movq 32(%rsp), %rcx
    movq %rcx, 168(%rax)
    movq 40(%rsp), %rcx
    movq %rcx, 88(%rax)
    movq 64(%rsp), %rcx
    movq %rcx, 16(%rsp)
    movq 72(%rsp), %rcx
    movq %rcx, 40(%rsp)
    andq $~0x500, 32(%rsp)
    swapgs
    addq $16, %rsp
    iretq
1:  movq -8(%rsp), %rax
    movq -24(%rsp), %rcx
    swapgs

trap_common:
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
    testb $3, 144(%rsp)
    jz 1f
    swapgs
    movq %rsp, %rdi
    movq %gs:0, %rsp
    call {from_user}
    jmp return_to_user
1:  movq %rsp, %rdi
    call {from_kernel}
    restore_frame
    iretq

    /* Resume the current environment with every register from its frame. */
    .global return_to_user
return_to_user:
    movq %gs:16, %rsp
    .global resume_frame
resume_frame:
    cmpq $-1, 120(%rsp)
    je 3f
    restore_frame
    swapgs
    iretq
    /* The environment last entered by SYSCALL: every register that path
     * saved (see arch/syscall.rs) comes back; rcx and r11 carry rip and
     * rflags for SYSRETQ, as the ABI allows. */
3:  movq 0(%rsp), %r15
    movq 8(%rsp), %r14
    movq 16(%rsp), %r13
    movq 24(%rsp), %r12
    movq 40(%rsp), %r10
    movq 48(%rsp), %r9
    movq 56(%rsp), %r8
    movq 64(%rsp), %rbp
    movq 72(%rsp), %rdi
    movq 80(%rsp), %rsi
    movq 88(%rsp), %rdx
    movq 104(%rsp), %rbx
    movq 112(%rsp), %rax
    movq 136(%rsp), %rcx
    movq 152(%rsp), %r11
    movq 160(%rsp), %rsp
    swapgs
    sysretq
    "#,
    from_user = sym crate::trap::from_user,
    from_kernel = sym crate::trap::from_kernel,
    options(att_syntax)
);

unsafe extern "C" {
    static trap_stubs: u8;
    fn return_to_user() -> !;
}

/// Address of the entry stub for `vector`.
pub fn stub(vector: usize) -> u64 {
    (&raw const trap_stubs) as u64 + 16 * vector as u64
}

/// Leaves the kernel into the current environment (used at boot and when
/// the kernel was idle).
pub fn enter_user() -> ! {
    // SAFETY: `percpu::set_current` has pointed the stubs at a valid frame
    // with user selectors; the kernel stack is abandoned, which is fine
    // because the kernel keeps no state on it between entries.
    unsafe { return_to_user() }
}
