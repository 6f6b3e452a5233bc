//! The table through which the core reaches what lives beside it without
//! naming it: `dev::init` registers the device layer's interrupt, timer
//! and fault hooks here, and `trap.rs` and `run.rs` call them. With
//! nothing registered (no devices) every hook does nothing.

use crate::memory::Memory;
use core::sync::atomic::{AtomicPtr, Ordering};

pub struct Hooks {
    /// First thing in a trap taken in the kernel: the page table the
    /// handler needs (a driver's domain maps little); returns what
    /// [`Hooks::trap_leave`] must restore (0: nothing).
    pub trap_enter: fn() -> u64,
    pub trap_leave: fn(u64),
    /// A processor exception (vector, rip, rsp) in the kernel: whether
    /// it was handled (a driver's, which is then stopped; may not return).
    pub fault: fn(u64, u64, u64) -> bool,
    /// A non-maskable interrupt at `rip`, with the stack at `rsp`, in the
    /// kernel; whether it found interrupts on.
    pub nmi: fn(u64, u64, bool),
    /// A timer tick in the kernel.
    pub tick: fn(),
    /// Timer ticks were counted (the total given), by whoever holds the
    /// kernel state: requests past their deadline fail their drivers.
    pub clock: fn(u64),
    /// An interrupt on a vector: whether it is a device's (then it is
    /// acknowledged and noted for `service`).
    pub note: fn(u64) -> bool,
    /// Whether noted interrupts wait for `service` (the idle loop must
    /// not halt).
    pub pending: fn() -> bool,
    /// Runs what noted interrupts call for, with the memory it may need;
    /// called by whoever holds the kernel state.
    pub service: fn(&mut Memory),
    /// When (TSC) the last device interrupt that ended an idle wait came:
    /// the idle loop's accounting of halted time (`Clock::halted_tsc`).
    pub woke: fn() -> u64,
    /// An environment (by id) is being destroyed: what the device layer
    /// holds for it goes (its packet endpoints and their pins).
    pub released: fn(&mut Memory, u32),
}

static NOTHING: Hooks = Hooks {
    trap_enter: || 0,
    trap_leave: |_| {},
    fault: |_, _, _| false,
    nmi: |_, _, _| {},
    tick: || {},
    clock: |_| {},
    note: |_| false,
    pending: || false,
    service: |_| {},
    woke: || 0,
    released: |_, _| {},
};

static HOOKS: AtomicPtr<Hooks> = AtomicPtr::new(&NOTHING as *const Hooks as *mut Hooks);

/// Registers `h` (once, at boot, before interrupts are on).
pub fn register(h: &'static Hooks) {
    HOOKS.store(h as *const Hooks as *mut Hooks, Ordering::Release);
}

/// The hooks registered (or the empty ones).
#[inline(always)]
pub fn get() -> &'static Hooks {
    // SAFETY: `HOOKS` only ever holds the address of a `&'static Hooks`
    // (`NOTHING` or one passed to `register`), never written through.
    unsafe { &*HOOKS.load(Ordering::Acquire) }
}

/// A trap handler's view of memory (`Hooks::trap_enter`), left when it
/// is dropped.
pub struct TrapView(u64);

impl TrapView {
    pub fn enter() -> TrapView {
        TrapView((get().trap_enter)())
    }
}

impl Drop for TrapView {
    fn drop(&mut self) {
        (get().trap_leave)(self.0)
    }
}
