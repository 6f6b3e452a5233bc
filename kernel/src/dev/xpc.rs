//! The crossing into a driver (paper 004 §3.2, XPC). The kernel calls a
//! driver's entry point on the driver's own stack and, when the driver is
//! isolated, in its own page table (`domain`); the kernel's callee-saved
//! registers, stack pointer and page table are saved so that a driver
//! that fails (a fault in its domain, a refused wrapper call, its panic)
//! is left at once: `abort` unwinds straight back to the crossing, which
//! then returns an error. A wrapper the driver calls switches to the
//! kernel's page table for its duration (`KernelView`).
//!
//! The kernel maps itself with global pages, which survive a page-table
//! switch: entering a domain therefore also flushes global TLB entries
//! (toggling CR4.PGE), or a stale writable kernel entry would let the
//! driver write through it.

use core::arch::global_asm;

/// The kernel's state at a crossing, restored by `abort`; and the stack
/// and page tables of the crossing.
#[repr(C)]
pub struct Saved {
    regs: [u64; 7],
    pub stack_top: u64,
    /// The domain's page table (0: unisolated) and the kernel's.
    pub domain: u64,
    kernel: u64,
}

impl Saved {
    pub const ZERO: Saved = Saved { regs: [0; 7], stack_top: 0, domain: 0, kernel: 0 };
}

global_asm!(
    r#"
    .section .text
    .global xpc_enter
    /* xpc_enter(func, a0, a1, a2, saved) -> rax of func */
xpc_enter:
    movq %rbx, 0(%r8)
    movq %rbp, 8(%r8)
    movq %r12, 16(%r8)
    movq %r13, 24(%r8)
    movq %r14, 32(%r8)
    movq %r15, 40(%r8)
    movq %rsp, 48(%r8)
    movq %cr3, %r9
    movq %r9, 72(%r8)
    movq %r8, %rbx
    movq %rdi, %rax
    movq %rsi, %rdi
    movq %rdx, %rsi
    movq %rcx, %rdx
    movq 56(%rbx), %rsp
    movq 64(%rbx), %r9
    testq %r9, %r9
    jz 1f
    movq %r9, %cr3
    movq %cr4, %r9
    xorq $0x80, %r9
    movq %r9, %cr4
    xorq $0x80, %r9
    movq %r9, %cr4
1:  xorl %ebp, %ebp
    callq *%rax
    movq 72(%rbx), %r9
    movq %r9, %cr3
    movq 48(%rbx), %rsp
    movq 8(%rbx), %rbp
    movq 0(%rbx), %rbx
    retq

    .global xpc_abort
    /* xpc_abort(saved, code): back out of the crossing saved there. */
xpc_abort:
    movq 72(%rdi), %r9
    movq %r9, %cr3
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
    fn xpc_enter(func: u64, a0: u64, a1: u64, a2: u64, saved: *mut Saved) -> u64;
    fn xpc_abort(saved: *const Saved, code: u64) -> !;
}

/// Calls the driver function at `func` with up to three arguments, on the
/// stack and in the page table `saved` names.
///
/// # Safety
/// `func` must be an entry point of a loaded driver taking (at most) three
/// integer or pointer arguments, `saved.stack_top` the 16-byte-aligned top
/// of that driver's stack, `saved.domain` 0 or its domain's page table (in
/// which this code and the driver are mapped), and interrupts must be off.
pub unsafe fn enter(func: u64, args: [u64; 3], saved: &mut Saved) -> u64 {
    // SAFETY: as the caller promised; `saved` outlives the call, and the
    // assembly restores every callee-saved register the ABI requires and
    // the page table it found.
    unsafe { xpc_enter(func, args[0], args[1], args[2], saved) }
}

/// Leaves the crossing saved in `saved`, which returns `code`.
///
/// # Safety
/// Must be called from inside the crossing that filled `saved` (a wrapper
/// the driver called, or a fault it took), whose frames are abandoned.
pub unsafe fn abort(saved: &Saved, code: i64) -> ! {
    // SAFETY: as the caller promised: the frames being discarded are the
    // driver's and the wrapper's, none of which own anything.
    unsafe { xpc_abort(saved, code as u64) }
}

/// The kernel's page table while a wrapper runs for an isolated driver;
/// the domain's again when it returns. Take it first thing in a wrapper:
/// until then only the driver's stack may be written.
pub struct KernelView<'a>(&'a Saved);

impl<'a> KernelView<'a> {
    pub fn enter(saved: &'a Saved) -> Self {
        if saved.domain != 0 {
            // SAFETY: the kernel's page table of this crossing; the kernel
            // image and the driver's region are mapped the same in both.
            unsafe { core::arch::asm!("mov cr3, {}", in(reg) saved.kernel, options(nostack)) };
        }
        KernelView(saved)
    }
}

impl Drop for KernelView<'_> {
    fn drop(&mut self) {
        if self.0.domain != 0 {
            // SAFETY: back to the domain's page table, as at the crossing,
            // flushing the global kernel entries the wrapper brought in.
            unsafe {
                core::arch::asm!(
                    "mov cr3, {d}", "mov {t}, cr4", "xor {t}, 0x80", "mov cr4, {t}", "xor {t}, 0x80", "mov cr4, {t}",
                    d = in(reg) self.0.domain, t = out(reg) _, options(nostack)
                )
            };
        }
    }
}

/// Switches to the kernel's page table after a fault inside a crossing.
pub fn leave_domain(saved: &Saved) {
    core::mem::forget(KernelView::enter(saved));
}
