//! The kernel's state: one value made of parts, each owned by its module
//! with private fields (`docs/kernel.md`, "The kernel state in parts").
//! Code that needs one part is handed that part; code that needs several
//! (a system call, a trap, the scheduler's wakeups) takes the whole
//! [`Kernel`], reached only through [`enter`].

use crate::console::Console;
use crate::env::{Envs, Slot, State};
use crate::frames::Frame;
use crate::memory::Memory;
use crate::predicate::Predicates;
use crate::revoke::Reclaims;
use crate::sched::Sched;
use abi::Error;
use core::mem::MaybeUninit;

pub struct Kernel {
    /// Frames, capabilities, share guards, the kernel's own tables.
    pub mem: Memory,
    /// The environment table and its exposed copy.
    pub envs: Envs,
    /// Slices, the running environment, the clock.
    pub sched: Sched,
    /// Installed wakeup predicates and their compilations.
    pub preds: Predicates,
    /// Outstanding requests to give frames back.
    pub reclaims: Reclaims,
    /// Who hears that console input waits.
    pub console: Console,
    /// XN: the disk's blocks, their templates, cache and identities.
    pub xn: crate::xn::Xn,
    /// The user and groups each environment acts for.
    pub idents: crate::ident::Idents,
    /// How long each environment has held a library lock (`section.rs`).
    pub sections: crate::section::Sections,
    /// Capabilities that name frames (`ranges.rs`).
    pub ranges: crate::ranges::Ranges,
}

/// Offsets of what `pct_fast` (assembly, which runs instead of any
/// handler and never enters) reads and writes in [`KERNEL`].
pub mod offsets {
    use super::Kernel;
    use core::mem::offset_of;
    /// The running slot (`u16`).
    pub const CURRENT: usize = offset_of!(Kernel, sched) + crate::sched::offsets::CURRENT;
    /// The pointer to the exposed environment table.
    pub const ENV_INFO: usize = offset_of!(Kernel, envs) + crate::env::offsets::INFO;
}

/// Reached by name from `pct_fast` (see [`offsets`]); everything else goes
/// through [`enter`].
pub static mut KERNEL: MaybeUninit<Kernel> = MaybeUninit::uninit();

static INSTALLED: core::sync::atomic::AtomicBool = core::sync::atomic::AtomicBool::new(false);

/// Installs the state built at boot (once: a second call is a kernel bug).
pub fn install(k: Kernel) {
    assert!(!INSTALLED.swap(true, core::sync::atomic::Ordering::AcqRel), "kernel state installed twice");
    // SAFETY: once (checked above), at boot, before any kernel entry.
    unsafe { (&raw mut KERNEL).cast::<Kernel>().write(k) };
}

/// Runs `f` with the kernel state: the one way to it. Every kernel entry
/// from user mode (the system-call entries, a trap from user mode, the
/// reflection of a foreign system call) and boot takes it once and passes
/// it, or the parts a callee needs, down.
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

/// What most handlers ask of several parts at once, said once.
impl Kernel {
    /// The running environment's slot.
    #[inline(always)]
    pub fn current(&self) -> Slot {
        self.sched.current()
    }

    /// The first environment's slot.
    pub fn root(&self) -> Slot {
        self.sched.root()
    }

    /// The running environment's page table.
    pub fn pml4(&self) -> Frame {
        self.envs[self.current()].pml4
    }

    /// The live environment with id `id` (0 means the caller).
    pub fn env_slot(&self, id: u64) -> Result<Slot, Error> {
        if id == abi::syscall::ENV_SELF {
            return Ok(self.current());
        }
        self.envs.live(id)
    }

    /// `Envs::set_state`, published with the frame count.
    pub fn set_state(&mut self, s: Slot, state: State) {
        self.envs.set_state(s, state, &self.mem.frames);
    }

    pub fn set_waiting(&mut self, s: Slot, on: Slot) {
        self.envs.set_waiting(s, on, &self.mem.frames);
    }

    pub fn set_held_wait(&mut self, s: Slot, on: Option<Slot>) {
        self.envs.set_held_wait(s, on, &self.mem.frames);
    }

    pub fn set_published(&mut self, s: Slot, word: u64) {
        self.envs.set_published(s, word, &self.mem.frames);
    }

    /// Copies slot `s` into the exposed environment table.
    pub fn publish(&mut self, s: Slot) {
        self.envs.publish(s, &self.mem.frames);
    }

    pub fn next_in_subtree(&self, top: Slot, s: Slot) -> Option<Slot> {
        self.envs.next_in_subtree(top, s)
    }
}
