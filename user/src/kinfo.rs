//! Reading the kernel tables exposed read-only in every address space.

use abi::layout::{ENV_TABLE_VA, FRAME_TABLE_VA, KINFO_VA};
use abi::tables::{EnvInfo, FrameInfo, KernelInfo, ENV_SLOTS};

pub fn kernel() -> &'static KernelInfo {
    // SAFETY: the kernel maps this page read-only in every environment for
    // as long as it runs; fields change only between our instructions
    // (single CPU), and are read through volatile-enough shared references.
    unsafe { &*(KINFO_VA as *const KernelInfo) }
}

/// A fresh read of a kernel-updated field.
pub fn free_frames() -> u64 {
    // SAFETY: as in `kernel`; volatile because the kernel changes it
    // behind the compiler's back.
    unsafe { core::ptr::read_volatile(&raw const (*(KINFO_VA as *const KernelInfo)).free_frames) }
}

pub fn ticks() -> u64 {
    // SAFETY: as in `free_frames`.
    unsafe { core::ptr::read_volatile(&raw const (*(KINFO_VA as *const KernelInfo)).ticks) }
}

/// One environment-table slot, read afresh.
pub fn env(slot: usize) -> EnvInfo {
    assert!(slot < ENV_SLOTS);
    // SAFETY: the table has ENV_SLOTS entries mapped read-only.
    unsafe { core::ptr::read_volatile((ENV_TABLE_VA as *const EnvInfo).add(slot)) }
}

/// The interrupt bits queued for the environment in `slot` (one word, for
/// a check on every call).
pub fn interrupts(slot: usize) -> u64 {
    assert!(slot < ENV_SLOTS);
    // SAFETY: as in `env`.
    unsafe { core::ptr::read_volatile(&raw const (*(ENV_TABLE_VA as *const EnvInfo).add(slot)).interrupts) }
}

/// The state of the environment in `slot` (one word, for a scan of the
/// whole table).
pub fn env_state(slot: usize) -> u32 {
    assert!(slot < ENV_SLOTS);
    // SAFETY: as in `env`.
    unsafe { core::ptr::read_volatile(&raw const (*(ENV_TABLE_VA as *const EnvInfo).add(slot)).state) }
}

/// The entries of the slots in use, each read afresh (its state may
/// have changed since the scan saw it in use). A free slot costs one
/// word: reading all 4,096 entries whole, 38 instructions each, was a
/// fifth of `shell_build` while it read `/proc/stat` and `/proc/loadavg`.
pub fn envs() -> impl Iterator<Item = EnvInfo> {
    (0..ENV_SLOTS).filter(|&s| env_state(s) != abi::tables::env_state::FREE).map(env)
}

/// The environment-table entry of `id`, if it is alive.
pub fn env_by_id(id: u64) -> Option<EnvInfo> {
    let e = env(abi::tables::env_slot(id as u32));
    (e.id as u64 == id).then_some(e)
}

/// One frame-table record, read afresh.
pub fn frame(n: u64) -> FrameInfo {
    assert!(n < kernel().frames);
    // SAFETY: the table has `frames` entries mapped read-only.
    unsafe { core::ptr::read_volatile((FRAME_TABLE_VA as *const FrameInfo).add(n as usize)) }
}

/// The time-slice vector, read afresh.
pub fn slices() -> abi::tables::SliceVector {
    // SAFETY: the kernel maps the slice vector read-only in every
    // environment; volatile because the kernel changes it.
    unsafe { core::ptr::read_volatile(abi::layout::SLICES_VA as *const abi::tables::SliceVector) }
}

/// The clock page, read afresh.
pub fn clock() -> abi::tables::Clock {
    // SAFETY: as for `slices`.
    unsafe { core::ptr::read_volatile(abi::layout::CLOCK_VA as *const abi::tables::Clock) }
}

/// Nanoseconds since the machine started, from the TSC at the rate the
/// kernel measured (timer ticks if it could not).
pub fn now_ns() -> u64 {
    let c = clock();
    if c.tsc_hz == 0 {
        return c.ticks * c.tick_ns;
    }
    // SAFETY: RDTSC only reads the time-stamp counter.
    let tsc = unsafe { core::arch::x86_64::_rdtsc() };
    ((tsc as u128 * c.tsc_ns_mult as u128) >> 32) as u64
}

/// The kernel command line.
pub fn cmdline() -> &'static str {
    let k = kernel();
    core::str::from_utf8(&k.cmdline[..k.cmdline_len as usize]).unwrap_or("")
}

/// Free frames plus the frames charged to the caller: constant across the
/// creation and complete destruction of any subtree of the caller (the
/// caller's own page tables may grow, but they are charged to it).
pub fn free_plus_own() -> u64 {
    let me = env_by_id(crate::sys::self_id()).map_or(0, |e| e.frames);
    free_frames() + me
}
