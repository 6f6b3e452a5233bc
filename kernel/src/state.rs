//! The kernel's state, in one place.

use crate::env::Env;
use crate::frames::Frames;
use abi::tables::{EnvInfo, KernelInfo};
use core::mem::MaybeUninit;

pub struct Kernel {
    pub frames: Frames<'static>,
    pub envs: &'static mut [Env],
    /// The exposed environment table (read-only to user space).
    pub env_info: &'static mut [EnvInfo],
    /// The exposed kernel information page.
    pub kinfo: &'static mut KernelInfo,
    /// Frame of the kernel's PML4 (the template for shared slots).
    pub kernel_pml4: u64,
    /// Slot of the running environment.
    pub current: usize,
    /// Slot of the first environment.
    pub root: usize,
    /// Head of the run queue.
    pub run_head: u16,
}

static mut KERNEL: MaybeUninit<Kernel> = MaybeUninit::uninit();

pub fn install(k: Kernel) {
    // SAFETY: called once at boot before any kernel entry can happen.
    unsafe { (&raw mut KERNEL).cast::<Kernel>().write(k) };
}

/// The kernel state. Each kernel entry (system call, trap) calls this once
/// and passes the reference down: the kernel runs on one CPU with
/// interrupts disabled, so an entry has exclusive access until it returns.
pub fn kernel() -> &'static mut Kernel {
    // SAFETY: initialised by `install` before interrupts or user mode are
    // enabled; exclusive per entry as explained above.
    unsafe { &mut *(&raw mut KERNEL).cast::<Kernel>() }
}
