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

/// The device number `stat` reports for file system `fs` (`node::FS_*`):
/// the root's 1, the others Linux's usual anonymous ones (0:22 proc, 0:21
/// sysfs, 0:5 devtmpfs), so tools that match paths to mounts by device
/// (`df /`) tell them apart.
pub fn dev_of(fs: u8) -> u64 {
    match fs {
        node::FS_PROC => 22,
        node::FS_SYS => 21,
        node::FS_DEV => 5,
        _ => 1,
    }
}

/// A block of the file system, as `stat` reports sizes in.
const BLOCK: u64 = 4096;

/// The status of inode `ino`. A directory is as big as the blocks its
/// entries fill, one at least, and has a link from its parent, from its
/// own `.` and from each subdirectory's `..` (as on Linux's disk file
/// systems; programs such as `find` rely on the count).
pub fn of(ino: Ino) -> Stat {
    let n = node::get(ino);
    let dir = n.mode & S_IFMT == S_IFDIR;
    let (size, nlink) = if dir {
        let inner: alloc::vec::Vec<Ino> =
            super::dir::with_entries(ino, |es| es.iter().map(|e| e.ino).collect());
        let subdirs = inner.into_iter().filter(|&i| node::is_dir(i)).count() as u64;
        (n.size.div_ceil(BLOCK).max(1) * BLOCK, 2 + subdirs)
    } else {
        (n.size, n.nlink as u64)
    };
    Stat {
        dev: dev_of(n.fs),
        ino: ino as u64,
        nlink,
        mode: n.mode,
        rdev: split(n.rdev),
        size,
        blksize: BLOCK,
        blocks: size.div_ceil(512),
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
