//! C-FFS, the co-locating fast file system (paper 000 §4.5; Ganger and
//! Kaashoek 1997, "Embedded inodes and explicit grouping"), as an
//! untrusted library over XN. Inodes live in the directory entries that
//! name them; small files' blocks are placed next to their directory's
//! and read with it in one request; large files use extents. See
//! `docs/cffs.md`.
#![no_std]

extern crate alloc;
#[cfg(test)]
extern crate std;

pub mod check;
pub mod client;
mod data;
mod dir;
pub mod format;
mod fs;
pub mod sim;
mod sync;
pub mod templates;
mod xcp;

pub use client::{Local, XnClient};
pub use data::MAX_FILE;
pub use fs::{Fs, Loc, Options, Stat, StatFs, ROOT_INO};
pub use sync::{Step, Syncing, ROUNDS};

pub const BLOCK: usize = xn::BLOCK;

/// Why a file-system call failed (the libOS maps these to Linux errnos).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Errno {
    NoEnt,
    Exist,
    NotDir,
    IsDir,
    NotEmpty,
    NoSpace,
    Access,
    Perm,
    NameTooLong,
    Inval,
    FileTooBig,
    /// XN refused or failed a request.
    Xn(xn::Error),
    /// The disk holds something C-FFS never writes.
    Corrupt(&'static str),
}

impl From<xn::Error> for Errno {
    fn from(e: xn::Error) -> Errno {
        Errno::Xn(e)
    }
}

pub type Result<T> = core::result::Result<T, Errno>;
