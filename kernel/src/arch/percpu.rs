//! The per-CPU block the entry stubs reach through `gs` (Veneer runs on one
//! CPU; the block is still addressed through `gs` so that SYSCALL, which
//! leaves no free register, can find the kernel stack).

use super::frame::TrapFrame;

/// The assembly stubs name each field by `offset_of!`.
#[repr(C)]
pub struct PerCpu {
    /// Top of the kernel stack.
    pub kstack_top: u64,
    /// Scratch for the user `rsp` during SYSCALL entry.
    pub user_rsp: u64,
    /// The current environment's saved registers.
    pub cur_tf: *mut TrapFrame,
    /// The frame of the environment that made the current system call;
    /// if it is no longer `cur_tf` on return, the call switched environments.
    pub caller_tf: *mut TrapFrame,
    /// Where `pct_fast` resumes the target (it has no free registers).
    pub pct_rip: u64,
    pub pct_rsp: u64,
    pub pct_rflags: u64,
    /// Timer ticks taken while the kernel idled, not yet accounted.
    pub idle_ticks: u64,
}

pub static mut PERCPU: PerCpu = PerCpu {
    kstack_top: 0,
    user_rsp: 0,
    cur_tf: core::ptr::null_mut(),
    caller_tf: core::ptr::null_mut(),
    pct_rip: 0,
    pct_rsp: 0,
    pct_rflags: 0,
    idle_ticks: 0,
};

const GS_BASE: u32 = 0xC000_0101;
const KERNEL_GS_BASE: u32 = 0xC000_0102;

pub fn init(kstack_top: u64) {
    // SAFETY: single CPU, called once at boot before any entry stub runs.
    unsafe {
        PERCPU.kstack_top = kstack_top;
        super::cpu::wrmsr(GS_BASE, &raw const PERCPU as u64);
        super::cpu::wrmsr(KERNEL_GS_BASE, 0);
    }
}

/// Points the entry stubs (and the TSS: the interrupts' entry stack is
/// the frame's top) at `tf` as the current frame.
pub fn set_current(tf: *mut TrapFrame) {
    // SAFETY: single CPU with interrupts off in the kernel: nothing else
    // reads the field until we return to user mode.
    unsafe { PERCPU.cur_tf = tf };
    super::gdt::set_kernel_entry_stack(tf as u64 + core::mem::size_of::<TrapFrame>() as u64);
}

/// Counts a timer tick that arrived while the kernel idled.
pub fn count_idle_tick() {
    // SAFETY: one CPU; the idle loop reads the field only with interrupts
    // off, after this handler returned.
    unsafe { PERCPU.idle_ticks += 1 };
}

/// The ticks counted while idling since `take_idle_ticks` last took them.
pub fn idle_ticks() -> u64 {
    // SAFETY: called with interrupts off, so `count_idle_tick` cannot run.
    unsafe { PERCPU.idle_ticks }
}

/// The ticks counted while idling since the last call.
pub fn take_idle_ticks() -> u64 {
    // SAFETY: called with interrupts off, so `count_idle_tick` cannot run.
    unsafe { (&raw mut PERCPU.idle_ticks).replace(0) }
}
