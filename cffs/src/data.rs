//! File contents: the extent map (four extents in the inode, then a chain
//! of extent blocks), reads with explicit grouping, writes that allocate
//! near the directory, truncation, inline data for tiny files.

use alloc::vec::Vec;

use xn::{Change, Parent};

use crate::client::XnClient;
use crate::format::{
    may_inline, ExtHead, Extent, Inode, EXTENTS, EXT_AT, EXT_PER_BLOCK, F_INLINE, INLINE_MAX,
};
use crate::fs::{Fs, Loc, GROUP_READ};
use crate::{Errno, Result, BLOCK};

/// Largest file: extents count file blocks in 32 bits.
pub const MAX_FILE: u64 = (u32::MAX as u64) * BLOCK as u64;

/// What `grow` puts in the blocks it allocates.
#[derive(Clone, Copy)]
pub(crate) enum Fill<'a> {
    /// Nothing: left uncached and unwritten, for XCP to write from other
    /// blocks' cache pages.
    Unwritten,
    /// Zeros (a file's new blocks, written over next).
    Zeros,
    /// These bytes in each.
    With(&'a [u8; BLOCK]),
}

/// One extent slot: the block holding it, the byte offset of its 16 bytes
/// there, and what it says.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Slot {
    pub holder: u64,
    pub at: usize,
    pub ext: Extent,
}

/// A file's extents (its slots that map blocks), its first empty slot,
/// and its chain of extent blocks.
pub(crate) struct Map {
    pub slots: Vec<Slot>,
    pub free: Option<Slot>,
    pub chain: Vec<u64>,
}

impl Map {
    /// The slot whose extent maps file block `f`, and the disk block
    /// holding it.
    pub fn slot(&self, f: u64) -> Option<(Slot, u64)> {
        self.slots.iter().find_map(|s| Some((*s, s.ext.map(f)?)))
    }

    /// The disk block holding file block `f`, and the block claiming it.
    pub fn find(&self, f: u64) -> Option<(u64, u64)> {
        self.slot(f).map(|(s, b)| (b, s.holder))
    }

    /// Notes slot `s`: an extent, or the first empty slot.
    fn add(&mut self, s: Slot) {
        match s.ext.is_empty() {
            false => self.slots.push(s),
            true if self.free.is_none() => self.free = Some(s),
            true => {}
        }
    }
}

impl<C: XnClient> Fs<C> {
    /// File `inode`'s (at `loc`) extents. Called at every read and write:
    /// an extent block's empty slots are passed over by their first word,
    /// not decoded (most of a big file's 254 are empty).
    pub(crate) fn map(&mut self, loc: Loc, inode: &Inode) -> Result<Map> {
        let mut map = Map { slots: Vec::new(), free: None, chain: Vec::new() };
        if inode.is_inline() {
            return Ok(map);
        }
        for (i, &ext) in inode.ext.iter().enumerate() {
            map.add(Slot { holder: loc.block, at: loc.off() + 64 + 16 * i, ext });
        }
        let mut b = inode.ext_block;
        while b != 0 {
            if map.chain.len() as u64 > self.xn.nblocks() {
                return Err(Errno::Corrupt("extent chain loops"));
            }
            let bytes = self.bytes(b)?;
            let head = ExtHead::decode(&bytes[..EXT_AT])?;
            for (i, raw) in bytes[EXT_AT..].as_chunks::<16>().0.iter().take(EXT_PER_BLOCK).enumerate() {
                if raw[..8] != [0; 8] || map.free.is_none() {
                    map.add(Slot { holder: b, at: EXT_AT + 16 * i, ext: Extent::decode(raw) });
                }
            }
            map.chain.push(b);
            b = head.next;
        }
        Ok(map)
    }

    /// Keeps the caller's copy of the inode in step with an extent slot
    /// rewritten in its entry (`holder` is the entry's block; a slot of
    /// an extent block is not the inode's, whatever its offset).
    fn mirror(loc: Loc, inode: &mut Inode, holder: u64, at: usize, ext: Extent) {
        if holder != loc.block {
            return;
        }
        if let Some(i) = at.checked_sub(loc.off() + 64).map(|d| d / 16).filter(|&i| i < EXTENTS) {
            inode.ext[i] = ext;
        }
    }

    /// Allocates disk blocks for the unmapped file blocks `f..f + n`,
    /// extending an extent where the new blocks follow it on disk, and
    /// installs them as `fill` says.
    pub(crate) fn grow(&mut self, loc: Loc, inode: &mut Inode, f: u64, n: u64, fill: Fill) -> Result<()> {
        let (mut f, mut left) = (f, n);
        while left > 0 {
            let map = self.map(loc, inode)?;
            let goal = match f.checked_sub(1).and_then(|p| map.find(p)) {
                Some((b, _)) => b + 1,
                None => self.goal(loc, f, inode.is_dir()),
            };
            let (start, count) = self.find_free(goal, left.min(u64::from(u32::MAX)))?;
            let grows =
                map.slots.iter().find(|s| s.ext.end() == f && s.ext.start + u64::from(s.ext.count) == start);
            let slot = match grows.or(map.free.as_ref()) {
                Some(s) => *s,
                None => {
                    self.extend_chain(loc, inode, &map, goal)?;
                    continue;
                }
            };
            let ext = if slot.ext.is_empty() {
                Extent { start, count: count as u32, fblock: f as u32 }
            } else {
                Extent { count: slot.ext.count + count as u32, ..slot.ext }
            };
            let bytes = ext.encode();
            self.xn.modify(
                &[Change { block: slot.holder, off: slot.at, bytes: &bytes }],
                &[(start, count)],
                &[],
            )?;
            Self::mirror(loc, inode, slot.holder, slot.at, ext);
            let holder = Parent::Block(slot.holder);
            match fill {
                Fill::Unwritten => {}
                Fill::Zeros => self.xn.insert_zeroed(holder, start, count)?,
                Fill::With(data) => {
                    for b in start..start + count {
                        self.xn.insert_new(holder, b, data)?;
                    }
                }
            }
            if !self.opts.group || f >= crate::fs::SMALL_BLOCKS {
                self.cursor = start + count;
            }
            f += count;
            left -= count;
        }
        Ok(())
    }

    /// Adds an extent block at the end of the chain.
    fn extend_chain(&mut self, loc: Loc, inode: &mut Inode, map: &Map, goal: u64) -> Result<()> {
        let (holder, at) = match map.chain.last() {
            Some(&last) => (last, 8),
            None => (loc.block, loc.off() + 128),
        };
        let (x, _) = self.find_free(goal, 1)?;
        self.xn.modify(&[Change { block: holder, off: at, bytes: &x.to_le_bytes() }], &[(x, 1)], &[])?;
        if holder == loc.block {
            inode.ext_block = x;
        }
        let mut data = [0u8; BLOCK];
        let head = ExtHead { dir: inode.is_dir(), next: 0, uid: inode.uid, gid: inode.gid, mode: inode.mode };
        data[..EXT_AT].copy_from_slice(&head.encode());
        self.xn.insert_new(Parent::Block(holder), x, &data)?;
        Ok(())
    }

    /// Makes data block `b`, which `slot`'s extent maps, cached and bound
    /// here (for writing if asked). A block no one cached is read with
    /// explicit grouping: with the uncached blocks after it that the same
    /// block claims (XN's claims say which). One another process cached
    /// is bound with the cached rest of its extent in one call, without
    /// asking XN for claims (a reader of files others wrote asked once a
    /// block).
    pub(crate) fn data_ready(&mut self, b: u64, slot: Slot, write: bool) -> Result<()> {
        let holder = Parent::Block(slot.holder);
        let most = if self.opts.group { GROUP_READ } else { 1 };
        let here = self.xn.cached(b);
        if !here && self.xn.registered(b) {
            let end = slot.ext.start + u64::from(slot.ext.count);
            let mut k = 1;
            while k < most && b + k < end && self.xn.registered(b + k) {
                k += 1;
            }
            return Ok(self.xn.bind_run(holder, b, k, write)?);
        }
        if !here {
            let claims = self.xn.claims(slot.holder).unwrap_or_default();
            let claimed = |x: u64| claims.iter().any(|c| c.contains(x) && c.tid == self.tid_data);
            let mut k = 1;
            while k < most && claimed(b + k) && !self.xn.cached(b + k) {
                k += 1;
            }
            self.xn.read(holder, b, k)?;
        }
        if write {
            self.xn.bind_run(holder, b, 1, true)?;
        }
        Ok(())
    }

    pub fn read(&mut self, ino: u64, off: u64, buf: &mut [u8]) -> Result<usize> {
        self.read_upto(ino, off, buf, None)
    }

    /// `read` to `size`, the size a caller that keeps it in memory knows
    /// (`write_data` left the entry's behind): past the extents, zeros.
    pub fn read_sized(&mut self, ino: u64, off: u64, buf: &mut [u8], size: u64) -> Result<usize> {
        self.read_upto(ino, off, buf, Some(size))
    }

    fn read_upto(&mut self, ino: u64, off: u64, buf: &mut [u8], size: Option<u64>) -> Result<usize> {
        let (loc, mut inode) = self.load(ino)?;
        if inode.is_dir() {
            return Err(Errno::IsDir);
        }
        if !self.allowed(&inode, 4) {
            return Err(Errno::Access);
        }
        if !inode.is_inline() {
            inode.size = size.unwrap_or(inode.size).min(MAX_FILE);
        }
        if off >= inode.size {
            return Ok(0);
        }
        let n = (buf.len() as u64).min(inode.size - off) as usize;
        if inode.is_inline() {
            let from = (off as usize).min(INLINE_MAX);
            let to = (from + n).min(INLINE_MAX);
            buf[..to - from].copy_from_slice(&inode.inline[from..to]);
            buf[to - from..n].fill(0);
            return Ok(n);
        }
        let map = self.map(loc, &inode)?;
        let mut done = 0;
        while done < n {
            let pos = off + done as u64;
            let (f, within) = (pos / BLOCK as u64, (pos % BLOCK as u64) as usize);
            let len = (BLOCK - within).min(n - done);
            let out = &mut buf[done..done + len];
            match map.slot(f) {
                Some((slot, b)) => {
                    self.data_ready(b, slot, false)?;
                    out.copy_from_slice(&self.xn.block(b)?[within..within + len]);
                }
                None => out.fill(0),
            }
            done += len;
        }
        Ok(n)
    }

    /// The disk blocks holding file `ino`'s first `size` bytes, file block
    /// by file block (None: a hole), each cached and readable through
    /// `XnClient::block` (bound for reading, XN checking the caller's
    /// identity): what a library maps instead of copying (lxrt's exec).
    /// None for a file whose data is inline in its entry.
    pub fn data_blocks(&mut self, ino: u64, size: u64) -> Result<Option<Vec<Option<u64>>>> {
        let (loc, inode) = self.load(ino)?;
        if inode.is_dir() {
            return Err(Errno::IsDir);
        }
        if !self.allowed(&inode, 4) {
            return Err(Errno::Access);
        }
        if inode.is_inline() {
            return Ok(None);
        }
        let map = self.map(loc, &inode)?;
        let mut blocks = Vec::new();
        for f in 0..size.min(MAX_FILE).div_ceil(BLOCK as u64) {
            let b = map.slot(f);
            if let Some((slot, b)) = b {
                self.data_ready(b, slot, false)?;
            }
            blocks.push(b.map(|(_, b)| b));
        }
        Ok(Some(blocks))
    }

    /// Where data (`hole` false) or a hole (`hole` true) starts at or
    /// after `off`, as `lseek`'s `SEEK_DATA` and `SEEK_HOLE` answer: a hole
    /// is a run of file blocks no extent maps, and the end of the file is
    /// one. None when `off` is at or past the end, or no data follows it
    /// (`ENXIO`).
    pub fn seek(&mut self, ino: u64, off: u64, hole: bool) -> Result<Option<u64>> {
        let (loc, inode) = self.load(ino)?;
        if off >= inode.size {
            return Ok(None);
        }
        if inode.is_inline() {
            return Ok(Some(if hole { inode.size } else { off }));
        }
        let map = self.map(loc, &inode)?;
        let mut runs: Vec<(u64, u64)> = map
            .slots
            .iter()
            .filter(|s| !s.ext.is_empty())
            .map(|s| (u64::from(s.ext.fblock), s.ext.end()))
            .collect();
        runs.sort_unstable();
        let block = BLOCK as u64;
        let mut f = off / block;
        if hole {
            for &(from, to) in &runs {
                if from > f {
                    break;
                }
                f = f.max(to);
            }
            return Ok(Some((f * block).clamp(off, inode.size)));
        }
        let at = runs.iter().find(|&&(_, to)| to > f).map(|&(from, _)| (from.max(f) * block).max(off));
        Ok(at.filter(|&a| a < inode.size))
    }

    pub fn write(&mut self, ino: u64, off: u64, data: &[u8]) -> Result<usize> {
        self.write_with(ino, off, data, false)?;
        Ok(data.len())
    }

    /// `write` for a caller that keeps the file's size and times in memory
    /// (lxrt's shared inode, as ext4 keeps a dirty inode): data in blocks
    /// does not rewrite the entry; the caller `settle`s it once, before a
    /// close, `fsync` or `sync` makes it durable. Inline data lives in the
    /// entry, so it is always written. True when the entry is left behind.
    pub fn write_data(&mut self, ino: u64, off: u64, data: &[u8]) -> Result<bool> {
        self.write_with(ino, off, data, true)
    }

    fn write_with(&mut self, ino: u64, off: u64, data: &[u8], lazy: bool) -> Result<bool> {
        let (loc, mut inode) = self.load(ino)?;
        if inode.is_dir() {
            return Err(Errno::IsDir);
        }
        if !self.allowed(&inode, 2) {
            return Err(Errno::Access);
        }
        if data.is_empty() {
            return Ok(false);
        }
        let end = off.checked_add(data.len() as u64).filter(|&e| e <= MAX_FILE).ok_or(Errno::FileTooBig)?;
        self.write_inode(loc, &mut inode, off, data)?;
        self.grown.insert(ino);
        if lazy && !inode.is_inline() {
            return Ok(true);
        }
        inode.size = inode.size.max(end);
        self.stamp(&mut inode);
        self.set_inode(loc, &inode, &[], &[])?;
        Ok(false)
    }

    /// Writes the size and modification time a caller kept in memory
    /// (`write_data`) into file `ino`'s entry (an inline file's size is
    /// the entry's already).
    pub fn settle(&mut self, ino: u64, size: u64, mtime: i64) -> Result<()> {
        let (loc, mut inode) = self.resizable(ino, size)?;
        if !inode.is_inline() {
            inode.size = size;
        }
        (inode.mtime, inode.ctime) = (mtime, mtime.max(inode.ctime));
        self.set_inode(loc, &inode, &[], &[])?;
        self.grown.insert(ino);
        Ok(())
    }

    /// Appends at the end of the file (`O_APPEND`): the offset is the size
    /// at the moment of the write. Returns where the data went.
    pub fn append(&mut self, ino: u64, data: &[u8]) -> Result<u64> {
        let (_, inode) = self.load(ino)?;
        self.write(ino, inode.size, data)?;
        Ok(inode.size)
    }

    fn write_inode(&mut self, loc: Loc, inode: &mut Inode, off: u64, data: &[u8]) -> Result<()> {
        let end = off + data.len() as u64;
        let empty = inode.size == 0 && inode.ext.iter().all(Extent::is_empty) && inode.ext_block == 0;
        let fits = end <= INLINE_MAX as u64 && may_inline(inode.mode);
        if self.opts.embed && fits && (inode.is_inline() || empty) {
            inode.flags |= F_INLINE;
            inode.inline[off as usize..end as usize].copy_from_slice(data);
            return Ok(());
        }
        if inode.is_inline() {
            self.move_out(loc, inode)?;
        }
        self.write_blocks(loc, inode, off, data)
    }

    /// Moves an inline file's bytes out of its entry into a block of its
    /// own (the entry's copy cleared).
    pub(crate) fn move_out(&mut self, loc: Loc, inode: &mut Inode) -> Result<()> {
        let old = inode.inline[..inode.size as usize].to_vec();
        inode.flags &= !F_INLINE;
        inode.inline = [0; INLINE_MAX];
        inode.ext = [Extent::default(); EXTENTS];
        inode.ext_block = 0;
        self.set_inode(loc, inode, &[], &[])?;
        if old.is_empty() {
            return Ok(());
        }
        self.write_blocks(loc, inode, 0, &old)
    }

    pub(crate) fn write_blocks(&mut self, loc: Loc, inode: &mut Inode, off: u64, data: &[u8]) -> Result<()> {
        let first = off / BLOCK as u64;
        let last = (off + data.len() as u64 - 1) / BLOCK as u64;
        let map = self.map(loc, inode)?;
        let mut f = first;
        while f <= last {
            if map.find(f).is_some() {
                f += 1;
                continue;
            }
            let mut g = f;
            while g <= last && map.find(g).is_none() {
                g += 1;
            }
            self.grow(loc, inode, f, g - f, Fill::Zeros)?;
            f = g;
        }
        let map = self.map(loc, inode)?;
        let mut done = 0usize;
        while done < data.len() {
            let pos = off + done as u64;
            let (f, within) = (pos / BLOCK as u64, (pos % BLOCK as u64) as usize);
            let len = (BLOCK - within).min(data.len() - done);
            let (slot, b) = map.slot(f).ok_or(Errno::Corrupt("block vanished"))?;
            self.data_ready(b, slot, true)?;
            self.xn.block_mut(b)?[within..within + len].copy_from_slice(&data[done..done + len]);
            done += len;
        }
        Ok(())
    }

    /// File `ino`, where it is: a regular file the caller may write,
    /// `size` within C-FFS's largest.
    fn resizable(&mut self, ino: u64, size: u64) -> Result<(Loc, Inode)> {
        let (loc, inode) = self.load(ino)?;
        if inode.is_dir() {
            return Err(Errno::IsDir);
        }
        if !self.allowed(&inode, 2) {
            return Err(Errno::Access);
        }
        if size > MAX_FILE {
            return Err(Errno::FileTooBig);
        }
        Ok((loc, inode))
    }

    pub fn truncate(&mut self, ino: u64, size: u64) -> Result<()> {
        let (loc, mut inode) = self.resizable(ino, size)?;
        if inode.is_inline() {
            if size <= INLINE_MAX as u64 {
                inode.inline[size as usize..].fill(0);
            } else {
                self.move_out(loc, &mut inode)?;
            }
        } else if size < inode.size {
            self.shrink(loc, &mut inode, size.div_ceil(BLOCK as u64))?;
            let tail = (size % BLOCK as u64) as usize;
            if tail != 0 {
                let map = self.map(loc, &inode)?;
                if let Some((slot, b)) = map.slot(size / BLOCK as u64) {
                    self.data_ready(b, slot, true)?;
                    self.xn.block_mut(b)?[tail..].fill(0);
                }
            }
        }
        inode.size = size;
        self.stamp(&mut inode);
        self.set_inode(loc, &inode, &[], &[])?;
        self.grown.insert(ino);
        Ok(())
    }

    /// Frees every block from file block `keep` on, then the extent blocks
    /// left empty at the chain's end.
    pub(crate) fn shrink(&mut self, loc: Loc, inode: &mut Inode, keep: u64) -> Result<()> {
        let map = self.map(loc, inode)?;
        let mut holders: Vec<u64> = map.chain.iter().rev().copied().collect();
        holders.push(loc.block);
        for h in holders {
            // (slot offset, new bytes, blocks freed)
            let mut items: Vec<(usize, [u8; 16], (u64, u64))> = Vec::new();
            for s in map.slots.iter().filter(|s| s.holder == h && !s.ext.is_empty() && s.ext.end() > keep) {
                let (ext, freed) = if u64::from(s.ext.fblock) >= keep {
                    (Extent::default(), (s.ext.start, u64::from(s.ext.count)))
                } else {
                    let count = (keep - u64::from(s.ext.fblock)) as u32;
                    (
                        Extent { count, ..s.ext },
                        (s.ext.start + u64::from(count), u64::from(s.ext.count - count)),
                    )
                };
                Self::mirror(loc, inode, h, s.at, ext);
                items.push((s.at, ext.encode(), freed));
            }
            for part in items.chunks(xn::MAX_CHANGES) {
                let ch: Vec<Change> =
                    part.iter().map(|(at, b, _)| Change { block: h, off: *at, bytes: b }).collect();
                let fr: Vec<(u64, u64)> = part.iter().map(|i| i.2).collect();
                self.xn.modify(&ch, &[], &fr)?;
            }
        }
        // Unhook extent blocks left empty at the chain's end.
        let mut chain = map.chain;
        while let Some(&last) = chain.last() {
            let bytes = self.bytes(last)?;
            if (0..EXT_PER_BLOCK).any(|i| !Extent::decode(&bytes[EXT_AT + 16 * i..]).is_empty()) {
                break;
            }
            chain.pop();
            let (holder, at) = match chain.last() {
                Some(&prev) => (prev, 8),
                None => (loc.block, loc.off() + 128),
            };
            self.xn.modify(
                &[Change { block: holder, off: at, bytes: &0u64.to_le_bytes() }],
                &[],
                &[(last, 1)],
            )?;
            if holder == loc.block {
                inode.ext_block = 0;
            }
        }
        Ok(())
    }
}
