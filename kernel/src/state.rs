//! The kernel's state, in one place.

use crate::env::{Env, Slot};
use crate::frames::Frames;
use abi::tables::{EnvInfo, KernelInfo};
use core::mem::MaybeUninit;

pub struct Kernel {
    pub frames: Frames<'static>,
    /// The capability table (derivation tree of every capability).
    pub caps: &'static mut crate::cap::Caps,
    /// Each frame's optional share guard (see `creds`).
    pub frame_share: &'static mut [crate::cap::CapRef],
    pub envs: &'static mut [Env; abi::tables::ENV_SLOTS],
    /// The exposed environment table (read-only to user space).
    pub env_info: &'static mut [EnvInfo; abi::tables::ENV_SLOTS],
    /// The exposed kernel information page.
    pub kinfo: &'static mut KernelInfo,
    /// Frame of the kernel's PML4 (the template for shared slots).
    pub kernel_pml4: crate::frames::Frame,
    /// Slot of the running environment.
    pub current: Slot,
    /// Slot of the first environment.
    pub root: Slot,
    /// The exposed time-slice vector and clock.
    pub slices: &'static mut abi::tables::SliceVector,
    pub clock: &'static mut abi::tables::Clock,
    /// Environment slot owning each slice, and for each position the next
    /// owned position after it (`NO_SLICE`: none). Both have 256 entries so
    /// that a `u8` position indexes them without a bounds check on the yield
    /// path; entries past `SLICES` stay free.
    pub slice_env: crate::sched::SliceOwners,
    pub next_used: [u8; 256],
    /// The slot told its slice is over, which must give up the CPU before
    /// the next tick, and its `switched_out` count then.
    pub grace_env: Option<Slot>,
    pub grace_mark: u32,
    /// Where the search for an environment to run in spare time (see
    /// `Kernel::spare`) starts next, so such environments take turns.
    pub spare_next: usize,
    /// Where the search for a free environment slot starts: slots are
    /// taken in turn, so an id (and a library's pid) is not reused soon.
    pub slot_next: usize,
    /// Installed wakeup predicates, and their compilations.
    pub predicates: &'static mut [crate::predicate::Predicate; crate::predicate::MAX_PREDICATES],
    pub compiled: alloc::vec::Vec<crate::predicate::Compiled>,
    /// Who is told, with which interrupt bits, that console input is
    /// waiting (`console_notify`; id 0: nobody).
    pub console_notify: (u32, u64),
    /// Outstanding requests to give frames back.
    pub reclaims: [crate::revoke::Reclaim; crate::revoke::MAX_REQUESTS],
}

/// Reached by name from `pct_fast`, which reads it without entering (it
/// is assembly that runs instead of any handler); everything else goes
/// through [`enter`].
pub static mut KERNEL: MaybeUninit<Kernel> = MaybeUninit::uninit();

pub fn install(k: Kernel) {
    // SAFETY: called once at boot before any kernel entry can happen.
    unsafe { (&raw mut KERNEL).cast::<Kernel>().write(k) };
}

/// Runs `f` with the kernel state: the one way to it. Every kernel entry
/// from user mode (the system-call entries, a trap from user mode, the
/// reflection of a foreign system call) and boot takes it once and passes
/// it down.
///
/// Re-entry cannot happen, by construction rather than by a test on the
/// measured paths: the CPU reaches those entries only from ring 3 (SYSCALL
/// from user code; the trap stub sends traps taken in ring 0 to
/// `trap::from_kernel`, which never enters), and ring 3 runs only after the
/// entry before it has returned. Kernel code cannot call `enter` again
/// without an `unsafe` block of its own, which review sees.
///
/// # Safety
/// Call only at the start of a kernel entry from user mode, or at boot
/// before user mode exists — never while another `enter` is running.
#[inline(always)]
pub unsafe fn enter<R>(f: impl FnOnce(&mut Kernel) -> R) -> R {
    // SAFETY: `KERNEL` was initialised by `install` before any entry could
    // run, and the caller guarantees this borrow is the only one.
    f(unsafe { &mut *(&raw mut KERNEL).cast::<Kernel>() })
}
