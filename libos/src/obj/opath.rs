//! A descriptor opened with `O_PATH`: it names a file (any kind, a
//! symbolic link itself with `O_NOFOLLOW`) without opening it for I/O.
//! It can be stat'ed, be the directory of the `*at` calls and `fchdir`,
//! be duplicated, closed and reopened through `/proc/self/fd`; everything
//! else finds no descriptor (`fd::get` refuses it with EBADF, as Linux's
//! `fdget`; `fd::get_raw` is its `fdget_raw`). It holds the inode open, so
//! the file outlives its last name while the descriptor lasts.

use super::{File, Ops};
use crate::errno::Errno;
use crate::errno::EBADF;
use crate::fs::{node, Stat};

pub static OPS: Ops = Ops { read, write, seek, stat, ioctl, close };

fn read(_: &mut File, _: &mut [u8]) -> Result<usize, Errno> {
    Err(EBADF)
}

fn write(_: &mut File, _: &[u8]) -> Result<usize, Errno> {
    Err(EBADF)
}

fn seek(_: &mut File, _: i64, _: u32) -> Result<u64, Errno> {
    Err(EBADF)
}

fn ioctl(_: &mut File, _: u64, _: u64) -> Result<usize, Errno> {
    Err(EBADF)
}

fn stat(f: &File, st: &mut Stat) -> Result<(), Errno> {
    *st = crate::fs::stat::of(f.ino);
    Ok(())
}

fn close(f: &mut File) {
    node::update(f.ino, |n| n.opens -= 1);
    node::release(f.ino);
}
