//! Getting blocks to disk in an order that survives a crash, and mount
//! recovery. XN refuses to write a block that points to one not yet
//! durable, so C-FFS writes in rounds: every dirty block whose children
//! are durable, then a flush, until the targets are durable. Its own
//! orders (a reference is written only once the table inode it names is
//! durable; a table inode is freed only once the references to it are
//! gone from disk) are kept by making the earlier block durable at once,
//! as FFS writes inodes synchronously: only references (hard links, or
//! embedding turned off) pay for it.

use alloc::collections::{BTreeMap, BTreeSet};

use alloc::vec::Vec;

use xn::Change;

use crate::client::XnClient;
use crate::format::{Inode, ENTRIES, ENTRY, E_FREE, E_INODE, E_REF, KIND_ITABLE, S_IFDIR, S_IFMT};
use crate::fs::{Fs, Loc, Stat, ROOT_INO};
use crate::{Errno, Result, BLOCK};

/// How far one round of writing toward durability went (`Fs::sync_step`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Nothing was left to write or flush.
    Done,
    /// Some of the blocks ready were written; more are.
    Wrote,
    /// Every block ready was written, then the disk flushed.
    Flushed,
}

/// A sync made in steps (`Fs::sync_start`, `Fs::sync_step`): its
/// targets, and the round under way: its ready blocks, written up to
/// `at`.
pub struct Syncing {
    targets: Vec<u64>,
    ready: Vec<u64>,
    at: usize,
}

/// Flushed rounds after which the write order is taken never to settle.
pub const ROUNDS: usize = 64;
const NEVER_SETTLES: Errno = Errno::Corrupt("write order never settles");

impl<C: XnClient> Fs<C> {
    fn unsettled(&self, b: u64) -> bool {
        self.xn.dirty(b) || self.xn.pending(b)
    }

    /// The targets and everything they wait for: children not yet durable
    /// (XN's taint).
    fn closure(&self, targets: &[u64]) -> BTreeSet<u64> {
        let mut out = BTreeSet::new();
        let mut todo: Vec<u64> = targets.to_vec();
        while let Some(b) = todo.pop() {
            if !self.unsettled(b) || !out.insert(b) {
                continue;
            }
            for c in self.xn.claims(b).unwrap_or_default() {
                todo.extend((c.start..c.end()).filter(|&x| self.xn.pending(x)));
            }
        }
        out
    }

    /// A step of the rounds that make `s.targets` durable: a round starts
    /// by finding the dirty blocks of their closure whose children are
    /// durable; up to `most` of them are written, by runs of consecutive
    /// blocks (each checked again: the caller may have let others run
    /// since the round began), and the disk is flushed once none is left.
    fn advance(&mut self, s: &mut Syncing, most: usize) -> Result<Step> {
        if s.ready.is_empty() {
            let set = self.closure(&s.targets);
            if set.is_empty() {
                return Ok(Step::Done);
            }
            s.ready = set.into_iter().filter(|&b| self.ready(b)).collect();
            s.at = 0;
        }
        let end = s.ready.len().min(s.at.saturating_add(most.max(1)));
        while s.at < end {
            let b = s.ready[s.at];
            if !self.ready(b) {
                s.at += 1;
                continue;
            }
            let mut n = 1;
            while s.at + n < end && s.ready[s.at + n] == b + n as u64 && self.ready(b + n as u64) {
                n += 1;
            }
            self.xn.write(b, n as u64)?;
            s.at += n;
        }
        if s.at < s.ready.len() {
            return Ok(Step::Wrote);
        }
        s.ready.clear();
        self.xn.flush()?;
        Ok(Step::Flushed)
    }

    fn ready(&self, b: u64) -> bool {
        self.xn.dirty(b) && self.xn.taint(b).is_none()
    }

    /// Writes and flushes until every target is durable.
    pub(crate) fn durable(&mut self, targets: &[u64]) -> Result<()> {
        let mut s = Syncing { targets: targets.to_vec(), ready: Vec::new(), at: 0 };
        for _ in 0..ROUNDS {
            if self.advance(&mut s, usize::MAX)? == Step::Done {
                return Ok(());
            }
        }
        Err(NEVER_SETTLES)
    }

    /// Everything to disk (`sync`, `syncfs`).
    pub fn sync(&mut self) -> Result<()> {
        let dirty = self.xn.dirty_blocks();
        self.durable(&dirty)?;
        self.grown.clear();
        self.xn.flush()?;
        Ok(())
    }

    /// A `sync` to make in steps (`sync_step`): what is dirty now.
    pub fn sync_start(&self) -> Syncing {
        Syncing { targets: self.xn.dirty_blocks(), ready: Vec::new(), at: 0 }
    }

    /// The next step of sync `s`, writing at most `most` blocks, so that a
    /// caller may let others run between steps (a library that holds a
    /// lock for the call; `Step::Flushed` steps are at most `ROUNDS`):
    /// `Done` once its targets are durable.
    pub fn sync_step(&mut self, s: &mut Syncing, most: usize) -> Result<Step> {
        let step = self.advance(s, most)?;
        if step == Step::Done {
            self.grown.clear();
            self.xn.flush()?;
        }
        Ok(step)
    }

    /// The blocks holding one file: its entry block, extent blocks and
    /// (if `data`) its dirty data blocks.
    pub(crate) fn file_blocks(&mut self, ino: u64, inode_too: bool) -> Result<Vec<u64>> {
        let (loc, inode) = self.load(ino)?;
        let map = self.map(loc, &inode)?;
        let mut v: Vec<u64> = Vec::new();
        if inode_too {
            v.push(loc.block);
            v.extend(&map.chain);
        }
        for s in map.slots.iter().filter(|s| !s.ext.is_empty()) {
            v.extend((s.ext.start..s.ext.start + u64::from(s.ext.count)).filter(|&b| self.xn.dirty(b)));
        }
        Ok(v)
    }

    /// The file's data and inode, and its name (an embedded inode is in
    /// its directory entry; a table inode's names are made durable by a
    /// full sync).
    pub fn fsync(&mut self, ino: u64) -> Result<()> {
        let (loc, _) = self.load(ino)?;
        if self.header(loc.block)?.kind == KIND_ITABLE {
            return self.sync();
        }
        let mut blocks = self.file_blocks(ino, true)?;
        // The entry block must be reachable on disk too: a directory's new
        // block is named only by its parent's new extent, and so up.
        let mut b = loc.block;
        for _ in 0..self.xn.nblocks() {
            match self.xn.parent(b) {
                Some(xn::Parent::Block(p)) if self.unsettled(p) => {
                    blocks.push(p);
                    b = p;
                }
                _ => break,
            }
        }
        self.durable(&blocks)?;
        self.grown.remove(&ino);
        Ok(())
    }

    /// The file's data, and its inode only if the size or the block map
    /// may have changed: here, or in another library that changed the
    /// file (its entry's block is not settled: `grown` is this one's).
    pub fn fdatasync(&mut self, ino: u64) -> Result<()> {
        let (loc, _) = self.load(ino)?;
        if self.grown.contains(&ino) || self.unsettled(loc.block) {
            return self.fsync(ino);
        }
        let blocks = self.file_blocks(ino, false)?;
        self.durable(&blocks)
    }

    /// Whether inode `ino` is where this library last saw it (no scan:
    /// `stat` of a directory counts its subdirectories).
    pub fn exists(&mut self, ino: u64) -> bool {
        self.load(ino).is_ok()
    }

    pub fn stat(&mut self, ino: u64) -> Result<Stat> {
        let (loc, inode) = self.load(ino)?;
        let map = self.map(loc, &inode)?;
        let mut blocks: u64 = map.slots.iter().map(|s| u64::from(s.ext.count)).sum();
        blocks += map.chain.len() as u64;
        let nlink = if inode.is_dir() {
            2 + self.scan(ino)?.iter().filter(|d| d.is_dir()).count() as u32
        } else {
            inode.nlink
        };
        Ok(Stat {
            ino,
            mode: inode.mode,
            nlink,
            uid: inode.uid,
            gid: inode.gid,
            size: inode.size,
            blocks: blocks * (BLOCK as u64 / 512),
            atime: inode.atime,
            mtime: inode.mtime,
            ctime: inode.ctime,
        })
    }

    /// Every directory reachable from the root, breadth first.
    pub(crate) fn all_dirs(&mut self) -> Result<Vec<u64>> {
        let mut dirs = alloc::vec![ROOT_INO];
        let mut i = 0;
        while i < dirs.len() {
            let d = dirs[i];
            for e in self.scan(d)? {
                if e.mode & S_IFMT == S_IFDIR {
                    if dirs.len() as u64 > self.xn.nblocks() * ENTRIES as u64 {
                        return Err(Errno::Corrupt("directory tree loops"));
                    }
                    dirs.push(e.ino);
                }
            }
            i += 1;
        }
        Ok(dirs)
    }

    /// The inode table's blocks, in chain order.
    pub(crate) fn table_blocks(&mut self) -> Result<Vec<u64>> {
        let mut out = Vec::new();
        let mut b = self.header(self.root)?.next;
        while b != 0 {
            if out.len() as u64 > self.xn.nblocks() {
                return Err(Errno::Corrupt("inode table loops"));
            }
            out.push(b);
            b = self.header(b)?.next;
        }
        Ok(out)
    }

    /// Table inodes: where each is and what it says.
    pub(crate) fn table(&mut self) -> Result<Vec<(Loc, Inode)>> {
        let mut out = Vec::new();
        for b in self.table_blocks()? {
            let bytes = self.bytes(b)?;
            for e in (1..=ENTRIES).filter(|&e| bytes[e * ENTRY] == E_INODE) {
                out.push((Loc { block: b, entry: e }, Inode::decode(&bytes[e * ENTRY..])));
            }
        }
        Ok(out)
    }

    /// Mount-time recovery: a pending intent is finished or forgotten; a
    /// block still claimed twice means damage (refused); table inodes get
    /// the link count of the references found, and those with none are
    /// freed (a crash between writing a reference and the count).
    pub(crate) fn recover(&mut self) -> Result<()> {
        let intent = self.header(self.root)?.intent;
        if intent.kind != 0 {
            self.finish_intent(intent)?;
        }
        let table = self.table()?;
        if table.is_empty() {
            return Ok(());
        }
        let mut refs: BTreeMap<Loc, u32> = BTreeMap::new();
        let mut dangling = Vec::new();
        for d in self.all_dirs()? {
            for e in self.scan(d)?.into_iter().filter(|e| e.kind == E_REF) {
                let t = *self.locs.get(&e.ino).ok_or(Errno::Corrupt("reference lost"))?;
                if table.iter().any(|(l, i)| *l == t && i.ino == e.ino) {
                    *refs.entry(t).or_default() += 1;
                } else {
                    dangling.push(e);
                }
            }
        }
        if !dangling.is_empty() {
            return Err(Errno::Corrupt("reference to a free table inode"));
        }
        let mut changed = Vec::new();
        for (loc, mut inode) in table {
            let n = refs.get(&loc).copied().unwrap_or(0);
            if n == inode.nlink {
                continue;
            }
            if n == 0 {
                let free = crate::dir::claims_of(&inode);
                let zero = [E_FREE; ENTRY];
                self.xn.modify(&[Change { block: loc.block, off: loc.off(), bytes: &zero }], &[], &free)?;
            } else {
                inode.nlink = n;
                self.set_inode(loc, &inode, &[], &[])?;
            }
            changed.push(loc.block);
        }
        self.durable(&changed)
    }
}
