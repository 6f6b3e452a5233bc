//! Thin wrappers over privileged instructions.

use core::arch::asm;

pub fn outb(port: u16, value: u8) {
    // SAFETY: port I/O has no memory effects; callers pass ports of devices
    // the kernel owns (serial, debug-exit, PIC).
    unsafe { asm!("out dx, al", in("dx") port, in("al") value, options(nomem, nostack)) }
}

pub fn inb(port: u16) -> u8 {
    let v: u8;
    // SAFETY: as for `outb`.
    unsafe { asm!("in al, dx", out("al") v, in("dx") port, options(nomem, nostack)) }
    v
}

pub fn rdmsr(msr: u32) -> u64 {
    let (lo, hi): (u32, u32);
    // SAFETY: the kernel reads only architectural MSRs that exist on x86-64.
    unsafe { asm!("rdmsr", in("ecx") msr, out("eax") lo, out("edx") hi, options(nomem, nostack)) }
    (hi as u64) << 32 | lo as u64
}

/// # Safety
/// Writing an MSR can change how the CPU executes; the caller must know the
/// value is right for `msr`.
pub unsafe fn wrmsr(msr: u32, value: u64) {
    // SAFETY: the caller guarantees the value (function contract).
    unsafe {
        asm!("wrmsr", in("ecx") msr, in("eax") value as u32, in("edx") (value >> 32) as u32,
             options(nomem, nostack))
    }
}

pub fn cr2() -> u64 {
    let v: u64;
    // SAFETY: reading CR2 has no side effects.
    unsafe { asm!("mov {}, cr2", out(reg) v, options(nomem, nostack)) }
    v
}

/// # Safety
/// `pml4` must be the physical address of a page table that maps the
/// kernel exactly as the current one does.
pub unsafe fn set_cr3(pml4: u64) {
    // SAFETY: the caller guarantees the kernel stays mapped (contract).
    unsafe { asm!("mov cr3, {}", in(reg) pml4, options(nostack)) }
}

/// Drops every TLB entry of the current address space (not the kernel's
/// global ones): a reload of CR3 with the same tables.
pub fn flush_tlb() {
    let cr3: u64;
    // SAFETY: CR3 is written back with the value it holds: the same tables,
    // which map the kernel.
    unsafe {
        asm!("mov {}, cr3", out(reg) cr3, options(nomem, nostack));
        set_cr3(cr3);
    }
}

pub fn invlpg(va: u64) {
    // SAFETY: dropping a TLB entry is always safe.
    unsafe { asm!("invlpg [{}]", in(reg) va, options(nostack)) }
}

/// Waits for an interrupt with interrupts enabled, then disables them again.
pub fn idle() {
    // SAFETY: the kernel runs with interrupts off; this window lets one
    // interrupt in, whose handler (`trap::from_kernel`) returns here.
    unsafe { asm!("sti", "hlt", "cli", options(nomem, nostack)) }
}

/// Writes `code` to QEMU's isa-debug-exit port; QEMU exits with
/// `(code << 1) | 1`. Never returns on QEMU; halts elsewhere.
pub fn qemu_exit(code: u8) -> ! {
    outb(0xf4, code);
    loop {
        // SAFETY: halting with interrupts off stops this CPU for good.
        unsafe { asm!("cli", "hlt", options(nomem, nostack)) }
    }
}

/// The frame-pointer chain, for backtraces.
pub fn frame_pointer() -> u64 {
    let v: u64;
    // SAFETY: reading rbp has no side effects.
    unsafe { asm!("mov {}, rbp", out(reg) v, options(nomem, nostack)) }
    v
}
