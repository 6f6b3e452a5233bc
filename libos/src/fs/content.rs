//! A regular file's bytes, wherever they live: in the arena (`node`), or,
//! for a file under `/data`, in XN's buffer cache through this process's
//! C-FFS (`disk`, `docs/cffs.md` "The persistent directory").

use super::{disk, node, Ino};
use crate::errno::Errno;

/// Reads file `ino` from `off`; returns the byte count.
pub fn read(ino: Ino, off: u64, buf: &mut [u8]) -> Result<usize, Errno> {
    let n = node::get(ino);
    match disk::direct(&n) {
        true => disk::read(ino, off, buf),
        false => Ok(node::read_at(&n, off, buf)),
    }
}

/// Writes `buf` into file `ino` at `off`.
pub fn write(ino: Ino, off: u64, buf: &[u8]) -> Result<usize, Errno> {
    match disk::direct(&node::get(ino)) {
        true => disk::write(ino, off, buf),
        false => node::update(ino, |n| node::write_at(n, off, buf)),
    }
}

/// Sets file `ino`'s size.
pub fn truncate(ino: Ino, len: u64) -> Result<(), Errno> {
    match disk::direct(&node::get(ino)) {
        true => disk::truncate(ino, len),
        false => node::update(ino, |n| node::truncate(n, len)),
    }
}
