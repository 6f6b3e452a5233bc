//! XN's system calls as environments see them (`docs/xn.md`): the
//! layouts of their arguments, of the buffer-cache registry and of the
//! block-state map the kernel exposes read-only to every environment
//! (`layout::XN_REGISTRY_VA`, `layout::XN_BLOCKS_VA`).

/// Bytes in a disk block (a page: cached blocks are bound to pages).
pub const BLOCK: u64 = 4096;

/// A `parent` argument names a root catalogue entry when this bit is set
/// (`ROOT | index`), otherwise the metadata block that claims the child.
pub const ROOT: u64 = 1 << 63;

/// Longest template or root name, in bytes (printable ASCII).
pub const MAX_NAME: usize = 31;
/// Most templates one `xn_install` takes (one library's types).
pub const MAX_GROUP: usize = 16;
/// Longest template function, in eBPF instruction slots.
pub const MAX_UDF_INSNS: u64 = 2048;
/// Most changes, and most distinct blocks, in one `xn_modify`.
pub const MAX_CHANGES: usize = 32;
pub const MAX_BLOCKS: usize = 4;
/// Most extents in one `xn_modify`'s allocation or free list.
pub const MAX_EXTENTS: usize = 64;
/// Most blocks one `xn_read` or `xn_write` moves.
pub const MAX_RUN: u64 = 64;

/// A template as `xn_install` takes it. A data template has `slots == 0`
/// and no functions; a metadata template all three (`owns`, `acl`,
/// `size`: pointers to eBPF instructions in the caller's memory, with
/// their lengths in instruction slots).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct TemplateSpec {
    pub name: [u8; 32],
    pub name_len: u32,
    pub slots: u32,
    pub owns: u64,
    pub owns_len: u64,
    pub acl: u64,
    pub acl_len: u64,
    pub size: u64,
    pub size_len: u64,
}

impl TemplateSpec {
    /// A template named `name` (the first 32 bytes kept; a longer name's
    /// length is kept too, so XN refuses it) whose functions are the
    /// instructions at `owns`, `acl` and `size`, read by address: they
    /// must outlive the `xn_install` call.
    pub fn new(name: &[u8], slots: u32, owns: &[[u8; 8]], acl: &[[u8; 8]], size: &[[u8; 8]]) -> TemplateSpec {
        let mut n = [0u8; 32];
        let kept = name.len().min(n.len());
        n[..kept].copy_from_slice(&name[..kept]);
        TemplateSpec {
            name: n,
            name_len: name.len() as u32,
            slots,
            owns: owns.as_ptr() as u64,
            owns_len: owns.len() as u64,
            acl: acl.as_ptr() as u64,
            acl_len: acl.len() as u64,
            size: size.as_ptr() as u64,
            size_len: size.len() as u64,
        }
    }
}

/// `xn_root_add`'s request: a root of `count` free blocks from `start`
/// with template `tid`, whose contents are the caller's `frames` (a
/// pointer to `count` frame numbers), kept across reboots if
/// `persistent`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct RootAdd {
    pub name: [u8; 32],
    pub name_len: u32,
    pub tid: u32,
    pub start: u64,
    pub count: u64,
    pub frames: u64,
    pub persistent: u64,
}

/// A root catalogue entry (`xn_root_find`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Root {
    pub start: u64,
    pub count: u64,
    pub tid: u32,
    pub persistent: u32,
}

/// One change of `xn_modify`: `len` bytes at `bytes` (the caller's memory)
/// to write at `off` in cached metadata block `block`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Change {
    pub block: u64,
    pub off: u32,
    pub len: u32,
    pub bytes: u64,
}

/// A run of blocks.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Extent {
    pub start: u64,
    pub count: u64,
}

/// `xn_modify`'s request: the changes, and the extents the caller says
/// they allocate and free.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Modify {
    pub changes: u64,
    pub nchanges: u64,
    pub alloc: u64,
    pub nalloc: u64,
    pub free: u64,
    pub nfree: u64,
}

/// One claim `owns` answers for a metadata block (`xn_claims`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Claim {
    pub start: u64,
    pub count: u64,
    pub tid: u32,
    pub slot: u32,
}

/// What `xn_info` reports.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Info {
    /// Blocks on the XN disk (0: no XN disk is mounted).
    pub nblocks: u64,
    /// Registry slots (the exposed table's length) and entries in use.
    pub registry_slots: u64,
    pub cached: u64,
    /// Allocated blocks.
    pub allocated: u64,
    /// Disk requests since boot: reads, writes, flushes.
    pub reads: u64,
    pub writes: u64,
    pub flushes: u64,
}

/// One slot of the exposed buffer-cache registry: an open-addressed hash
/// table keyed by block (`registry_slot`, linear probing; `block == 0`
/// is an empty slot: block 0 is XN's superblock, never cached).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RegEntry {
    pub block: u64,
    /// The frame that holds it.
    pub frame: u64,
    /// The environment that put it there (0 once it went away).
    pub owner: u32,
    pub tid: u16,
    /// [`reg`] bits.
    pub flags: u16,
}

/// [`RegEntry::flags`].
pub mod reg {
    pub const DIRTY: u16 = 1;
    /// Locked (`xn_lock`) by someone.
    pub const LOCKED: u16 = 2;
    /// A metadata block (bound read-only only).
    pub const METADATA: u16 = 4;
}

/// The home slot of `block` in a registry of `slots` slots (a power of
/// two); look on from there until the block or an empty slot.
pub const fn registry_slot(block: u64, slots: u64) -> u64 {
    block.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32 & (slots - 1)
}

/// One byte per disk block in the exposed block-state map.
pub mod state {
    /// May be allocated (no claim in memory or on disk).
    pub const FREE: u8 = 1;
    /// Allocated and not yet durably initialised.
    pub const UNSTABLE: u8 = 2;
    /// Written since the last flush.
    pub const WRITTEN: u8 = 4;
    /// Freed, waiting until no on-disk pointer names it.
    pub const WILL_FREE: u8 = 8;
    /// How many blocks claim it (saturating at 15).
    pub const CLAIMANTS_SHIFT: u8 = 4;
}
