//! Kernel tables exposed read-only to every environment.

/// Per-frame record in the frame table at [`crate::layout::FRAME_TABLE_VA`].
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FrameInfo {
    /// Owning environment id, or 0 when the frame belongs to nobody.
    pub owner: u32,
    /// One of the [`frame_state`] values.
    pub state: u8,
    pub _reserved: u8,
    /// Number of page-table entries that map this frame.
    pub refs: u16,
}

/// Values of [`FrameInfo::state`].
pub mod frame_state {
    /// Free for allocation.
    pub const FREE: u8 = 0;
    /// Not RAM the kernel hands out (firmware, MMIO holes, kernel image).
    pub const RESERVED: u8 = 1;
    /// Allocated to an environment, mappable by it.
    pub const USER: u8 = 2;
    /// A page-table page of the owner's address space (kernel-managed).
    pub const PAGE_TABLE: u8 = 3;
    /// Kernel memory (heap, tables) or the boot module.
    pub const KERNEL: u8 = 4;
    /// A page of XN's buffer cache: a disk block, still charged to the
    /// environment that read it in, mapped only through `xn_bind`.
    pub const CACHE: u8 = 5;
}

/// The page at [`crate::layout::KINFO_VA`].
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct KernelInfo {
    /// Number of entries in the frame table.
    pub frames: u64,
    /// Number of frames currently free.
    pub free_frames: u64,
    /// Number of slots in the environment table.
    pub env_slots: u64,
    /// Size in bytes of the boot file system at `BOOTFS_VA`.
    pub bootfs_size: u64,
    /// Timer ticks since boot.
    pub ticks: u64,
    /// Length of `cmdline`.
    pub cmdline_len: u64,
    /// The kernel command line (`init=PROGRAM ARGS...`).
    pub cmdline: [u8; 256],
    /// Environment slots in use (live or exited): a library's count of
    /// its tasks against a limit needs no scan of the table.
    pub envs_used: u64,
    /// The block device's requests since boot (lxrt shows them as Linux's
    /// `/sys/block/vda/stat`).
    pub block: BlockCounts,
}

/// Requests started on the block device since boot, counted as Linux's
/// `/sys/block/DEV/stat` counts them: one per virtio request, whatever
/// its length. Brought up to date after each XN call and each tick.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BlockCounts {
    pub reads: u64,
    pub read_sectors: u64,
    pub writes: u64,
    pub write_sectors: u64,
    pub flushes: u64,
}

impl Default for KernelInfo {
    fn default() -> Self {
        KernelInfo {
            frames: 0,
            free_frames: 0,
            env_slots: 0,
            bootfs_size: 0,
            ticks: 0,
            cmdline_len: 0,
            cmdline: [0; 256],
            envs_used: 0,
            block: BlockCounts::default(),
        }
    }
}

/// One slot of the environment table at [`crate::layout::ENV_TABLE_VA`].
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EnvInfo {
    /// The id currently using this slot (0 when free).
    pub id: u32,
    /// The creator's id (0 for the first environment).
    pub parent: u32,
    /// One of the [`env_state`] values.
    pub state: u32,
    /// Exit code, valid in state `EXITED`.
    pub exit_code: i32,
    /// Frames charged to this environment (page tables included).
    pub frames: u64,
    /// Time slices it owns in the slice vector.
    pub slices: u32,
    /// Slot of the environment whose reply it awaits after a synchronous
    /// protected control transfer (`u32::MAX` when not waiting).
    pub waiting_on: u32,
    /// Interrupt bits queued for it and not yet delivered (`PCT_INTERRUPT`).
    pub interrupts: u64,
    /// The word it (or an ancestor) published with `env_publish`.
    pub published: u64,
    /// Timer ticks that found it running: its CPU time, at tick resolution
    /// (`Clock::tick_ns` each).
    pub ticks: u64,
    /// Who sent the last interrupt bits queued for it (0: the kernel), a
    /// library's way to name a signal's sender. The upper half is unused:
    /// it keeps entries 64 bytes, so fast paths index by a shift.
    pub interrupt_from: u64,
}

/// Number of time slices in the CPU's slice vector (paper 001 §4.2.1).
pub const SLICES: usize = 64;

/// The time-slice vector at [`crate::layout::SLICES_VA`]: the scheduler
/// runs each slice's owner in turn, one slice per timer tick.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct SliceVector {
    /// The slice being run now.
    pub position: u64,
    /// Owner environment id of each slice (0: free).
    pub owner: [u32; SLICES],
}

/// The clock page at [`crate::layout::CLOCK_VA`].
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Clock {
    /// Timer ticks (slice boundaries) since boot.
    pub ticks: u64,
    /// Nanoseconds of guest time per tick.
    pub tick_ns: u64,
    /// TSC counts per second, measured at boot against the PIT (0 if there
    /// was no PIT to measure against: then only `ticks` tell the time).
    pub tsc_hz: u64,
    /// Nanoseconds per TSC count in 32.32 fixed point: the time since the
    /// TSC's zero is `(tsc * tsc_ns_mult) >> 32`, computed in 128 bits.
    pub tsc_ns_mult: u64,
    /// Wall-clock nanoseconds since 1970 at the TSC's zero, read from the
    /// CMOS real-time clock at boot (0: no RTC; wall time is then the
    /// library's own guess).
    pub wall_epoch_ns: u64,
    /// TSC counts the processor spent halted with nothing to run until a
    /// device's interrupt ended the wait (stretches a timer tick ended are
    /// carried on to the next halt): what a benchmark of device requests
    /// leaves out, so that it counts the processor's work, not the
    /// device's time (`docs/drivers.md`, Benchmarks).
    pub halted_tsc: u64,
}

/// Values of [`EnvInfo::state`].
pub mod env_state {
    pub const FREE: u32 = 0;
    /// Created, not yet started (or stopped).
    pub const STOPPED: u32 = 1;
    pub const RUNNABLE: u32 = 2;
    /// Ended by `exit` or a fatal fault; waiting for its parent to destroy it.
    pub const EXITED: u32 = 3;
    /// Runnable, but skipping its next slices: it ignored an end-of-slice
    /// upcall (the CPU abort protocol).
    pub const PENALIZED: u32 = 4;
    /// Waiting for the reply to a synchronous protected control transfer;
    /// its slices run the environment it waits on (`EnvInfo::waiting_on`).
    pub const WAITING: u32 = 5;
    /// Asleep until its wakeup predicate holds (or its deadline passes).
    pub const SLEEPING: u32 = 6;
}

/// Exit code of an environment the kernel killed for an exception it could
/// not deliver: `FAULT_EXIT_BASE - vector`.
pub const FAULT_EXIT_BASE: i32 = -1000;

/// Number of environment-table slots; an id's low bits index the table.
pub const ENV_SLOTS: usize = 4096;

/// The slot index of an environment id.
pub const fn env_slot(id: u32) -> usize {
    id as usize % ENV_SLOTS
}
