//! x86-64 specifics: boot, descriptor tables, entry stubs, timer and clock
//! calibration, FPU.

/// Leaves the kernel by SYSRETQ into the environment whose frame `rcx`
/// points to, restoring the registers a system call preserves (the
/// callee-saved ones must already hold the frame's values); rcx and r11
/// carry rip and rflags, as the ABI allows. Assembly text for the two exits
/// that use it (the system-call stub and `resume_frame`), whose operands
/// must name the frame offsets.
macro_rules! sysret_from_rcx {
    () => {
        r#"
    movq {rflags}(%rcx), %r11
    movq {rdi}(%rcx), %rdi
    movq {rsi}(%rcx), %rsi
    movq {rdx}(%rcx), %rdx
    movq {r8}(%rcx), %r8
    movq {r9}(%rcx), %r9
    movq {r10}(%rcx), %r10
    movq {rsp}(%rcx), %rsp
    movq {rip}(%rcx), %rcx
    swapgs
    sysretq
"#
    };
}

pub mod apic;
pub mod boot;
pub mod clock;
pub mod cpu;
pub mod fpu;
pub mod gdt;
pub mod idt;
pub mod pct;
pub mod percpu;
pub mod serial;
pub mod syscall;
pub mod trap;
