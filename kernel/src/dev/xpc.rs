//! The crossing into a driver (paper 004 §3.2, XPC). The kernel calls a
//! driver's entry point on the driver's own stack and, when the driver is
//! isolated, in its own page table (`domain`); the kernel's callee-saved
//! registers, stack pointer and page table are saved so that a driver
//! that fails (a fault in its domain, a refused wrapper call, its panic)
//! is left at once: `abort` unwinds straight back to the crossing, which
//! then returns an error. A wrapper the driver calls switches to the
//! kernel's page table for its duration (`KernelView`).
//!
//! The kernel maps only its read-only text and constants global (`mm`),
//! and the domains map those read-only too, so a global entry that
//! survives a page-table switch gives a driver nothing. With PCIDs
//! (`use_pcids`) each domain's translations are tagged with its own PCID
//! and the kernel's and environments' with PCID 0, so a crossing switches
//! page tables without flushing the TLB (CR3 bit 63); a domain's entries
//! are flushed once, on its next entry, after the kernel unmapped
//! something in its region (`Domain::take_stale`). Without PCIDs each
//! switch flushes the non-global entries, as any CR3 load does.

use core::arch::global_asm;
use core::mem::offset_of;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

/// The crossing under way: the kernel's state at its start, restored by
/// `abort`; the stack and page tables it uses; and how many timer ticks
/// it has lasted (the watchdog's count). One CPU, crossings do not nest:
/// one of these is enough. Its fields are atomics because the assembly
/// writes them and the trap handler reads them, in any page table.
#[repr(C)]
pub struct Saved {
    /// rbx, rbp, r12-r15 and rsp.
    regs: [AtomicU64; 7],
    /// The driver's stack top; 0 when no crossing is under way.
    stack_top: AtomicU64,
    /// The domain's page table (0: unisolated) and the kernel's.
    domain: AtomicU64,
    kernel: AtomicU64,
    ticks: AtomicU64,
    /// CR3's no-flush bit when PCIDs are in use, else 0.
    keep: AtomicU64,
    /// The bottom of the driver's stack (its guard page lies below).
    stack_low: AtomicU64,
    /// Kernel code is running for the driver (a wrapper, `KernelView`).
    wrapper: AtomicBool,
    /// The stack pointer the driver called a wrapper with, when it was
    /// not inside its stack (then the crossing was left at once).
    bad_rsp: AtomicU64,
}

static SAVED: Saved = Saved {
    regs: [const { AtomicU64::new(0) }; 7],
    stack_top: AtomicU64::new(0),
    domain: AtomicU64::new(0),
    kernel: AtomicU64::new(0),
    ticks: AtomicU64::new(0),
    keep: AtomicU64::new(0),
    stack_low: AtomicU64::new(0),
    wrapper: AtomicBool::new(false),
    bad_rsp: AtomicU64::new(0),
};

/// Stack a wrapper needs below the driver's stack pointer: a driver that
/// calls with less left is stopped instead of overflowing in the kernel.
const WRAPPER_STACK: u64 = 1024;

const NO_FLUSH: u64 = 1 << 63;
const PCIDE: u64 = 1 << 17;

/// Turns PCIDs on when the processor has them (CPUID.1:ECX bit 17): from
/// then on crossings tag domains and do not flush. Whether it did.
pub fn use_pcids() -> bool {
    let ecx = core::arch::x86_64::__cpuid(1).ecx;
    if ecx & 1 << 17 == 0 {
        return false;
    }
    // SAFETY: the processor has PCIDs, and every CR3 the kernel loads has
    // PCID 0 (bits 11:0 clear), which keeps its meaning: a CR3 load
    // without bit 63 flushes PCID 0's entries as before.
    unsafe {
        core::arch::asm!("mov {t}, cr4", "or {t}, {p}", "mov cr4, {t}", t = out(reg) _, p = in(reg) PCIDE, options(nostack))
    };
    SAVED.keep.store(NO_FLUSH, Relaxed);
    true
}

/// Whether a crossing is under way.
pub fn under_way() -> bool {
    SAVED.stack_top.load(Relaxed) != 0
}

/// The driver's stack: its lowest address and its top.
pub fn stack() -> (u64, u64) {
    (SAVED.stack_low.load(Relaxed), SAVED.stack_top.load(Relaxed))
}

/// Whether kernel code is running for the driver (a wrapper).
pub fn in_wrapper() -> bool {
    SAVED.wrapper.load(Relaxed)
}

/// The stack pointer the driver last called a wrapper with outside its
/// stack, if it did (the crossing was then left).
pub fn bad_rsp() -> Option<u64> {
    Some(SAVED.bad_rsp.load(Relaxed)).filter(|&r| r != 0)
}

/// `bad_rsp`, forgotten.
pub fn take_bad_rsp() -> Option<u64> {
    Some(SAVED.bad_rsp.swap(0, Relaxed)).filter(|&r| r != 0)
}

/// Counts `ticks` timer ticks (one tick, or an NMI's period) inside the
/// crossing under way: how many it has lasted.
pub fn age(ticks: u64) -> u64 {
    SAVED.ticks.fetch_add(ticks, Relaxed) + ticks
}

global_asm!(
    r#"
    .section .text
    .global xpc_enter
    /* xpc_enter(func, a0, a1, a2, saved) -> rax of func. The driver
     * runs with the crossing's IDT, whose every vector has a stack of its
     * own (`arch::idt`). Nothing the driver may have changed is trusted on
     * the way back: not rbx (SAVED is reached by name), not the direction
     * flag. */
xpc_enter:
    movq %rbx, {rbx}(%r8)
    movq %rbp, {rbp}(%r8)
    movq %r12, {r12}(%r8)
    movq %r13, {r13}(%r8)
    movq %r14, {r14}(%r8)
    movq %r15, {r15}(%r8)
    movq %rsp, {rsp}(%r8)
    movq %cr3, %r9
    orq {keep}(%r8), %r9
    movq %r9, {kernel}(%r8)
    movq %r8, %rbx
    movq %rdi, %rax
    movq %rsi, %rdi
    movq %rdx, %rsi
    movq %rcx, %rdx
    lidt {crossing_idt}(%rip)
    movq {stack_top}(%rbx), %rsp
    movq {domain}(%rbx), %r9
    testq %r9, %r9
    jz 1f
    movq %r9, %cr3
1:  xorl %ebp, %ebp
    sti
    callq *%rax
    cli
    cld
    leaq {saved}(%rip), %rbx
    movq {kernel}(%rbx), %r9
    movq %r9, %cr3
    lidt {kernel_idt}(%rip)
    movq {rsp}(%rbx), %rsp
    movq {rbp}(%rbx), %rbp
    movq {r12}(%rbx), %r12
    movq {r13}(%rbx), %r13
    movq {r14}(%rbx), %r14
    movq {r15}(%rbx), %r15
    movq {rbx}(%rbx), %rbx
    retq

    .global xpc_abort
    /* xpc_abort(saved, code, bad_rsp): back out of the crossing saved
     * there; `bad_rsp` is noted once SAVED is writable (the kernel's page
     * table), and no wrapper runs any more. */
xpc_abort:
    cli
    cld
    movq {kernel}(%rdi), %r9
    movq %r9, %cr3
    lidt {kernel_idt}(%rip)
    movq %rdx, {bad_rsp}(%rdi)
    movb $0, {wrapper}(%rdi)
    movq {rbx}(%rdi), %rbx
    movq {rbp}(%rdi), %rbp
    movq {r12}(%rdi), %r12
    movq {r13}(%rdi), %r13
    movq {r14}(%rdi), %r14
    movq {r15}(%rdi), %r15
    movq {rsp}(%rdi), %rsp
    movq %rsi, %rax
    retq
"#,
    rbx = const offset_of!(Saved, regs),
    rbp = const offset_of!(Saved, regs) + 8,
    r12 = const offset_of!(Saved, regs) + 16,
    r13 = const offset_of!(Saved, regs) + 24,
    r14 = const offset_of!(Saved, regs) + 32,
    r15 = const offset_of!(Saved, regs) + 40,
    rsp = const offset_of!(Saved, regs) + 48,
    stack_top = const offset_of!(Saved, stack_top),
    domain = const offset_of!(Saved, domain),
    kernel = const offset_of!(Saved, kernel),
    keep = const offset_of!(Saved, keep),
    bad_rsp = const offset_of!(Saved, bad_rsp),
    wrapper = const offset_of!(Saved, wrapper),
    saved = sym SAVED,
    crossing_idt = sym crate::arch::idtr::CROSSING_IDTR,
    kernel_idt = sym crate::arch::idtr::KERNEL_IDTR,
    options(att_syntax)
);

unsafe extern "C" {
    fn xpc_enter(func: u64, a0: u64, a1: u64, a2: u64, saved: *mut Saved) -> u64;
    fn xpc_abort(saved: *const Saved, code: u64, bad_rsp: u64) -> !;
}

/// Calls the driver function at `func` with up to three arguments, on
/// the stack `stack` (its lowest address and its top) and in the page table `domain` (0: the kernel's;
/// else its frame and PCID), flushing the domain's TLB entries first when
/// `flush`, with interrupts on (so that the watchdog's timer tick reaches a driver
/// that loops); interrupts are off again when it returns.
///
/// # Safety
/// `func` must be an entry point of a loaded driver taking (at most) three
/// integer or pointer arguments, `stack` that driver's stack (its top
/// 16-byte aligned), `domain` 0 or its domain's page table (in which
/// this code and the driver are mapped), interrupts must be off and no
/// crossing under way.
pub unsafe fn enter(func: u64, args: [u64; 3], stack: (u64, u64), domain: u64, flush: bool) -> u64 {
    let keep = if flush || domain == 0 { 0 } else { SAVED.keep.load(Relaxed) };
    SAVED.domain.store(domain | keep, Relaxed);
    SAVED.ticks.store(0, Relaxed);
    SAVED.wrapper.store(false, Relaxed);
    SAVED.stack_low.store(stack.0, Relaxed);
    SAVED.stack_top.store(stack.1, Relaxed);
    // SAFETY: as the caller promised; `SAVED` is static, and the assembly
    // restores every callee-saved register the ABI requires and the page
    // table it found.
    let r = unsafe { xpc_enter(func, args[0], args[1], args[2], &raw const SAVED as *mut Saved) };
    SAVED.stack_top.store(0, Relaxed);
    r
}

/// Ends the blocking of NMIs that an NMI handler left by `abort` never
/// ended with its `iretq`: one pending meanwhile would otherwise wait for
/// the next `iretq`, perhaps the one into user mode, and arrive there on
/// the NMI's stack instead of the environment's frame. Here it arrives in
/// the kernel, outside any crossing, where it is ignored.
pub fn unblock_nmis() {
    // SAFETY: an interrupt return to the next instruction, same privilege,
    // stack and flags (interrupts stay off: they are off in the flags
    // pushed).
    unsafe {
        core::arch::asm!(
            "mov {t}, rsp",
            "push {ss}",
            "push {t}",
            "pushfq",
            "push {cs}",
            "lea {t}, [rip + 2f]",
            "push {t}",
            "iretq",
            "2:",
            t = out(reg) _,
            ss = const crate::arch::gdt::KERNEL_SS as u64,
            cs = const crate::arch::gdt::KERNEL_CS as u64,
        )
    }
}

/// Leaves the crossing under way, which returns `code`.
///
/// # Safety
/// Must be called from inside the crossing (a wrapper the driver called,
/// or a trap it took), whose frames are abandoned; they must own nothing.
pub unsafe fn abort(code: i64) -> ! {
    // SAFETY: as the caller promised: the frames being discarded are the
    // driver's and the wrapper's or trap handler's.
    unsafe { xpc_abort(&SAVED, code as u64, 0) }
}

/// Kernel code run inside a crossing: a wrapper the driver called.
/// Interrupts are off for its duration (the driver runs with them on)
/// and, when `switch` and the driver is isolated, the page table is the
/// kernel's; both come back when it is dropped. Take it first thing:
/// until then only the driver's stack may be written.
pub struct KernelView {
    /// The domain's CR3 to return to (0: none).
    domain: u64,
    /// It marked kernel code running for the driver (`in_wrapper`).
    flagged: bool,
}

impl KernelView {
    pub fn enter(switch: bool) -> Self {
        // SAFETY: interrupts off until the view ends (a wrapper does not
        // nest with the trap handler's view of the same crossing).
        unsafe { core::arch::asm!("cli", options(nomem, nostack)) };
        let rsp: u64;
        // SAFETY: reads the stack pointer only.
        unsafe { core::arch::asm!("mov {}, rsp", out(reg) rsp, options(nomem, nostack)) };
        let (low, top) = stack();
        // Called on a stack that is not the driver's (or with too little
        // of it left): nothing that borrows kernel state runs on it. (The
        // wrappers that stay in the domain, `switch` false, only read: a
        // fault they take on a bad stack is the driver's, and they run on
        // every buffer of every request.)
        if switch && under_way() && !(low + WRAPPER_STACK..top).contains(&rsp) {
            // SAFETY: inside the crossing (it is under way and a wrapper
            // runs only inside one); the frames abandoned hold nothing.
            unsafe { xpc_abort(&SAVED, drvapi::status::IO_ERROR as u64, rsp) }
        }
        let domain = if switch { SAVED.domain.load(Relaxed) | SAVED.keep.load(Relaxed) } else { 0 };
        if domain != 0 {
            // SAFETY: the kernel's page table of this crossing; the kernel
            // image and the driver's region are mapped the same in both.
            unsafe { core::arch::asm!("mov cr3, {}", in(reg) SAVED.kernel.load(Relaxed), options(nostack)) };
        }
        // Only in the kernel's page table (`switch`) is SAVED writable: the
        // wrappers that stay in the domain (`share`, `unshare`) only read
        // kernel data, and a fault there is blamed on the driver.
        if switch {
            SAVED.wrapper.store(true, Relaxed);
        }
        KernelView { domain, flagged: switch }
    }

    /// The kernel unmapped something of the domain's: return to it
    /// flushing its TLB entries.
    pub fn flush_on_return(&mut self) {
        self.domain &= !NO_FLUSH;
    }
}

impl Drop for KernelView {
    fn drop(&mut self) {
        if self.flagged {
            SAVED.wrapper.store(false, Relaxed);
        }
        trap_leave(self.domain);
        // SAFETY: the driver the view was taken from runs with interrupts
        // on.
        unsafe { core::arch::asm!("sti", options(nomem, nostack)) };
    }
}

/// A trap taken in the kernel (`hooks::Hooks::trap_enter`): if a driver
/// was running in its domain, the kernel's page table, and the domain's
/// CR3 to return to; else 0. Interrupts are already off (an interrupt
/// gate), and the trap's `iretq` restores the flags.
pub fn trap_enter() -> u64 {
    let domain = SAVED.domain.load(Relaxed) | SAVED.keep.load(Relaxed);
    let cr3: u64;
    // SAFETY: reads the page-table register only.
    unsafe { core::arch::asm!("mov {}, cr3", out(reg) cr3, options(nomem, nostack)) };
    let frame = crate::pagetable::FRAME_MASK;
    if !(under_way() && domain != 0 && cr3 & frame == domain & frame) {
        return 0;
    }
    // SAFETY: the kernel's page table of this crossing; the kernel image
    // and the driver's region are mapped the same in both.
    unsafe { core::arch::asm!("mov cr3, {}", in(reg) SAVED.kernel.load(Relaxed), options(nostack)) };
    domain
}

/// Back to the domain's page table `domain` (and PCID) from `trap_enter`
/// or a wrapper's view (0: nothing to do); the kernel's global entries
/// are read-only.
pub fn trap_leave(domain: u64) {
    if domain != 0 {
        // SAFETY: the page table (and PCID) the crossing entered.
        unsafe { core::arch::asm!("mov cr3, {}", in(reg) domain, options(nostack)) };
    }
}
