//! The buffer-cache registry and secure bindings (paper 000 §4.3.1,
//! §4.3.3, §4.4 "Read"). A block enters the registry in one of two ways:
//! "read and insert" (XN reads it into the caller's page, so a reader
//! without write rights cannot install a bogus copy) or, for a block just
//! allocated and never written, a direct insert by a caller with write
//! rights. Access is checked when a principal binds to a cached block
//! (the parent's `acl`, asked about the slot that claims it), not on each
//! use; metadata is never bound writable.

use alloc::vec;
use alloc::vec::Vec;

use crate::udf::{AclQuery, OP_BIND_READ, OP_BIND_WRITE};
use crate::{Cred, Disk, Entry, Error, PageId, Pages, Parent, Principal, Tid, Xn, BLOCK, MAX_RUN, NOBODY};

impl<D: Disk, P: Pages> Xn<D, P> {
    /// The template with which `parent` claims `count` blocks from
    /// `block` (all with one template, possibly through several slots:
    /// explicit grouping reads the small files of one directory at once),
    /// and the slots involved.
    pub(crate) fn claimed_by(
        &self,
        parent: Parent,
        block: u64,
        count: u64,
    ) -> Result<(Tid, Vec<u32>), Error> {
        let end = block.checked_add(count).ok_or(Error::OutOfRange { block })?;
        match parent {
            Parent::Root(i) => {
                let r = self.sb.roots.get(i).ok_or(Error::NoSuchRoot)?;
                if block < r.start || end > r.start + r.count {
                    return Err(Error::NotClaimed { block, parent: r.start });
                }
                Ok((r.tid, vec![0]))
            }
            Parent::Block(p) => {
                let m = self.meta.get(&p).ok_or(Error::NotMetadata { block: p })?;
                let mut tid = None;
                let mut slots = Vec::new();
                let mut b = block;
                while b < end {
                    let c = m
                        .mem
                        .iter()
                        .find(|c| c.contains(b))
                        .ok_or(Error::NotClaimed { block: b, parent: p })?;
                    if *tid.get_or_insert(c.tid) != c.tid {
                        return Err(Error::NotClaimed { block: b, parent: p });
                    }
                    if !slots.contains(&c.slot) {
                        slots.push(c.slot);
                    }
                    b = c.end().min(end);
                }
                Ok((tid.unwrap_or(0), slots))
            }
        }
    }

    /// Asks the parent's `acl` whether `cred` may bind `child` (claimed by
    /// `slot`). Root blocks may be read by anyone; they are changed only
    /// through `modify`, which asks their own `acl`.
    pub(crate) fn bind_allowed(
        &self,
        cred: Cred,
        parent: Parent,
        slot: u32,
        child: u64,
        write: bool,
    ) -> Result<(), Error> {
        let Parent::Block(p) = parent else {
            return if write { Err(Error::Denied { block: child }) } else { Ok(()) };
        };
        let e = self.registry.get(&p).ok_or(Error::NotCached { block: p })?;
        let page = self.pages.bytes(e.page).ok_or(Error::BadPage)?;
        let op = if write { OP_BIND_WRITE } else { OP_BIND_READ };
        let q = AclQuery { op, slot, off: 0, len: 0, child };
        if self.tmpl(e.tid)?.allows(cred, &q, p, page, page)? {
            Ok(())
        } else {
            Err(Error::Denied { block: p })
        }
    }

    /// Read and insert: reads `pages.len()` blocks from `start`, which
    /// `parent` claims, into the caller's pages with one disk request, and
    /// installs them in the registry with a read binding for `who`.
    pub fn read_insert(
        &mut self,
        who: Principal,
        cred: Cred,
        parent: Parent,
        start: u64,
        pages: &[PageId],
    ) -> Result<(), Error> {
        let count = pages.len() as u64;
        if count == 0 {
            return Err(Error::BadChange { block: start });
        }
        let (tid, slots) = self.claimed_by(parent, start, count)?;
        for slot in slots {
            self.bind_allowed(cred, parent, slot, start, false)?;
        }
        for (i, &p) in pages.iter().enumerate() {
            let b = start + i as u64;
            if self.registry.contains_key(&b) {
                return Err(Error::AlreadyCached { block: b });
            }
            if self.info[b as usize].uninit {
                return Err(Error::Uninitialised { block: b });
            }
            if !self.usable(who, p) || pages[..i].contains(&p) {
                return Err(Error::BadPage);
            }
        }
        if !self.disk.read_pages(start, pages)? {
            let mut buf = vec![0u8; pages.len() * BLOCK];
            self.disk.read(start, &mut buf)?;
            for (i, &p) in pages.iter().enumerate() {
                let dst = self.pages.bytes_mut(p).ok_or(Error::BadPage)?;
                dst.copy_from_slice(&buf[i * BLOCK..(i + 1) * BLOCK]);
            }
        }
        self.stats.reads += 1;
        for (i, &p) in pages.iter().enumerate() {
            let b = start + i as u64;
            self.cache(b, Entry { page: p, owner: who, tid, dirty: false, locked_by: None });
            self.bindings.entry((b, who)).or_insert(false);
        }
        Ok(())
    }

    /// Installs a block that was allocated and never written, with the
    /// caller's page as its contents (it needs write rights; a metadata
    /// block must claim nothing yet).
    pub fn insert_new(
        &mut self,
        who: Principal,
        cred: Cred,
        parent: Parent,
        block: u64,
        page: PageId,
    ) -> Result<(), Error> {
        let (tid, slots) = self.claimed_by(parent, block, 1)?;
        if self.registry.contains_key(&block) {
            return Err(Error::AlreadyCached { block });
        }
        if !self.info[block as usize].uninit {
            return Err(Error::NotFresh { block });
        }
        if !self.usable(who, page) {
            return Err(Error::BadPage);
        }
        self.bind_allowed(cred, parent, slots[0], block, true)?;
        let t = self.tmpl(tid)?;
        let data = self.pages.bytes(page).ok_or(Error::BadPage)?;
        if t.is_metadata() && !t.claims(block, data, self.sb.nblocks)?.0.is_empty() {
            return Err(Error::FreshClaims { block });
        }
        let metadata = t.is_metadata();
        self.cache(block, Entry { page, owner: who, tid, dirty: true, locked_by: None });
        self.bindings.insert((block, who), !metadata);
        Ok(())
    }

    /// Binds `who` to a cached block for reading or (data only) writing.
    pub fn bind(
        &mut self,
        who: Principal,
        cred: Cred,
        parent: Parent,
        block: u64,
        write: bool,
    ) -> Result<(), Error> {
        self.bind_run(who, cred, parent, block, 1, write)
    }

    /// Whether `cred` may bind the cached blocks `start..start + count`
    /// (1 to `MAX_RUN`), all of which `parent` claims with one template:
    /// the claim is looked up once and the parent's `acl` asked once per
    /// slot involved (a file's extent is one), not once a block.
    pub fn may_bind_run(
        &self,
        cred: Cred,
        parent: Parent,
        start: u64,
        count: u64,
        write: bool,
    ) -> Result<(), Error> {
        if count == 0 || count > MAX_RUN {
            return Err(Error::BadChange { block: start });
        }
        if start.checked_add(count).is_none_or(|end| end > self.sb.nblocks) {
            return Err(Error::OutOfRange { block: start });
        }
        let (tid, slots) = self.claimed_by(parent, start, count)?;
        if write && self.tmpl(tid)?.is_metadata() {
            return Err(Error::MetadataNotWritable { block: start });
        }
        for b in start..start + count {
            let e = self.registry.get(&b).ok_or(Error::NotCached { block: b })?;
            if e.tid != tid {
                return Err(Error::NotClaimed { block: b, parent: 0 });
            }
        }
        for slot in slots {
            self.bind_allowed(cred, parent, slot, start, write)?;
        }
        Ok(())
    }

    /// Binds `who` to the cached blocks `start..start + count` for reading
    /// or (data only) writing, after `may_bind_run`; a refusal binds none.
    pub fn bind_run(
        &mut self,
        who: Principal,
        cred: Cred,
        parent: Parent,
        start: u64,
        count: u64,
        write: bool,
    ) -> Result<(), Error> {
        self.may_bind_run(cred, parent, start, count, write)?;
        for b in start..start + count {
            *self.bindings.entry((b, who)).or_insert(false) |= write;
        }
        Ok(())
    }

    /// The bytes of a cached block `who` is bound to (its mapping).
    pub fn page(&self, who: Principal, block: u64) -> Result<&[u8; BLOCK], Error> {
        let e = self.registry.get(&block).ok_or(Error::NotCached { block })?;
        if !self.bindings.contains_key(&(block, who)) {
            return Err(Error::NotBound { block });
        }
        self.pages.bytes(e.page).ok_or(Error::BadPage)
    }

    /// The writable bytes of a data block `who` is bound to for writing;
    /// the block becomes dirty (as a store through the mapping would make
    /// it).
    pub fn page_mut(&mut self, who: Principal, block: u64) -> Result<&mut [u8; BLOCK], Error> {
        let e = self.registry.get_mut(&block).ok_or(Error::NotCached { block })?;
        if self.bindings.get(&(block, who)) != Some(&true) {
            return Err(Error::NotBound { block });
        }
        if e.locked_by.is_some_and(|l| l != who) {
            return Err(Error::Locked { block });
        }
        e.dirty = true;
        let page = e.page;
        self.touch(block);
        self.pages.bytes_mut(page).ok_or(Error::BadPage)
    }

    /// `who` says it stored into data blocks `start..start + count` through
    /// its writable bindings (the kernel does not see stores into a
    /// mapping): they become dirty, so anyone's write-back (a `sync`, the
    /// periodic one) finds them after `who` has gone. Each block must be
    /// cached, bound writable to `who` (so metadata never is: it changes
    /// only through `modify`) and not locked by another; a refusal marks
    /// none.
    pub fn mark_dirty(&mut self, who: Principal, start: u64, count: u64) -> Result<(), Error> {
        let end = start.checked_add(count).filter(|_| count > 0).ok_or(Error::BadChange { block: start })?;
        for b in start..end {
            let e = self.registry.get(&b).ok_or(Error::NotCached { block: b })?;
            if self.bindings.get(&(b, who)) != Some(&true) {
                return Err(Error::NotBound { block: b });
            }
            if e.locked_by.is_some_and(|l| l != who) {
                return Err(Error::Locked { block: b });
            }
        }
        for b in start..end {
            if let Some(e) = self.registry.get_mut(&b) {
                e.dirty = true;
            }
            self.touch(b);
        }
        Ok(())
    }

    /// Locks a cached block against changes and writes by others (paper
    /// 000 §4.3.1, atomic metadata updates).
    pub fn lock(&mut self, who: Principal, block: u64) -> Result<(), Error> {
        let e = self.registry.get_mut(&block).ok_or(Error::NotCached { block })?;
        match e.locked_by {
            Some(l) if l != who => Err(Error::Locked { block }),
            _ => {
                e.locked_by = Some(who);
                self.touch(block);
                Ok(())
            }
        }
    }

    pub fn unlock(&mut self, who: Principal, block: u64) -> Result<(), Error> {
        let e = self.registry.get_mut(&block).ok_or(Error::NotCached { block })?;
        if e.locked_by != Some(who) {
            return Err(Error::Locked { block });
        }
        e.locked_by = None;
        self.touch(block);
        Ok(())
    }

    /// Takes a clean, unlocked block out of the registry and gives its
    /// page back (to its owner; anyone may evict an unowned block).
    pub fn evict(&mut self, who: Principal, block: u64) -> Result<PageId, Error> {
        let e = *self.registry.get(&block).ok_or(Error::NotCached { block })?;
        if e.owner != who && e.owner != NOBODY {
            return Err(Error::NotBound { block });
        }
        if e.dirty || e.locked_by.is_some() {
            return Err(Error::Busy { block });
        }
        self.drop_entry(block);
        Ok(e.page)
    }

    pub(crate) fn drop_entry(&mut self, block: u64) -> Option<PageId> {
        let e = self.registry.remove(&block)?;
        self.touch(block);
        self.cached_pages.remove(&e.page);
        self.pages.released(e.page);
        let who: alloc::vec::Vec<Principal> =
            self.bindings.range((block, 0)..=(block, Principal::MAX)).map(|(k, _)| k.1).collect();
        for w in who {
            self.bindings.remove(&(block, w));
        }
        Some(e.page)
    }

    /// A principal goes away: its entries stay cached but become unowned
    /// (anyone may write them back), its bindings and locks end.
    pub fn release(&mut self, who: Principal) {
        let mut changed = Vec::new();
        for (b, e) in self.registry.iter_mut() {
            if e.owner == who || e.locked_by == Some(who) {
                changed.push(*b);
            }
            if e.owner == who {
                e.owner = NOBODY;
            }
            if e.locked_by == Some(who) {
                e.locked_by = None;
            }
        }
        for b in changed {
            self.touch(b);
        }
        self.bindings.retain(|k, _| k.1 != who);
    }
}
