//! XCP, the "zero-touch" file copy (paper 000 §7.2): the blocks of every
//! source file in a list are brought into the buffer cache with reads
//! issued all at once in disk order (large runs, the fewest seeks), the
//! copies' blocks are allocated, and each run of cache pages is written
//! straight to its new blocks with XN's `copy`, all sorted by
//! destination. The data moves from
//! the disk into the cache and from the cache to the disk; this library
//! never touches it. A file system that is a library can offer this
//! because it sees its own disk layout; XN checks every step as it
//! checks a read, an allocation and a write.

use alloc::vec::Vec;

use xn::Parent;

use crate::client::XnClient;
use crate::data::Fill;
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

/// One source block: (disk block, the copy it goes to, file block, the
/// block claiming it).
type Source = (u64, usize, u64, u64);

impl<C: XnClient> Fs<C> {
    /// Copies regular file `src` to a new file `name` in directory `dir`
    /// (same mode, size and holes) and returns its inode: `xcp_all` of
    /// one file.
    pub fn xcp(&mut self, src: u64, dir: u64, name: &[u8]) -> Result<u64> {
        Ok(self.xcp_all(&[(src, dir, name)])?[0])
    }

    /// Copies each regular file `src` to a new file `name` in directory
    /// `dir` (same mode, size and holes), with one schedule of reads and
    /// one of writes for all of them, and returns the copies' inodes.
    /// Nothing is made durable: `fsync` the copies or `sync` (their
    /// blocks are written already: a flush, then their entries). On
    /// failure the new names are removed again.
    pub fn xcp_all(&mut self, files: &[(u64, u64, &[u8])]) -> Result<Vec<u64>> {
        let mut made = Vec::with_capacity(files.len());
        let copied = self.copy_files(files, &mut made);
        if copied.is_err() {
            for &(_, dir, name) in &files[..made.len()] {
                let _ = self.unlink(dir, name);
            }
        }
        copied.map(|_| made)
    }

    fn copy_files(&mut self, files: &[(u64, u64, &[u8])], made: &mut Vec<u64>) -> Result<()> {
        // The copies, and where every source block lies.
        let mut from: Vec<Source> = Vec::new();
        let mut sizes = Vec::with_capacity(files.len());
        for &(src, dir, name) in files {
            let (loc, inode) = self.load(src)?;
            if inode.mode & S_IFMT != S_IFREG {
                return Err(if inode.is_dir() { Errno::IsDir } else { Errno::Inval });
            }
            if !self.allowed(&inode, 4) {
                return Err(Errno::Access);
            }
            made.push(self.create(dir, name, inode.mode)?);
            sizes.push(inode.size);
            let k = made.len() - 1;
            if inode.is_inline() {
                // At most 72 bytes, kept in the inode: no block to copy.
                self.write(made[k], 0, &inode.inline[..inode.size as usize])?;
                continue;
            }
            let used = inode.size.div_ceil(BLOCK as u64);
            let map = self.map(loc, &inode)?;
            from.extend(map.slots.iter().filter(|s| !s.ext.is_empty()).flat_map(|s| {
                (0..u64::from(s.ext.count))
                    .map(move |i| (s.ext.start + i, k, u64::from(s.ext.fblock) + i, s.holder))
            }));
            from.retain(|p| p.1 != k || p.2 < used);
        }
        // 1. Every read at once, in disk order, a request per run one
        //    block claims.
        from.sort_unstable();
        for (i, n) in runs(&from, |a, b| b.0 == a.0 + 1 && b.3 == a.3) {
            self.xn.fetch(Parent::Block(from[i].3), from[i].0, n)?;
        }
        // 2. The copies' blocks, a run per run of file blocks (holes stay
        //    holes), allocated and left unwritten.
        from.sort_unstable_by_key(|p| (p.1, p.2));
        let mut pairs = Vec::with_capacity(from.len());
        for (k, &dst) in made.iter().enumerate() {
            let (loc, mut inode) = self.load(dst)?;
            let mine = &from[from.partition_point(|p| p.1 < k)..from.partition_point(|p| p.1 <= k)];
            for (i, n) in runs(mine, |a, b| b.2 == a.2 + 1) {
                self.grow(loc, &mut inode, mine[i].2, n, Fill::Unwritten)?;
            }
            let map = self.map(loc, &inode)?;
            for &(b, _, f, _) in mine {
                let (d, holder) = map.find(f).ok_or(Errno::Corrupt("block vanished"))?;
                pairs.push((d, b, holder));
            }
            inode.size = sizes[k];
            self.stamp(&mut inode);
            self.set_inode(loc, &inode, &[], &[])?;
            self.grown.insert(dst);
        }
        // 3. The cache pages written to them, in destination order.
        pairs.sort_unstable();
        for (i, n) in runs(&pairs, |a, b| b.0 == a.0 + 1 && b.1 == a.1 + 1 && b.2 == a.2) {
            self.xn.copy(Parent::Block(pairs[i].2), pairs[i].0, pairs[i].1, n)?;
        }
        Ok(())
    }
}
