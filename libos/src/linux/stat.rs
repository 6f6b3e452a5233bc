//! `struct stat` (x86-64 layout) and `struct statx`, and the calls that
//! fill them.

use crate::fs::{node, Ino, S_IFDIR, S_IFMT};

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

/// Fills `st` from inode `ino`.
pub fn fill(ino: Ino, st: &mut Stat) {
    let n = node::get(ino);
    st.dev = 1;
    st.ino = ino as u64;
    st.mode = n.mode;
    st.nlink = if n.mode & S_IFMT == S_IFDIR { 2 } else { n.nlink as u64 };
    st.size = n.size as i64;
    st.blksize = 4096;
    st.blocks = n.size.div_ceil(512) as i64;
    let t = [(n.mtime_ns / 1_000_000_000) as i64, (n.mtime_ns % 1_000_000_000) as i64];
    st.atime = t;
    st.mtime = t;
    st.ctime = t;
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

/// `statx` from a filled `stat`.
pub fn to_statx(st: &Stat) -> Statx {
    let ts = |t: [i64; 2]| [t[0], t[1]];
    Statx {
        mask: 0x7ff,
        blksize: st.blksize as u32,
        nlink: st.nlink as u32,
        uid: st.uid,
        gid: st.gid,
        mode: st.mode as u16,
        ino: st.ino,
        size: st.size as u64,
        blocks: st.blocks as u64,
        atime: ts(st.atime),
        btime: ts(st.mtime),
        ctime: ts(st.ctime),
        mtime: ts(st.mtime),
        rdev_major: (st.rdev >> 8) as u32,
        rdev_minor: (st.rdev & 0xff) as u32,
        dev_minor: st.dev as u32,
        ..Statx::default()
    }
}
