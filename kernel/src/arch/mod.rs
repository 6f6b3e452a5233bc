//! x86-64 specifics: boot, descriptor tables, entry stubs, timer and clock
//! calibration, FPU.

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
