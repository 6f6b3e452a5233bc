//! Linux's memory devices (major 1): `/dev/null` (reads see end of file,
//! writes vanish), `/dev/zero` (reads give zeros), `/dev/full` (reads give
//! zeros, writes fail with ENOSPC), `/dev/random` and `/dev/urandom`
//! (reads give `crate::random` bytes, writes are taken and dropped).

use super::{no_ioctl, File, Kind, Ops};
use crate::errno::Errno;
use crate::errno::ENOSPC;
use crate::fs::Stat;

pub static OPS: Ops =
    Ops { read, write, seek: |_, _, _| Ok(0), stat, ioctl: no_ioctl, close: |_: &mut File| {} };

fn read(f: &mut File, b: &mut [u8]) -> Result<usize, Errno> {
    match f.kind {
        Kind::Null => return Ok(0),
        Kind::Random => crate::random::fill(b),
        _ => b.fill(0),
    }
    Ok(b.len())
}

fn write(f: &mut File, b: &[u8]) -> Result<usize, Errno> {
    if f.kind == Kind::Full {
        return Err(ENOSPC);
    }
    Ok(b.len())
}

/// The device number of a memory device kind (`/dev/random`'s, 1:8, is
/// shown as `/dev/urandom`'s: both are one object here).
pub fn number(kind: Kind) -> (u32, u32) {
    match kind {
        Kind::Zero => (1, 5),
        Kind::Full => (1, 7),
        Kind::Random => (1, 9),
        _ => (1, 3),
    }
}

fn stat(f: &File, st: &mut Stat) -> Result<(), Errno> {
    st.mode = crate::fs::S_IFCHR | 0o666;
    st.rdev = number(f.kind);
    st.ino = f.ino as u64;
    st.blksize = 4096;
    Ok(())
}
