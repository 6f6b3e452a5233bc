//! The inode: one file's record in the inode table (`node`), in the
//! shared arena.

/// An inode's number in the table.
pub type Ino = u32;

/// Plain data: readers get a copy (`get`), writers a scoped borrow (`update`).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Inode {
    pub mode: u32,
    pub nlink: u32,
    /// Open file descriptions naming this inode (it stays until both are 0).
    pub opens: u32,
    /// A directory's parent; the free-list link while free.
    pub parent: Ino,
    pub size: u64,
    /// The bytes `data` has room for (a paged file: its pages' bytes).
    pub cap: u64,
    /// The bytes; a paged file's list of pages (`pages`); an open FIFO's
    /// ring, in frames of its own (`obj::fifo`).
    pub data: *mut u8,
    /// An open FIFO's ring: the ticket of its frames' range, which an
    /// opener maps them with (`obj::fifo`).
    pub ticket: u64,
    /// Last modification of the data, last access (set only by `utimensat`:
    /// reads do not change it, as with `noatime`), last change of the
    /// inode (data, mode, owner, links), in nanoseconds since 1970.
    pub mtime_ns: u64,
    pub atime_ns: u64,
    pub ctime_ns: u64,
    /// Owner and group (the library checks them; for a disk file XN's
    /// `acl` judges the disk's own copy).
    pub uid: u32,
    pub gid: u32,
    /// A device node's number (`stat::dev`: major and minor).
    pub rdev: u32,
    /// Shared mappings of the file's pages, in all processes.
    pub maps: u32,
    /// The C-FFS inode this one stands for under `/data` (`disk`), 0 for
    /// none. A regular file's bytes are then in XN's buffer cache, not in
    /// `data` (unless `copied`).
    pub disk: u64,
    /// Where the last process to change or look up the C-FFS inode found
    /// its entry (`disk::place`): a hint every process checks.
    pub disk_at: u64,
    /// The file system it belongs to (`FS_*`): its device number in `stat`
    /// and its type in `statfs`.
    pub fs: u8,
    /// `data` points into the read-only boot archive.
    pub borrowed: bool,
    /// The data changed since it was last written to the disk.
    pub dirty: bool,
    /// A `/data` file whose bytes are in `data` too (mapped shared, run as
    /// a program, `disk::copy_in`): the arena's copy is the file until it
    /// is written back and dropped (`disk::uncopy`).
    pub copied: bool,
    /// `data` is a list of pages that never move (`pages`): the file is
    /// or was mapped shared.
    pub paged: bool,
    /// A `/data` file whose size and mtime here are ahead of its C-FFS
    /// entry (writes leave the entry to `disk::settle`, once per close,
    /// `fsync` or write-back, as ext4 keeps an inode dirty in memory).
    pub stale: bool,
}

// `libos/tests/c/xnsteal.c` (root_hostile's attacker) finds inodes in the
// arena by this layout: a field moved here must move there too.
const _: () = assert!(core::mem::offset_of!(Inode, uid) == 72 && core::mem::offset_of!(Inode, disk_at) == 96);
