//! Where things live in a Linux process's address space under lxrt.
//!
//! The Linux binary keeps its own link address (0x400000 for busybox) and
//! its `brk` heap above it; lxrt itself is linked at 0x6000_0000 (see
//! `build.rs`), below 2 GiB so ordinary small-code-model Rust reaches all of
//! it. Everything else sits far above, out of a Linux program's way.

/// The `brk` heap may not grow past this (well below lxrt's image).
pub const BRK_LIMIT: u64 = 0x4000_0000;

/// lxrt's private heap (copied eagerly at fork: it is lxrt's own state).
pub const PRIVATE_HEAP: u64 = 0x6800_0000;
pub const PRIVATE_HEAP_SIZE: u64 = 0x0800_0000;

/// The shared arena: the file system, open files, pipes and the process
/// table. The first process allocates every frame of it up front and fork
/// maps the same frames into each child at the same address, so pointers
/// inside it mean the same thing in every process. Its size follows the
/// machine's memory (`shared::create`): an eighth of it, at least
/// `SHARED_MIN` and at most `SHARED_MAX` (the room reserved here).
pub const SHARED: u64 = 0x7000_0000;
pub const SHARED_MIN: u64 = 24 << 20;
pub const SHARED_MAX: u64 = 1 << 30;
/// The arena's frame list (`shared`): one `u32` frame name per arena page,
/// each page of the list mapped read-only where a process needs it.
pub const SHARED_LIST: u64 = SHARED + SHARED_MAX;

/// Description pages (`obj/descpage.rs`): a page of open file descriptions
/// lives at `DESCS` plus its frame's number times a page, in every process
/// that shares one of them. Just below lxrt's image, in the gigabyte whose
/// page directory every process has already (the image's, the arena's
/// start): a fork that maps a description page into the child builds one
/// page table for it, not three (`fork` +7.5% with them in a slot of their
/// own). A frame numbered past 512 MiB has its page at `DESCS_HIGH`.
pub const DESCS: u64 = BRK_LIMIT;
pub const DESCS_END: u64 = 0x6000_0000;
/// Description pages of frames numbered past 512 MiB: `DESCS_HIGH` plus
/// the frame's number times a page, in a PML4 slot of their own (the same
/// frames' numbers as the pipes' window).
pub const DESCS_HIGH: u64 = 0x7B00_0000_0000;
pub const DESCS_HIGH_END: u64 = DESCS_HIGH + (PIPES_END - PIPES) / PIPE_SLOT * PAGE;

/// Where lxrt itself lives in the low 4 GiB: the description pages, its
/// image (linked at `DESCS_END`), its private heap, the shared arena and
/// the arena's frame list.
pub const LIBRARY_LOW: u64 = DESCS;
pub const LIBRARY_LOW_END: u64 = SHARED_LIST + SHARED_MAX / PAGE * 4;

/// Whether the program may have `[start, end)` mapped at an address of its
/// choosing (`MAP_FIXED`): below lxrt, between the library and the `mmap`
/// area's end, or in the stack's range. Everything else is the library's:
/// a mapping there would put the program's pages over lxrt's own, or over
/// the file system every process shares.
pub fn program_may_map(start: u64, end: u64) -> bool {
    start < end
        && (end <= LIBRARY_LOW
            || (start >= LIBRARY_LOW_END && end <= MMAP_END)
            || (start >= STACK_TOP - STACK_MAX && end <= STACK_TOP))
}

/// A position-independent program (ET_DYN) is loaded with its lowest
/// segment here, as a fixed-address one usually is; `brk` follows it.
pub const PIE_BASE: u64 = 0x40_0000;

/// A program's interpreter (`ld.so`) is loaded here, out of the way of
/// fixed-address programs, `brk` and the `mmap` area.
pub const INTERP_BASE: u64 = 0x0800_0000_0000;
pub const INTERP_END: u64 = INTERP_BASE + (1 << 30);

/// The vDSO (`vdso`), with its vvar page just below.
pub const VDSO_BASE: u64 = INTERP_END + PAGE;
pub const VDSO_END: u64 = VDSO_BASE + (1 << 20);

/// Where XN's cached disk blocks are mapped (`fs::xnclient`): block `b`
/// at `XN_WINDOW + b * PAGE`, up to 15 TiB of disk.
pub const XN_WINDOW: u64 = MMAP_END;

/// Anonymous `mmap`s are placed upwards from here.
pub const MMAP_BASE: u64 = 0x1000_0000_0000;
pub const MMAP_END: u64 = 0x7000_0000_0000;

/// The Linux stack: top, and how far it may grow (pages appear on demand).
pub const STACK_TOP: u64 = 0x7D00_0000_0000;
pub const STACK_MAX: u64 = 8 << 20;

/// Exec's views of programs on the disk (`fs::disk::view`): the file's
/// cache pages mapped read-only in file order while `execve` loads it,
/// view 0 the program's, view 1 its interpreter's; out of the program's
/// reach (`program_may_map`).
pub const EXEC_VIEWS: u64 = 0x7D80_0000_0000;
pub const EXEC_VIEW_MAX: u64 = 1 << 30;

/// The process-table window: page `s` maps the entry of the process in
/// environment slot `s` (`proc/table.rs`).
pub const PROCS: u64 = 0x7E00_0000_0000;

/// A page lxrt maps briefly to fill a frame it is about to hand out.
pub const SCRATCH: u64 = 0x7E80_0000_0000;

/// The network's packet rings (`net::stack`): frames the first process
/// allocated, each process maps them here when it first uses the network
/// (outside the arena, so fork does not map them into every child).
pub const NET_RINGS: u64 = 0x7EA0_0000_0000;

/// Pipes' own frames (`obj/pipemem.rs`): a pipe lives at `PIPES` plus
/// its first frame's number times `PIPE_SLOT`, in every process holding an
/// end; a PML4 slot of their own (16 GiB of frames' numbers).
pub const PIPES: u64 = 0x7A00_0000_0000;
pub const PIPE_SLOT: u64 = 128 << 10;
pub const PIPES_END: u64 = PIPES + (1 << 39);

pub const PAGE: u64 = 4096;

pub const fn page_down(a: u64) -> u64 {
    a & !(PAGE - 1)
}

pub const fn page_up(a: u64) -> u64 {
    (a + PAGE - 1) & !(PAGE - 1)
}

/// Kits (`proc::kit`): windows of frames prepared for children, one
/// `KIT_SIZE` window each, in a PML4 slot of their own (`user::spawn`
/// borrows 0x7E00_0000_0000 for a scratch page).
pub const KITS: u64 = 0x7800_0000_0000;
pub const KIT_SIZE: u64 = 64 << 20;

/// Where the kernel put the first program's stack (a native program runs
/// on it; lxrt leaves it once it starts the Linux program).
pub use abi::layout::INIT_STACK_TOP;
pub const INIT_STACK_BOTTOM: u64 = INIT_STACK_TOP - abi::layout::INIT_STACK_PAGES * PAGE;

unsafe extern "C" {
    /// The linker's names for the first byte of this program's image and
    /// the end of its data (`.bss` included).
    static __executable_start: u8;
    static _end: u8;
    /// The ELF header, where the first segment maps it (a link in which
    /// it is not mapped fails, for want of the name).
    static __ehdr_start: u8;
}

/// Where lxrt's own image lies: text, read-only data, data, `.bss`.
pub fn image() -> (u64, u64) {
    ((&raw const __executable_start) as u64, (&raw const _end) as u64)
}

/// The whole pages of lxrt's image that only relocation would write
/// (`binfmt::relro`): none does, lxrt is linked static at a fixed address.
pub fn relro() -> Option<(u64, u64)> {
    let at = (&raw const __ehdr_start) as u64;
    // The program headers follow the ELF header in the same page.
    let len = (page_up(at + 1) - at) as usize;
    // SAFETY: the linker defines `__ehdr_start` only where a loadable
    // segment maps the header, and that page is mapped and never written.
    let headers = unsafe { core::slice::from_raw_parts(at as *const u8, len) };
    binfmt::relro::pages(headers)
}
