//! XN: how the exokernel protects disk blocks without understanding any
//! file system (paper 000 §4.1-§4.4). Library file systems describe their
//! on-disk types with templates whose `owns`, `acl` and `size` functions
//! are downloaded eBPF; XN checks every metadata change by running `owns`
//! before and after it, keeps the buffer-cache registry, enforces the
//! ordering rules for writes, and rebuilds the free map at mount by
//! traversing from the root catalogue.
//!
//! Plain `no_std` Rust over a [`Disk`] and a [`Pages`] provider, so the
//! kernel (virtio-blk and frames) and the host (memory, crash simulator)
//! run the same code. See `docs/xn.md`.
#![no_std]

extern crate alloc;
#[cfg(test)]
extern crate std;

mod cache;
mod catalogue;
pub mod claims;
pub mod disk;
pub mod error;
pub mod layout;
mod modify;
mod mount;
pub mod pages;
pub mod udf;
mod write;

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::vec::Vec;

pub use claims::Claim;
pub use disk::{Disk, DiskError, MemDisk};
pub use error::{ClaimError, Error, TemplateError, Udf};
pub use layout::Root;
pub use modify::{Change, MAX_BLOCKS, MAX_CHANGES};
pub use mount::{Conflict, Limits, MountReport};
pub use pages::{HostPages, PageId, Pages};
pub use udf::{Template, TemplateSpec};

/// Bytes in a block (a page: cached blocks are bound to pages).
pub const BLOCK: usize = 4096;
/// Most blocks one `bind_run` binds (the kernel's calls take as many).
pub const MAX_RUN: u64 = 64;
/// Blocks of the type catalogue (after the superblock).
pub const CATALOGUE_BLOCKS: u64 = 16;
/// Blocks XN keeps for itself: the superblock and the catalogue.
pub const RESERVED: u64 = 1 + CATALOGUE_BLOCKS;

/// A template id: 1-based index in the catalogue (0: none).
pub type Tid = u16;
/// Who acts: an environment (0: nobody, a block no running process owns).
pub type Principal = u32;
pub const NOBODY: Principal = 0;

/// The credentials `acl` functions judge (C-FFS maps them to UNIX uids
/// and gids, paper 000 §4.5): a user, its group and its supplementary
/// groups (the first `ngroups` of `groups`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cred {
    pub uid: u32,
    pub gid: u32,
    ngroups: u32,
    groups: [u32; GROUPS],
}

/// The most supplementary groups a credential carries (Veneer's
/// identities hold as many: `abi::ident::NGROUPS`).
pub const GROUPS: usize = 32;

impl Cred {
    /// User `uid` of group `gid`, in no other group.
    pub const fn new(uid: u32, gid: u32) -> Cred {
        Cred { uid, gid, ngroups: 0, groups: [0; GROUPS] }
    }

    /// This credential in the supplementary groups `groups` as well (the
    /// first `GROUPS` of them).
    pub fn with_groups(mut self, groups: &[u32]) -> Cred {
        let n = groups.len().min(GROUPS);
        self.groups[..n].copy_from_slice(&groups[..n]);
        self.groups[n..].fill(0);
        self.ngroups = n as u32;
        self
    }

    /// Its supplementary groups.
    pub fn groups(&self) -> &[u32] {
        &self.groups[..self.ngroups as usize]
    }
}

/// Who controls a block: a root catalogue entry (by index) or a metadata
/// block that claims it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Parent {
    Root(usize),
    Block(u64),
}

/// What XN knows of each block (dense: four bytes per block).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Info {
    tid: Tid,
    /// Claims by the current (in-memory) metadata.
    mem: u8,
    /// Claims by metadata as it is, or may be, on disk.
    disk: u8,
    /// Allocated and never written: nothing on disk to read.
    uninit: bool,
}

/// A metadata block's claims.
#[derive(Clone, Debug)]
pub(crate) struct Meta {
    parent: Parent,
    /// What `owns` says of the block as it is in memory.
    mem: Vec<Claim>,
    /// Everything claimed by a version of the block that is, or may be,
    /// on disk (the durable one and any written since the last flush).
    disk: Vec<Claim>,
    /// Claims of the version written last (since the last flush).
    last: Option<Vec<Claim>>,
}

/// One registry entry: which page holds a cached block, and its state
/// (paper 000 §4.3.3). The registry is readable by everyone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    pub page: PageId,
    /// The principal that installed it (`NOBODY` once released).
    pub owner: Principal,
    pub tid: Tid,
    pub dirty: bool,
    pub locked_by: Option<Principal>,
}

/// Counters for tests and reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub udf_runs: u64,
    pub reads: u64,
    pub writes: u64,
    pub flushes: u64,
}

/// The XN state over one disk.
pub struct Xn<D: Disk, P: Pages> {
    disk: D,
    pages: P,
    sb: layout::Super,
    templates: Vec<Template>,
    catalogue: Vec<u8>,
    info: Vec<Info>,
    meta: BTreeMap<u64, Meta>,
    registry: BTreeMap<u64, Entry>,
    /// Pages the registry uses: one page caches one block.
    cached_pages: BTreeSet<PageId>,
    /// (block, principal) -> may write.
    bindings: BTreeMap<(u64, Principal), bool>,
    /// Allocated blocks not yet durably initialised (never written, or
    /// written since the last flush).
    unstable: BTreeSet<u64>,
    /// Blocks written since the last flush.
    written: BTreeSet<u64>,
    stats: Stats,
    /// Blocks whose state or registry entry changed since the last
    /// `take_touched`, when someone mirrors them (the kernel's exposed
    /// tables); `None`: nobody does.
    touched: Option<BTreeSet<u64>>,
}

impl<D: Disk, P: Pages> Xn<D, P> {
    pub fn disk(&self) -> &D {
        &self.disk
    }

    pub fn disk_mut(&mut self) -> &mut D {
        &mut self.disk
    }

    pub fn pages(&self) -> &P {
        &self.pages
    }

    pub fn pages_mut(&mut self) -> &mut P {
        &mut self.pages
    }

    pub fn into_parts(self) -> (D, P) {
        (self.disk, self.pages)
    }

    pub fn stats(&self) -> Stats {
        self.stats
    }

    pub fn nblocks(&self) -> u64 {
        self.sb.nblocks
    }

    /// True if `b` may be allocated (the free map, exposed read-only).
    pub fn is_free(&self, b: u64) -> bool {
        b >= RESERVED && self.info.get(b as usize).is_some_and(|i| i.mem == 0 && i.disk == 0)
    }

    /// The template a block is allocated as, if it is.
    pub fn allocated(&self, b: u64) -> Option<Tid> {
        self.info.get(b as usize).filter(|i| i.mem > 0).map(|i| i.tid)
    }

    /// How many metadata blocks (or roots) claim `b` now.
    pub fn claimants(&self, b: u64) -> u8 {
        self.info.get(b as usize).map_or(0, |i| i.mem)
    }

    /// Freed but still named on disk: waiting on the will-free list.
    pub fn will_free(&self, b: u64) -> bool {
        self.info.get(b as usize).is_some_and(|i| i.mem == 0 && i.disk > 0)
    }

    /// Allocated and not yet durably initialised.
    pub fn unstable(&self, b: u64) -> bool {
        self.unstable.contains(&b)
    }

    /// Written since the last flush (the disk may not have it yet).
    pub fn written(&self, b: u64) -> bool {
        self.written.contains(&b)
    }

    /// What `owns` says a cached or traversed metadata block claims now.
    pub fn claims(&self, b: u64) -> Option<&[Claim]> {
        self.meta.get(&b).map(|m| &m.mem[..])
    }

    /// The parent XN records for a metadata block.
    pub fn parent(&self, b: u64) -> Option<Parent> {
        self.meta.get(&b).map(|m| m.parent)
    }

    /// The registry entry of a cached block.
    pub fn entry(&self, b: u64) -> Option<&Entry> {
        self.registry.get(&b)
    }

    /// Every registry entry, by block.
    pub fn registry(&self) -> impl Iterator<Item = (u64, &Entry)> {
        self.registry.iter().map(|(b, e)| (*b, e))
    }

    pub fn roots(&self) -> &[Root] {
        &self.sb.roots
    }

    pub fn root(&self, name: &str) -> Option<(usize, &Root)> {
        self.sb.roots.iter().enumerate().find(|(_, r)| r.name == name)
    }

    pub fn template(&self, id: Tid) -> Option<&Template> {
        self.templates.get(usize::from(id).checked_sub(1)?)
    }

    /// The metadata templates whose functions still run interpreted, with
    /// their `owns`, `acl` and `size` (for `set_compiled`).
    pub fn uncompiled(&self) -> Vec<(Tid, [&bpf::VerifiedProgram; 3])> {
        self.templates
            .iter()
            .filter_map(|t| t.code.as_ref().filter(|c| c.jit.is_none()).map(|c| (t.id, c.programs())))
            .collect()
    }

    /// From now on template `tid`'s functions run as machine code.
    ///
    /// # Safety
    /// `code` is `bpf::compile` of the three programs `uncompiled` gives
    /// for `tid`, in that order, executable for as long as this `Xn` runs.
    pub unsafe fn set_compiled(&mut self, tid: Tid, code: udf::Compiled) {
        if let Some(c) =
            self.templates.get_mut(usize::from(tid).wrapping_sub(1)).and_then(|t| t.code.as_mut())
        {
            c.jit = Some(code);
        }
    }

    pub fn template_id(&self, name: &str) -> Option<Tid> {
        self.templates.iter().find(|t| t.name == name).map(|t| t.id)
    }

    /// Every allocated block with more than one claimant (none on a
    /// consistent disk once its file systems recovered).
    pub fn shared_blocks(&self) -> Vec<u64> {
        (0..self.info.len() as u64).filter(|&b| self.info[b as usize].mem > 1).collect()
    }

    /// Allocated blocks in total.
    pub fn allocated_count(&self) -> u64 {
        self.info.iter().filter(|i| i.mem > 0).count() as u64
    }

    /// May `who` hand XN this page to cache a block in? Its own, and not
    /// caching another block already (else a data binding to one block
    /// could write another's metadata).
    fn usable(&self, who: Principal, page: PageId) -> bool {
        self.pages.holds(who, page) && !self.cached_pages.contains(&page)
    }

    /// From now on, records which blocks change (`take_touched`).
    pub fn track_changes(&mut self) {
        self.touched.get_or_insert_with(BTreeSet::new);
    }

    /// The blocks whose state (`is_free`, `unstable`, `written`,
    /// `will_free`, `claimants`) or registry entry changed since the last
    /// call.
    pub fn take_touched(&mut self) -> BTreeSet<u64> {
        self.touched.as_mut().map(core::mem::take).unwrap_or_default()
    }

    pub(crate) fn touch(&mut self, b: u64) {
        if let Some(t) = self.touched.as_mut() {
            t.insert(b);
        }
    }

    /// Installs a registry entry.
    fn cache(&mut self, block: u64, entry: Entry) {
        self.touch(block);
        self.cached_pages.insert(entry.page);
        self.pages.taken(entry.page);
        self.registry.insert(block, entry);
    }

    fn tmpl(&self, id: Tid) -> Result<&Template, Error> {
        self.template(id).ok_or(Error::NoSuchTemplate(id))
    }

    fn in_range(&self, b: u64) -> Result<usize, Error> {
        if b < RESERVED || b >= self.sb.nblocks {
            return Err(Error::OutOfRange { block: b });
        }
        Ok(b as usize)
    }
}
