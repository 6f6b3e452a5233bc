//! Writing `/proc`'s files (`procfs.rs` and the files it makes through
//! `procload.rs`, `procstatus.rs`, `procsys.rs`): text formatted without
//! `alloc::format!`, a synthetic file put in place, a process's name.

use super::dir;
use super::node::{self, Ino};
use crate::errno::Errno;
use crate::proc::table::Entry;
use alloc::vec::Vec;

/// `args` formatted into bytes (without `alloc::format!`, which lxrt's
/// panic-abort build cannot link).
pub fn text(args: core::fmt::Arguments) -> Vec<u8> {
    struct Buf(Vec<u8>);
    impl core::fmt::Write for Buf {
        fn write_str(&mut self, s: &str) -> core::fmt::Result {
            self.0.extend_from_slice(s.as_bytes());
            Ok(())
        }
    }
    let mut b = Buf(Vec::new());
    let _ = core::fmt::write(&mut b, args);
    b.0
}

/// Makes `dir/name` a node of `mode` holding `bytes` (replacing what was
/// there).
pub fn put(d: Ino, name: &[u8], mode: u32, bytes: &[u8]) -> Result<(), Errno> {
    let ino = match dir::lookup(d, name) {
        Some(i) => i,
        None => {
            let i = node::alloc_on(mode, node::FS_PROC)?;
            dir::add(d, name, i)?;
            i
        }
    };
    node::update(ino, |n| {
        node::truncate(n, 0)?;
        node::write_at(n, 0, bytes)
    })?;
    Ok(())
}

/// The program's name: the last part of its first argument, at most 15
/// bytes, as Linux's `comm`.
pub fn comm(e: &Entry) -> &[u8] {
    if e.name[0] != 0 {
        let len = e.name.iter().position(|&b| b == 0).unwrap_or(e.name.len());
        return &e.name[..len];
    }
    let argv0 = e.cmd.split(|&b| b == 0).next().unwrap_or_default();
    let base = argv0.rsplit(|&b| b == b'/').next().unwrap_or_default();
    &base[..base.len().min(15)]
}
