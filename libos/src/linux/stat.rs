//! Linux's `struct stat` (x86-64 layout) and `struct statx`, laid out
//! from the library's file status (`fs::Stat`).

use super::time::timespec;
use crate::fs;

#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct Stat {
    pub dev: u64,
    pub ino: u64,
    pub nlink: u64,
    pub mode: u32,
    pub uid: u32,
    pub gid: u32,
    pub pad0: u32,
    pub rdev: u64,
    pub size: i64,
    pub blksize: i64,
    pub blocks: i64,
    pub atime: [i64; 2],
    pub mtime: [i64; 2],
    pub ctime: [i64; 2],
    pub reserved: [i64; 3],
}

/// Linux's `struct stat` for `s`.
pub fn linux(s: &fs::Stat) -> Stat {
    Stat {
        dev: s.dev,
        ino: s.ino,
        nlink: s.nlink,
        mode: s.mode,
        uid: s.uid,
        gid: s.gid,
        rdev: (s.rdev.0 as u64) << 8 | s.rdev.1 as u64,
        size: s.size as i64,
        blksize: s.blksize as i64,
        blocks: s.blocks as i64,
        atime: timespec(s.atime_ns),
        mtime: timespec(s.mtime_ns),
        ctime: timespec(s.ctime_ns),
        ..Stat::default()
    }
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct Statx {
    pub mask: u32,
    pub blksize: u32,
    pub attributes: u64,
    pub nlink: u32,
    pub uid: u32,
    pub gid: u32,
    pub mode: u16,
    pub pad0: u16,
    pub ino: u64,
    pub size: u64,
    pub blocks: u64,
    pub attributes_mask: u64,
    pub atime: [i64; 2],
    pub btime: [i64; 2],
    pub ctime: [i64; 2],
    pub mtime: [i64; 2],
    pub rdev_major: u32,
    pub rdev_minor: u32,
    pub dev_major: u32,
    pub dev_minor: u32,
    pub spare: [u64; 14],
}

/// Linux's `struct statx` for `s` (every basic field filled; birth time
/// is the modification time).
pub fn statx(s: &fs::Stat) -> Statx {
    let t = timespec(s.mtime_ns);
    Statx {
        uid: s.uid,
        gid: s.gid,
        mask: 0x7ff,
        blksize: s.blksize as u32,
        nlink: s.nlink as u32,
        mode: s.mode as u16,
        ino: s.ino,
        size: s.size,
        blocks: s.blocks,
        atime: timespec(s.atime_ns),
        btime: t,
        ctime: timespec(s.ctime_ns),
        mtime: t,
        rdev_major: s.rdev.0,
        rdev_minor: s.rdev.1,
        dev_minor: s.dev as u32,
        ..Statx::default()
    }
}
