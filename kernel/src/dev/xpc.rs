//! The crossing into a driver (paper 004 §3.2, XPC): the kernel calls a
//! driver's entry point on the driver's own stack, with the kernel's
//! callee-saved registers and stack pointer saved so that a driver that
//! fails (its panic, a refused wrapper call) is left at once: `abort`
//! unwinds straight back to the crossing, which then returns an error.
//! Isolation (step 6 in docs/drivers.md) adds the page-table switch here
//! and in the wrappers; the driver does not change.

use core::arch::global_asm;

/// The kernel's state at a crossing, restored by `abort`.
#[repr(C)]
pub struct Saved {
    regs: [u64; 7],
}

impl Saved {
    pub const ZERO: Saved = Saved { regs: [0; 7] };
}

global_asm!(
    r#"
    .section .text
    .global xpc_enter
    /* xpc_enter(func, a0, a1, a2, saved, stack_top) -> rax of func */
xpc_enter:
    movq %rbx, 0(%r8)
    movq %rbp, 8(%r8)
    movq %r12, 16(%r8)
    movq %r13, 24(%r8)
    movq %r14, 32(%r8)
    movq %r15, 40(%r8)
    movq %rsp, 48(%r8)
    movq %r8, %rbx
    movq %rdi, %rax
    movq %rsi, %rdi
    movq %rdx, %rsi
    movq %rcx, %rdx
    movq %r9, %rsp
    xorl %ebp, %ebp
    callq *%rax
    movq 48(%rbx), %rsp
    movq 8(%rbx), %rbp
    movq 0(%rbx), %rbx
    retq

    .global xpc_abort
    /* xpc_abort(saved, code): back out of the crossing saved there. */
xpc_abort:
    movq 0(%rdi), %rbx
    movq 8(%rdi), %rbp
    movq 16(%rdi), %r12
    movq 24(%rdi), %r13
    movq 32(%rdi), %r14
    movq 40(%rdi), %r15
    movq 48(%rdi), %rsp
    movq %rsi, %rax
    retq
"#,
    options(att_syntax)
);

unsafe extern "C" {
    fn xpc_enter(func: u64, a0: u64, a1: u64, a2: u64, saved: *mut Saved, stack_top: u64) -> u64;
    fn xpc_abort(saved: *const Saved, code: u64) -> !;
}

/// Calls the driver function at `func` with up to three arguments on the
/// stack ending at `stack_top`.
///
/// # Safety
/// `func` must be an entry point of a loaded driver taking (at most) three
/// integer or pointer arguments, `stack_top` the 16-byte-aligned top of
/// that driver's stack, and interrupts must be off.
pub unsafe fn enter(func: u64, args: [u64; 3], saved: &mut Saved, stack_top: u64) -> u64 {
    // SAFETY: as the caller promised; `saved` outlives the call, and the
    // assembly restores every callee-saved register the ABI requires.
    unsafe { xpc_enter(func, args[0], args[1], args[2], saved, stack_top) }
}

/// Leaves the crossing saved in `saved`, which returns `code`.
///
/// # Safety
/// Must be called from inside the crossing that filled `saved` (a wrapper
/// the driver called), on the driver's stack, which is abandoned.
pub unsafe fn abort(saved: &Saved, code: i64) -> ! {
    // SAFETY: as the caller promised: the frames being discarded are the
    // driver's and the wrapper's, none of which own anything.
    unsafe { xpc_abort(saved, code as u64) }
}
