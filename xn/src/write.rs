//! Writing cached blocks back, and flushing (paper 000 §4.3.2, §4.4
//! "Write"). Two of Ganger and Patt's rules are XN's to enforce:
//!
//! - never point to a structure before it is initialised: a metadata
//!   block that claims a block not yet *durably* initialised (allocated
//!   and not written, or written since the last flush: a disk may reorder
//!   writes it has not flushed) is tainted, and may not be written while
//!   it is reachable from a persistent root;
//! - never reuse a block before every on-disk pointer to it is gone: a
//!   freed block stays on the will-free list until every version of every
//!   block that named it on disk has been replaced by a flushed write
//!   that does not (`Info::disk` counts them).

use alloc::vec::Vec;

use crate::claims::subtract;
use crate::{Cred, Disk, Error, PageId, Pages, Parent, Principal, Xn, BLOCK};

impl<D: Disk, P: Pages> Xn<D, P> {
    /// True if a metadata block hangs below a persistent root.
    pub fn persistent(&self, b: u64) -> bool {
        let mut p = Parent::Block(b);
        for _ in 0..=self.meta.len() {
            match p {
                Parent::Root(i) => return self.sb.roots.get(i).is_some_and(|r| r.persistent),
                Parent::Block(x) => match self.meta.get(&x) {
                    Some(m) => p = m.parent,
                    None => return false,
                },
            }
        }
        false
    }

    /// The first claimed block of `b` that is not durably initialised.
    pub fn taint(&self, b: u64) -> Option<u64> {
        let m = self.meta.get(&b)?;
        m.mem.iter().find_map(|c| self.unstable.range(c.start..c.end()).next().copied())
    }

    /// Writes `count` cached blocks from `start` with one disk request.
    /// Anyone may write back a block nobody else holds locked; a tainted
    /// block reachable from a persistent root is refused.
    pub fn write(&mut self, who: Principal, start: u64, count: u64) -> Result<(), Error> {
        if count == 0 || start.checked_add(count).is_none() {
            return Err(Error::BadChange { block: start });
        }
        let mut pages = Vec::with_capacity(count as usize);
        for b in start..start + count {
            let e = self.registry.get(&b).ok_or(Error::NotCached { block: b })?;
            if self.info[b as usize].mem == 0 {
                return Err(Error::NotAllocated { block: b });
            }
            if e.locked_by.is_some_and(|l| l != who) {
                return Err(Error::Locked { block: b });
            }
            if let Some(child) = self.taint(b) {
                if self.persistent(b) {
                    return Err(Error::Tainted { block: b, child });
                }
            }
            self.pages.bytes(e.page).ok_or(Error::BadPage)?;
            pages.push(e.page);
        }
        self.put(start, &pages)?;
        for b in start..start + count {
            if let Some(e) = self.registry.get_mut(&b) {
                e.dirty = false;
            }
            let Some(m) = self.meta.get_mut(&b) else { continue };
            let new = subtract(&m.mem, &m.disk);
            m.last = Some(m.mem.clone());
            if !new.is_empty() {
                m.disk.extend_from_slice(&new);
                m.disk.sort_unstable_by_key(|c| c.start);
                for (x, _) in crate::claims::blocks(&new) {
                    let i = &mut self.info[x as usize];
                    i.disk = i.disk.saturating_add(1);
                    self.touch(x);
                }
            }
        }
        Ok(())
    }

    /// XCP's write (paper 000 §7.2): writes the cache pages of blocks
    /// `src..src + count` to the disk blocks `dst..dst + count` with one
    /// request, the pages staying where they are: the data moves from
    /// the cache to its new blocks without passing through the library.
    /// The destination is checked as a write through a binding would be:
    /// data blocks `parent` claims with one template, whose `acl` lets
    /// `cred` write them, and not cached (a cached copy would no longer
    /// be what the disk holds). The sources must be cached and bound to
    /// `who` (its read was checked), not locked by another principal.
    /// Ordering needs nothing more: a data block claims nothing, and the
    /// destination stays unstable, its parent tainted, until a flush.
    pub fn copy(
        &mut self,
        who: Principal,
        cred: Cred,
        parent: Parent,
        dst: u64,
        src: u64,
        count: u64,
    ) -> Result<(), Error> {
        if count == 0 {
            return Err(Error::BadChange { block: dst });
        }
        for b in [dst, src] {
            let last = b.checked_add(count - 1).ok_or(Error::OutOfRange { block: b })?;
            self.in_range(b)?;
            self.in_range(last)?;
        }
        let (tid, slots) = self.claimed_by(parent, dst, count)?;
        if self.tmpl(tid)?.is_metadata() {
            return Err(Error::MetadataNotWritable { block: dst });
        }
        for slot in slots {
            self.bind_allowed(cred, parent, slot, dst, true)?;
        }
        if let Some(b) = (dst..dst + count).find(|b| self.registry.contains_key(b)) {
            return Err(Error::AlreadyCached { block: b });
        }
        let mut pages = Vec::with_capacity(count as usize);
        for b in src..src + count {
            let e = self.registry.get(&b).ok_or(Error::NotCached { block: b })?;
            if !self.bindings.contains_key(&(b, who)) {
                return Err(Error::NotBound { block: b });
            }
            if e.locked_by.is_some_and(|l| l != who) {
                return Err(Error::Locked { block: b });
            }
            pages.push(e.page);
        }
        self.put(dst, &pages)
    }

    /// Writes `pages` to the blocks from `start` with one request; the
    /// blocks are initialised, and written since the last flush.
    fn put(&mut self, start: u64, pages: &[PageId]) -> Result<(), Error> {
        if !self.disk.write_pages(start, pages)? {
            let mut buf = Vec::with_capacity(pages.len() * BLOCK);
            for &p in pages {
                buf.extend_from_slice(self.pages.bytes(p).ok_or(Error::BadPage)?);
            }
            self.disk.write(start, &buf)?;
        }
        self.stats.writes += 1;
        for b in start..start + pages.len() as u64 {
            self.info[b as usize].uninit = false;
            self.written.insert(b);
            self.touch(b);
        }
        Ok(())
    }

    /// Flushes the disk. Afterwards every block written before is durably
    /// initialised, every metadata block's on-disk claims are those of its
    /// last written version, and freed blocks no longer named on disk
    /// leave the will-free list.
    pub fn flush(&mut self) -> Result<(), Error> {
        self.disk.flush()?;
        self.stats.flushes += 1;
        let written = core::mem::take(&mut self.written);
        let mut released = Vec::new();
        for b in written {
            self.unstable.remove(&b);
            self.touch(b);
            let Some(m) = self.meta.get_mut(&b) else { continue };
            let Some(last) = m.last.take() else { continue };
            let gone = subtract(&m.disk, &last);
            m.disk = last;
            for (x, _) in crate::claims::blocks(&gone) {
                let i = &mut self.info[x as usize];
                i.disk = i.disk.saturating_sub(1);
                released.push(x);
                self.touch(x);
            }
        }
        for x in released {
            self.settle(x);
        }
        Ok(())
    }

    /// Writes every dirty cached block nobody else holds locked, children
    /// before parents, with a flush between levels, then flushes: what a
    /// `sync` daemon does for blocks it does not own.
    pub fn sync_all(&mut self, who: Principal) -> Result<(), Error> {
        for _ in 0..=self.meta.len() + 1 {
            let dirty: Vec<u64> = self
                .registry
                .iter()
                .filter(|(_, e)| e.dirty && e.locked_by.is_none_or(|l| l == who))
                .map(|(b, _)| *b)
                .collect();
            if dirty.is_empty() {
                return self.flush();
            }
            let mut progress = false;
            for b in dirty {
                if self.taint(b).is_none() || !self.persistent(b) {
                    self.write(who, b, 1)?;
                    progress = true;
                }
            }
            self.flush()?;
            if !progress {
                let b = self.registry.iter().find(|(_, e)| e.dirty).map_or(0, |(b, _)| *b);
                let child = self.taint(b).unwrap_or(0);
                return Err(Error::Tainted { block: b, child });
            }
        }
        self.flush()
    }
}
