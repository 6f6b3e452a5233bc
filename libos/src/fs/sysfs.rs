//! The few `/sys` files programs read to size themselves: which CPUs are
//! online and possible (one, numbered 0, until the kernel runs on more);
//! and `/sys/block/vda/stat`, the virtio disk's request counts as Linux
//! shows them (the kernel's `KernelInfo::block`), brought up to date when
//! a path under `/sys/block` is resolved (a `mount::Synthetic`).

use super::node;
use super::{dir, ROOT, S_IFDIR, S_IFREG};
use crate::errno::Errno;
use alloc::vec::Vec;

const FILES: [(&[u8], &[u8]); 2] =
    [(b"/sys/devices/system/cpu/online", b"0\n"), (b"/sys/devices/system/cpu/possible", b"0\n")];

/// Makes the files and the directories above them (at boot).
pub fn populate() -> Result<(), Errno> {
    for (p, text) in FILES {
        put(p, text)?;
    }
    Ok(())
}

/// Makes (or rewrites) the file at absolute path `p` holding `text`, and
/// the directories above it.
fn put(p: &[u8], text: &[u8]) -> Result<(), Errno> {
    let mut d = ROOT;
    let at = p.iter().rposition(|&c| c == b'/').expect("absolute");
    let (parts, name) = (&p[..at], &p[at + 1..]);
    for part in parts.split(|&c| c == b'/').filter(|s| !s.is_empty()) {
        d = match dir::lookup(d, part) {
            Some(i) => i,
            None => {
                let i = node::alloc_on(S_IFDIR | 0o755, node::FS_SYS)?;
                dir::add(d, part, i)?;
                i
            }
        };
    }
    let ino = match dir::lookup(d, name) {
        Some(i) => i,
        None => {
            let i = node::alloc_on(S_IFREG | 0o444, node::FS_SYS)?;
            dir::add(d, name, i)?;
            i
        }
    };
    node::update(ino, |n| {
        node::truncate(n, 0)?;
        node::write_at(n, 0, text)
    })?;
    Ok(())
}

/// `/sys/block`, brought up to date whenever a path under it is resolved.
pub static BLOCK: super::mount::Synthetic = super::mount::Synthetic { at: b"/sys/block", refresh: block };

/// `/sys/block/vda/stat` from the kernel's counts, in Linux's 17 columns
/// (reads, merges, sectors, ms; writes, merges, sectors, ms; in flight,
/// busy ms, queue ms; discards: 4; flushes, ms): the requests and
/// sectors are the kernel's, the rest 0. A machine whose disk took no
/// request (none) has no `vda`.
fn block(_: &[u8]) -> Result<(), Errno> {
    // SAFETY: the kernel's information page, mapped read-only in every
    // environment; read afresh (the kernel updates it between our calls).
    let c = unsafe { core::ptr::read_volatile(&raw const user::kinfo::kernel().block) };
    if c == abi::tables::BlockCounts::default() {
        return Ok(());
    }
    let columns =
        [c.reads, 0, c.read_sectors, 0, c.writes, 0, c.write_sectors, 0, 0, 0, 0, 0, 0, 0, 0, c.flushes, 0];
    let mut text = Vec::with_capacity(columns.len() * 9);
    for (i, v) in columns.into_iter().enumerate() {
        // Linux's `%8lu`, separated by one space.
        let digits = decimal(v);
        text.extend(core::iter::repeat_n(b' ', usize::from(i > 0) + 8usize.saturating_sub(digits.len())));
        text.extend_from_slice(&digits);
    }
    text.push(b'\n');
    put(b"/sys/block/vda/stat", &text)
}

/// `v` in decimal.
fn decimal(mut v: u64) -> Vec<u8> {
    let mut d = Vec::new();
    loop {
        d.push(b'0' + (v % 10) as u8);
        v /= 10;
        if v == 0 {
            d.reverse();
            return d;
        }
    }
}
