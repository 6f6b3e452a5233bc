//! XCP, the "zero-touch" file copy (paper 000 §7.2): the source's blocks
//! are brought into the buffer cache with reads issued all at once in
//! disk order (large runs, the fewest seeks), the copy's blocks are
//! allocated, and each run of cache pages is written straight to its new
//! blocks with XN's `copy`, sorted by destination. The data moves from
//! the disk into the cache and from the cache to the disk; this library
//! never touches it. A file system that is a library can offer this
//! because it sees its own disk layout; XN checks every step as it
//! checks a read, an allocation and a write.

use alloc::vec::Vec;

use xn::Parent;

use crate::client::XnClient;
use crate::format::{S_IFMT, S_IFREG};
use crate::fs::Fs;
use crate::{Errno, Result, BLOCK};

/// The runs of `items` in which each item `follows` the one before:
/// (first index, length).
fn runs<T>(items: &[T], follows: impl Fn(&T, &T) -> bool) -> Vec<(usize, u64)> {
    let mut out: Vec<(usize, u64)> = Vec::new();
    for i in 0..items.len() {
        match out.last_mut() {
            Some((at, n)) if follows(&items[i - 1], &items[i]) && *at + *n as usize == i => *n += 1,
            _ => out.push((i, 1)),
        }
    }
    out
}

impl<C: XnClient> Fs<C> {
    /// Copies regular file `src` to a new file `name` in directory `dir`
    /// (same mode, size and holes) and returns its inode. Nothing is made
    /// durable: `fsync` the copy (its blocks were written already, so
    /// that is a flush, the entry's write and a flush). On failure the
    /// new name is removed again.
    pub fn xcp(&mut self, src: u64, dir: u64, name: &[u8]) -> Result<u64> {
        let (sloc, sinode) = self.load(src)?;
        if sinode.mode & S_IFMT != S_IFREG {
            return Err(if sinode.is_dir() { Errno::IsDir } else { Errno::Inval });
        }
        if !self.allowed(&sinode, 4) {
            return Err(Errno::Access);
        }
        let dst = self.create(dir, name, sinode.mode)?;
        let copied = if sinode.is_inline() {
            // At most 72 bytes, kept in the inode: no block to copy.
            self.write(dst, 0, &sinode.inline[..sinode.size as usize]).map(|_| ())
        } else {
            let map = self.map(sloc, &sinode)?;
            let used = sinode.size.div_ceil(BLOCK as u64);
            // (disk block, file block, the block claiming it)
            let mut from: Vec<(u64, u64, u64)> = map
                .slots
                .iter()
                .filter(|s| !s.ext.is_empty())
                .flat_map(|s| {
                    (0..u64::from(s.ext.count))
                        .map(move |i| (s.ext.start + i, u64::from(s.ext.fblock) + i, s.holder))
                })
                .filter(|p| p.1 < used)
                .collect();
            from.sort_unstable();
            self.copy_blocks(dst, sinode.size, &mut from)
        };
        match copied {
            Ok(()) => Ok(dst),
            Err(e) => {
                let _ = self.unlink(dir, name);
                Err(e)
            }
        }
    }

    /// XCP's three steps for `from` (sorted by disk block) into the empty
    /// file `dst`, which ends `size` bytes long.
    fn copy_blocks(&mut self, dst: u64, size: u64, from: &mut [(u64, u64, u64)]) -> Result<()> {
        // 1. Every read at once, in disk order, a request per run one
        //    block claims.
        for (i, n) in runs(from, |a, b| b.0 == a.0 + 1 && b.2 == a.2) {
            self.xn.fetch(Parent::Block(from[i].2), from[i].0, n)?;
        }
        // 2. The copy's blocks, a run per run of file blocks (holes stay
        //    holes), allocated and left unwritten.
        let (loc, mut inode) = self.load(dst)?;
        from.sort_unstable_by_key(|p| p.1);
        for (i, n) in runs(from, |a, b| b.1 == a.1 + 1) {
            self.grow(loc, &mut inode, from[i].1, n, None)?;
        }
        // 3. The cache pages written to them, in destination order.
        let map = self.map(loc, &inode)?;
        let mut pairs = Vec::with_capacity(from.len());
        for &(b, f, _) in from.iter() {
            let (d, holder) = map.find(f).ok_or(Errno::Corrupt("block vanished"))?;
            pairs.push((d, b, holder));
        }
        pairs.sort_unstable();
        for (i, n) in runs(&pairs, |a, b| b.0 == a.0 + 1 && b.1 == a.1 + 1 && b.2 == a.2) {
            self.xn.copy(Parent::Block(pairs[i].2), pairs[i].0, pairs[i].1, n)?;
        }
        inode.size = size;
        self.stamp(&mut inode);
        self.set_inode(loc, &inode, &[], &[])?;
        self.grown.insert(dst);
        Ok(())
    }
}
