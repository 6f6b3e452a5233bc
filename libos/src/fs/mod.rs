//! The in-memory file system, kept in the shared arena so every process of
//! the tree sees the same files (paper 000 §5.2.1 keeps its file system in
//! protected shared state; ours is shared memory guarded by the big lock).
//!
//! Inodes live in one table; a directory's data is an array of fixed-size
//! entries; a file's data is one growable buffer. Files that came from the
//! boot archive point straight at it (read-only, in every address space)
//! until first written, when they are copied into the arena. A file
//! on the disk (`/data`, or every file outside the memory trees when the
//! disk is the root) keeps its bytes in XN's buffer cache instead (`disk`,
//! `content`).

pub mod boot;
pub mod content;
pub mod devfs;
pub mod dir;
pub mod disk;
pub mod inode;
pub mod mount;
pub mod node;
pub mod pages;
pub mod path;
pub mod perm;
pub mod procfile;
pub mod procfs;
pub mod procload;
pub mod procstatus;
pub mod procsys;
pub mod stat;
pub mod sysfs;
pub mod xnclient;

pub use node::{Ino, Inode};
pub use stat::Stat;

/// The file system's anchor in the shared header.
#[repr(C)]
pub struct FsRoot {
    pub inodes: *mut Inode,
    pub count: u32,
    /// First free inode (linked through `Inode::parent`), 0 when none.
    pub free: u32,
    /// The directory of Unix sockets' abstract names (`node::unix_names`),
    /// 0 until the first is bound.
    pub unix_names: Ino,
}

/// Inode number of `/`.
pub const ROOT: Ino = 1;

pub const S_IFMT: u32 = 0o170000;
pub const S_IFDIR: u32 = 0o040000;
/// Set-group-ID: on a directory, new entries take its group.
pub const S_ISGID: u32 = 0o2000;
pub const S_IFREG: u32 = 0o100000;
pub const S_IFLNK: u32 = 0o120000;
pub const S_IFIFO: u32 = 0o010000;
pub const S_IFCHR: u32 = 0o020000;
pub const S_IFSOCK: u32 = 0o140000;
