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
    jmp trap_common
    .set vec, vec + 1
    .endr

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
    iretq

    /* Resume the current environment with every register from its frame. */
    .global return_to_user
return_to_user:
    movq $0, %gs:32
    movq %gs:16, %rsp
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
    swapgs
    iretq
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
