//! What C-FFS asks of XN, as a trait: the system calls the kernel will
//! expose (docs/xn.md), implemented here by [`Local`], an XN in the same
//! address space (host tools, tests, the crash simulator).

use alloc::vec::Vec;

use xn::{
    Change, Claim, Cred, Disk, Error, HostPages, MountReport, Parent, Principal, Root, TemplateSpec, Tid, Xn,
};

use crate::BLOCK;

pub trait XnClient {
    fn nblocks(&self) -> u64;
    fn is_free(&self, b: u64) -> bool;
    fn template_id(&self, name: &str) -> Option<Tid>;
    fn install(&mut self, specs: &[TemplateSpec]) -> Result<Tid, Error>;
    fn root(&self, name: &str) -> Option<(usize, Root)>;
    /// Adds a persistent root of one block with these contents.
    fn add_root(&mut self, name: &str, block: u64, tid: Tid, data: &[u8; BLOCK]) -> Result<usize, Error>;
    /// Whether block `b` is cached and bound here (usable by `block`).
    fn cached(&self, b: u64) -> bool;
    /// Whether block `b` is in XN's cache, bound here or not (another
    /// library may have read or written it).
    fn registered(&self, b: u64) -> bool;
    /// Read and insert `count` blocks from `start` claimed by `parent`.
    fn read(&mut self, parent: Parent, start: u64, count: u64) -> Result<(), Error>;
    /// Makes `count` blocks from `start` (claimed by `parent`) cached and
    /// bound here for XN's own use (`copy`), reading those no one cached
    /// in one request per run; unlike `read`, they need not be readable
    /// by this library (no mapping is made for them).
    fn fetch(&mut self, parent: Parent, start: u64, count: u64) -> Result<(), Error>;
    /// XCP's write (paper 000 §7.2): the cached blocks `src..src + count`
    /// written to the blocks `dst..dst + count`, data blocks `parent`
    /// claims, never cached; the data does not pass through here.
    fn copy(&mut self, parent: Parent, dst: u64, src: u64, count: u64) -> Result<(), Error>;
    /// Inserts a just-allocated block with these contents.
    fn insert_new(&mut self, parent: Parent, b: u64, data: &[u8; BLOCK]) -> Result<(), Error>;
    /// Inserts `count` just-allocated blocks from `start`, all zeros.
    fn insert_zeroed(&mut self, parent: Parent, start: u64, count: u64) -> Result<(), Error>;
    /// Binds the cached blocks `start..start + count` here, for writing if
    /// asked.
    fn bind_run(&mut self, parent: Parent, start: u64, count: u64, write: bool) -> Result<(), Error>;
    fn block(&self, b: u64) -> Result<&[u8; BLOCK], Error>;
    fn block_mut(&mut self, b: u64) -> Result<&mut [u8; BLOCK], Error>;
    fn modify(&mut self, changes: &[Change], alloc: &[(u64, u64)], free: &[(u64, u64)]) -> Result<(), Error>;
    fn write(&mut self, start: u64, count: u64) -> Result<(), Error>;
    fn flush(&mut self) -> Result<(), Error>;
    fn dirty(&self, b: u64) -> bool;
    /// Written since the last flush, or allocated and never written.
    fn pending(&self, b: u64) -> bool;
    /// The first claimed block of `b` not yet durably initialised.
    fn taint(&self, b: u64) -> Option<u64>;
    fn claims(&self, b: u64) -> Option<Vec<Claim>>;
    fn parent(&self, b: u64) -> Option<Parent>;
    /// How many blocks claim `b`.
    fn claimants(&self, b: u64) -> u8;
    fn dirty_blocks(&self) -> Vec<u64>;
    /// Blocks with more than one claimant.
    fn shared_blocks(&self) -> Vec<u64>;
    fn evict(&mut self, b: u64) -> Result<(), Error>;
    fn cred(&self) -> Cred;
}

/// XN in this address space, acting as one principal with one set of
/// credentials.
pub struct Local<D: Disk> {
    pub xn: Xn<D, HostPages>,
    pub who: Principal,
    pub cred: Cred,
    /// What XN's mount found (conflicts to explain).
    pub report: MountReport,
}

impl<D: Disk> Local<D> {
    /// Mounts XN on `disk`.
    pub fn mount(disk: D, who: Principal, cred: Cred) -> Result<Local<D>, Error> {
        let (xn, report) = Xn::mount(disk, HostPages::new())?;
        Ok(Local { xn, who, cred, report })
    }

    pub fn into_disk(self) -> D {
        self.xn.into_parts().0
    }

    fn page_with(&mut self, data: &[u8; BLOCK]) -> xn::PageId {
        let p = self.xn.pages_mut().alloc(self.who);
        if let Some(b) = xn::Pages::bytes_mut(self.xn.pages_mut(), p) {
            *b = *data;
        }
        p
    }
}

impl<D: Disk> XnClient for Local<D> {
    fn nblocks(&self) -> u64 {
        self.xn.nblocks()
    }
    fn is_free(&self, b: u64) -> bool {
        self.xn.is_free(b)
    }
    fn template_id(&self, name: &str) -> Option<Tid> {
        self.xn.template_id(name)
    }
    fn install(&mut self, specs: &[TemplateSpec]) -> Result<Tid, Error> {
        self.xn.install(specs)
    }
    fn root(&self, name: &str) -> Option<(usize, Root)> {
        self.xn.root(name).map(|(i, r)| (i, r.clone()))
    }
    fn add_root(&mut self, name: &str, block: u64, tid: Tid, data: &[u8; BLOCK]) -> Result<usize, Error> {
        let p = self.page_with(data);
        let r = self.xn.add_root(self.who, name, block, tid, &[p], true);
        if r.is_err() {
            self.xn.pages_mut().free(p);
        }
        r
    }
    fn cached(&self, b: u64) -> bool {
        self.xn.entry(b).is_some()
    }
    fn registered(&self, b: u64) -> bool {
        self.cached(b)
    }
    fn read(&mut self, parent: Parent, start: u64, count: u64) -> Result<(), Error> {
        let pages: Vec<xn::PageId> = (0..count).map(|_| self.xn.pages_mut().alloc(self.who)).collect();
        let r = self.xn.read_insert(self.who, self.cred, parent, start, &pages);
        if r.is_err() {
            for p in pages {
                self.xn.pages_mut().free(p);
            }
        }
        r
    }
    fn fetch(&mut self, parent: Parent, start: u64, count: u64) -> Result<(), Error> {
        let mut b = start;
        while b < start + count {
            if self.cached(b) {
                self.bind_run(parent, b, 1, false)?;
                b += 1;
                continue;
            }
            let mut n = 1;
            while b + n < start + count && !self.cached(b + n) {
                n += 1;
            }
            self.read(parent, b, n)?;
            b += n;
        }
        Ok(())
    }
    fn copy(&mut self, parent: Parent, dst: u64, src: u64, count: u64) -> Result<(), Error> {
        self.xn.copy(self.who, self.cred, parent, dst, src, count)
    }
    fn insert_new(&mut self, parent: Parent, b: u64, data: &[u8; BLOCK]) -> Result<(), Error> {
        let p = self.page_with(data);
        let r = self.xn.insert_new(self.who, self.cred, parent, b, p);
        if r.is_err() {
            self.xn.pages_mut().free(p);
        }
        r
    }
    fn insert_zeroed(&mut self, parent: Parent, start: u64, count: u64) -> Result<(), Error> {
        (start..start + count).try_for_each(|b| self.insert_new(parent, b, &[0; BLOCK]))
    }
    fn bind_run(&mut self, parent: Parent, start: u64, count: u64, write: bool) -> Result<(), Error> {
        self.xn.bind_run(self.who, self.cred, parent, start, count, write)
    }
    fn block(&self, b: u64) -> Result<&[u8; BLOCK], Error> {
        self.xn.page(self.who, b)
    }
    fn block_mut(&mut self, b: u64) -> Result<&mut [u8; BLOCK], Error> {
        self.xn.page_mut(self.who, b)
    }
    fn modify(&mut self, changes: &[Change], alloc: &[(u64, u64)], free: &[(u64, u64)]) -> Result<(), Error> {
        for p in self.xn.modify(self.who, self.cred, changes, alloc, free)? {
            self.xn.pages_mut().free(p);
        }
        Ok(())
    }
    fn write(&mut self, start: u64, count: u64) -> Result<(), Error> {
        self.xn.write(self.who, start, count)
    }
    fn flush(&mut self) -> Result<(), Error> {
        self.xn.flush()
    }
    fn dirty(&self, b: u64) -> bool {
        self.xn.entry(b).is_some_and(|e| e.dirty)
    }
    fn pending(&self, b: u64) -> bool {
        self.xn.unstable(b) || self.xn.written(b)
    }
    fn taint(&self, b: u64) -> Option<u64> {
        self.xn.taint(b)
    }
    fn claims(&self, b: u64) -> Option<Vec<Claim>> {
        self.xn.claims(b).map(|c| c.to_vec())
    }
    fn parent(&self, b: u64) -> Option<Parent> {
        self.xn.parent(b)
    }
    fn claimants(&self, b: u64) -> u8 {
        self.xn.claimants(b)
    }
    fn dirty_blocks(&self) -> Vec<u64> {
        self.xn.registry().filter(|(_, e)| e.dirty).map(|(b, _)| b).collect()
    }
    fn shared_blocks(&self) -> Vec<u64> {
        self.xn.shared_blocks()
    }
    fn evict(&mut self, b: u64) -> Result<(), Error> {
        let p = self.xn.evict(self.who, b)?;
        self.xn.pages_mut().free(p);
        Ok(())
    }
    fn cred(&self) -> Cred {
        self.cred
    }
}
