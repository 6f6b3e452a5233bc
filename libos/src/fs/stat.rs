//! What `stat` tells about a file: the record every open file's `stat`
//! method and every path lookup fill. A personality lays it out as its
//! programs expect (`linux/stat.rs`).

use super::{node, Ino, S_IFDIR, S_IFMT};

/// A file's status. A field an object does not know stays 0.
#[derive(Clone, Copy, Default)]
pub struct Stat {
    /// The file system (1: the in-memory one; 0: a device or pipe).
    pub dev: u64,
    pub ino: u64,
    pub nlink: u64,
    /// Type (`S_IF*`) and permission bits.
    pub mode: u32,
    /// A device's (major, minor) numbers.
    pub rdev: (u32, u32),
    pub size: u64,
    /// The preferred size of a read or write.
    pub blksize: u64,
    /// 512-byte blocks held.
    pub blocks: u64,
    /// Last modification, access and change, nanoseconds since 1970.
    pub mtime_ns: u64,
    pub atime_ns: u64,
    pub ctime_ns: u64,
    pub uid: u32,
    pub gid: u32,
}

/// The status of inode `ino`.
pub fn of(ino: Ino) -> Stat {
    let n = node::get(ino);
    Stat {
        dev: 1,
        ino: ino as u64,
        nlink: if n.mode & S_IFMT == S_IFDIR { 2 } else { n.nlink as u64 },
        mode: n.mode,
        rdev: split(n.rdev),
        size: n.size,
        blksize: 4096,
        blocks: n.size.div_ceil(512),
        mtime_ns: n.mtime_ns,
        atime_ns: n.atime_ns,
        ctime_ns: n.ctime_ns,
        uid: n.uid,
        gid: n.gid,
    }
}

/// `rdev` as stored in an inode: major in the high 24 bits.
pub const fn dev(major: u32, minor: u32) -> u32 {
    major << 8 | minor
}

/// An inode's `rdev` as (major, minor).
pub fn split(rdev: u32) -> (u32, u32) {
    (rdev >> 8, rdev & 0xff)
}
