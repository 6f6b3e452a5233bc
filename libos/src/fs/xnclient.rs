//! C-FFS's view of XN (`cffs::XnClient`) over the kernel's XN system calls
//! (`user::xn`, `docs/xn.md`): the library file system in this address
//! space, the protection in the kernel. Cached blocks are mapped at
//! `XN_WINDOW + block * 4096` (read-only, or writable for a data block
//! bound for writing); what XN exposes (the registry, block states) is
//! read without a call. A block another process already cached is bound,
//! not read again: one copy for everyone.

use abi::syscall::{ENV_SELF, FRAME_ANY};
use abi::xn::{self as x, reg, state};
use abi::Error;
use alloc::collections::{BTreeMap, BTreeSet};
use alloc::string::String;
use alloc::vec::Vec;
use cffs::XnClient;
use user::{sys, xn as k};
use xn::{Change, Claim, Cred, DiskError, Parent, Root, TemplateSpec, Tid};

use crate::layout::{SCRATCH, XN_WINDOW};

const BLOCK: usize = 4096;

/// XN through system calls, acting with one credential.
pub struct SysXn {
    info: x::Info,
    /// The credential calls act with: a capability slot, or `XN_SELF`.
    slot: u64,
    /// Blocks mapped in the window here: writable or not.
    mapped: BTreeMap<u64, bool>,
    /// Data blocks stored to through a writable mapping and not written
    /// back since (the kernel does not see stores).
    stored: BTreeSet<u64>,
    /// Changes that freed blocks (`unmap_gone`).
    frees: u64,
}

/// Every how many freeing changes all stale mappings are dropped.
const SWEEP: u64 = 256;

/// The kernel's refusal as XN's (block numbers are not carried back).
pub fn from_abi(e: Error) -> xn::Error {
    use xn::Error as X;
    match e {
        Error::NotClaimed => X::NotClaimed { block: 0, parent: 0 },
        Error::Denied => X::Denied { block: 0 },
        Error::NotFree => X::NotFree { block: 0 },
        Error::Undeclared => X::Undeclared { block: 0 },
        Error::ReadOnly => X::MetadataNotWritable { block: 0 },
        Error::Tainted => X::Tainted { block: 0, child: 0 },
        Error::Locked => X::Locked { block: 0 },
        Error::NotCached => X::NotCached { block: 0 },
        Error::AlreadyCached => X::AlreadyCached { block: 0 },
        Error::NotFresh => X::NotFresh { block: 0 },
        Error::BadMove => X::Cycle { block: 0 },
        Error::BadName => X::NoSuchRoot,
        Error::BadBlock => X::OutOfRange { block: 0 },
        Error::NotPermitted => X::NotBound { block: 0 },
        Error::BadLength => X::BadChange { block: 0 },
        Error::BadState => X::Busy { block: 0 },
        Error::BadTemplate => X::BadTemplate { index: 0, why: xn::TemplateError::BadGroup },
        _ => X::Disk(DiskError::Io),
    }
}

fn window(b: u64) -> u64 {
    XN_WINDOW + b * BLOCK as u64
}

fn parent_arg(p: Parent) -> u64 {
    match p {
        Parent::Root(i) => x::ROOT | i as u64,
        Parent::Block(b) => b,
    }
}

/// A fresh frame of this process's holding `data`, mapped nowhere.
fn frame_with(data: &[u8; BLOCK]) -> Result<u64, xn::Error> {
    let f = sys::frame_alloc(ENV_SELF, FRAME_ANY).map_err(from_abi)?;
    let copied = sys::map(ENV_SELF, SCRATCH, f, abi::syscall::map::WRITE).map(|_| {
        // SAFETY: just mapped writable at SCRATCH, ours alone.
        unsafe { core::ptr::copy_nonoverlapping(data.as_ptr(), SCRATCH as *mut u8, BLOCK) };
        let _ = sys::unmap(ENV_SELF, SCRATCH);
    });
    if let Err(e) = copied {
        let _ = sys::frame_free(f);
        return Err(from_abi(e));
    }
    Ok(f)
}

fn free_frames(frames: &[u64]) {
    for &f in frames {
        let _ = sys::frame_free(f);
    }
}

impl SysXn {
    /// XN as the kernel has it mounted, acting with credential `slot` (a
    /// capability slot, or `XN_SELF`).
    pub fn open(slot: u64) -> Result<SysXn, Error> {
        let info = k::info()?;
        if info.nblocks == 0 {
            return Err(Error::NoDevice);
        }
        Ok(SysXn { info, slot, mapped: BTreeMap::new(), stored: BTreeSet::new(), frees: 0 })
    }

    /// From now on, calls act with credential `slot` (the first process,
    /// done mounting with the device capability, acts as itself).
    pub fn act_with(&mut self, slot: u64) {
        self.slot = slot;
    }

    fn entry(&self, b: u64) -> Option<x::RegEntry> {
        k::entry(b, self.info.registry_slots)
    }

    fn state(&self, b: u64) -> u8 {
        k::state(b, self.info.nblocks)
    }

    /// Whether block `b` is mapped here in the frame the registry caches
    /// it in. A mapping goes stale when the block leaves the cache (freed
    /// by a change, this process's or another's, or evicted) and its frame
    /// stays only for this view: a block allocated again later is cached
    /// in another frame, which this process must bind before using.
    fn live(&self, b: u64) -> bool {
        self.mapped.contains_key(&b) && self.current(b)
    }

    /// Whether block `b`, mapped here, is mapped in the frame the
    /// registry caches it in.
    fn current(&self, b: u64) -> bool {
        // SAFETY: mapped here (read through the self-map).
        let pte = unsafe { core::ptr::read_volatile(abi::layout::pte_va(window(b), 0) as *const u64) };
        self.entry(b).is_some_and(|e| e.frame == abi::pte::frame_of(pte))
    }

    /// Maps cached block `b` here (writable: a data block bound for
    /// writing), through the kernel's access check.
    fn map(&mut self, parent: Parent, b: u64, write: bool) -> Result<(), xn::Error> {
        self.map_run(parent, b, 1, write)
    }

    /// Maps the cached blocks `start..start + count` here, one call
    /// (`xn_bind_run`) for each run of them not mapped here yet as asked:
    /// a process reading a file another wrote had made one a block.
    fn map_run(&mut self, parent: Parent, start: u64, count: u64, write: bool) -> Result<(), xn::Error> {
        let ready = |s: &SysXn, b: u64| matches!(s.mapped.get(&b), Some(&w) if (w || !write) && s.current(b));
        let end = start + count;
        let mut b = start;
        while b < end {
            if ready(self, b) {
                b += 1;
                continue;
            }
            let mut n = 0;
            while b + n < end && n < x::MAX_RUN && !ready(self, b + n) {
                if self.mapped.remove(&(b + n)).is_some() {
                    sys::unmap(ENV_SELF, window(b + n)).map_err(from_abi)?;
                }
                n += 1;
            }
            k::bind_run(parent_arg(parent), b, n, window(b), write, self.slot).map_err(from_abi)?;
            for i in b..b + n {
                self.mapped.insert(i, write);
            }
            b += n;
        }
        Ok(())
    }

    /// Reads `count` blocks from `start` into the cache, with one request
    /// per run no one cached yet (which binds them to this process), and
    /// binds and maps those someone did; with `mapped`, every block is
    /// mapped here for reading (else only XN's calls use them: `copy`).
    fn cache(&mut self, parent: Parent, start: u64, count: u64, mapped: bool) -> Result<(), xn::Error> {
        let mut b = start;
        while b < start + count {
            if self.entry(b).is_some() {
                // Someone cached them already: bind, do not read again.
                let mut n = 1;
                while b + n < start + count && n < x::MAX_RUN && self.entry(b + n).is_some() {
                    n += 1;
                }
                self.map_run(parent, b, n, false)?;
                b += n;
                continue;
            }
            let mut n = 1;
            while b + n < start + count && n < x::MAX_RUN && self.entry(b + n).is_none() {
                n += 1;
            }
            let mut frames = Vec::with_capacity(n as usize);
            for _ in 0..n {
                match sys::frame_alloc(ENV_SELF, FRAME_ANY) {
                    Ok(f) => frames.push(f),
                    Err(e) => {
                        free_frames(&frames);
                        return Err(from_abi(e));
                    }
                }
            }
            if let Err(e) = k::read(parent_arg(parent), b, &frames, self.slot) {
                free_frames(&frames);
                return Err(from_abi(e));
            }
            if mapped {
                self.map_run(parent, b, n, false)?;
            }
            b += n;
        }
        Ok(())
    }

    /// Tells XN which data blocks this process stored into since it last
    /// said (`xn_dirty`): they become dirty in the registry, so whoever
    /// writes back next (a `sync`, the periodic write-back, after this
    /// process has gone too) finds them. One call per run of blocks.
    pub fn publish(&mut self) -> Result<(), xn::Error> {
        // A block freed since (with a subtree XN freed) is no one's to mark.
        let blocks: Vec<u64> = self
            .stored
            .iter()
            .copied()
            .filter(|&b| self.mapped.get(&b) == Some(&true) && self.live(b))
            .collect();
        self.stored.clear();
        let mut i = 0;
        while i < blocks.len() {
            let mut n = 1;
            while i + n < blocks.len() && blocks[i + n] == blocks[i] + n as u64 && (n as u64) < x::MAX_RUN {
                n += 1;
            }
            if let Err(e) = k::dirty(blocks[i], n as u64) {
                // Told again at the next publish.
                self.stored.extend(&blocks[i..]);
                return Err(from_abi(e));
            }
            i += n;
        }
        Ok(())
    }

    /// Forgets the mappings of blocks no longer cached in the frame they
    /// were: those in `freed` (the extents a change declared freed) at
    /// once, and every stale one (XN frees whole subtrees: an extent
    /// block's data goes with it) every `SWEEP` changes that free, so the
    /// cost of a free does not grow with what this process has mapped (an
    /// `rm -rf` of thousands of files looked at every mapping each time).
    fn unmap_gone(&mut self, freed: &[(u64, u64)]) {
        self.frees += 1;
        let gone: Vec<u64> = if self.frees.is_multiple_of(SWEEP) {
            self.mapped.keys().copied().filter(|&b| !self.live(b)).collect()
        } else {
            freed
                .iter()
                .flat_map(|&(start, n)| self.mapped.range(start..start.saturating_add(n)).map(|(&b, _)| b))
                .filter(|&b| !self.live(b))
                .collect()
        };
        for b in gone {
            let _ = sys::unmap(ENV_SELF, window(b));
            self.mapped.remove(&b);
            self.stored.remove(&b);
        }
    }
}

impl XnClient for SysXn {
    fn nblocks(&self) -> u64 {
        self.info.nblocks
    }
    fn is_free(&self, b: u64) -> bool {
        self.state(b) & state::FREE != 0
    }
    fn template_id(&self, name: &str) -> Option<Tid> {
        k::template(name).ok().and_then(|t| Tid::try_from(t).ok())
    }
    fn install(&mut self, specs: &[TemplateSpec]) -> Result<Tid, xn::Error> {
        // The ABI takes each function as its instructions' bytes.
        let bytes = |v: &Vec<bpf::Insn>| v.iter().map(|i| i.to_bytes()).collect::<Vec<[u8; 8]>>();
        let code: Vec<[Vec<[u8; 8]>; 3]> =
            specs.iter().map(|s| [bytes(&s.owns), bytes(&s.acl), bytes(&s.size)]).collect();
        let raw: Vec<x::TemplateSpec> = specs
            .iter()
            .zip(&code)
            .map(|(s, [owns, acl, size])| x::TemplateSpec::new(s.name.as_bytes(), s.slots, owns, acl, size))
            .collect();
        k::install(&raw, self.slot).map(|t| t as Tid).map_err(from_abi)
    }
    fn root(&self, name: &str) -> Option<(usize, Root)> {
        let (i, r) = k::root_find(name).ok()?;
        let tid = Tid::try_from(r.tid).ok()?;
        Some((
            i as usize,
            Root {
                name: String::from(name),
                start: r.start,
                count: r.count,
                tid,
                persistent: r.persistent != 0,
            },
        ))
    }
    fn add_root(&mut self, name: &str, block: u64, tid: Tid, data: &[u8; BLOCK]) -> Result<usize, xn::Error> {
        let f = frame_with(data)?;
        let mut req = x::RootAdd {
            tid: tid.into(),
            start: block,
            count: 1,
            frames: &f as *const u64 as u64,
            persistent: 1,
            ..Default::default()
        };
        let n = name.len().min(32);
        req.name[..n].copy_from_slice(&name.as_bytes()[..n]);
        req.name_len = name.len() as u32;
        match k::root_add(&req, self.slot) {
            Ok(i) => {
                self.map(Parent::Root(i as usize), block, false)?;
                Ok(i as usize)
            }
            Err(e) => {
                let _ = sys::frame_free(f);
                Err(from_abi(e))
            }
        }
    }
    fn cached(&self, b: u64) -> bool {
        self.live(b)
    }
    fn registered(&self, b: u64) -> bool {
        self.entry(b).is_some()
    }
    fn read(&mut self, parent: Parent, start: u64, count: u64) -> Result<(), xn::Error> {
        self.cache(parent, start, count, true)
    }
    fn fetch(&mut self, parent: Parent, start: u64, count: u64) -> Result<(), xn::Error> {
        self.cache(parent, start, count, false)
    }
    fn copy(&mut self, parent: Parent, dst: u64, src: u64, count: u64) -> Result<(), xn::Error> {
        for i in (0..count).step_by(x::MAX_RUN as usize) {
            let n = (count - i).min(x::MAX_RUN);
            k::copy(parent_arg(parent), dst + i, src + i, n, self.slot).map_err(from_abi)?;
        }
        Ok(())
    }
    fn insert_new(&mut self, parent: Parent, b: u64, data: &[u8; BLOCK]) -> Result<(), xn::Error> {
        let f = frame_with(data)?;
        if let Err(e) = k::insert(parent_arg(parent), b, f, self.slot) {
            let _ = sys::frame_free(f);
            return Err(from_abi(e));
        }
        let data_block = self.entry(b).is_some_and(|e| e.flags & reg::METADATA == 0);
        self.map(parent, b, data_block)
    }
    fn insert_zeroed(&mut self, parent: Parent, start: u64, count: u64) -> Result<(), xn::Error> {
        for b in start..start + count {
            // The kernel clears a frame it hands out: nothing to copy.
            let f = sys::frame_alloc(ENV_SELF, FRAME_ANY).map_err(from_abi)?;
            if let Err(e) = k::insert(parent_arg(parent), b, f, self.slot) {
                let _ = sys::frame_free(f);
                return Err(from_abi(e));
            }
        }
        // Mapped as one run (a call a block was most of a new file's cost).
        let data = self.entry(start).is_some_and(|e| e.flags & reg::METADATA == 0);
        self.map_run(parent, start, count, data)
    }
    fn bind_run(&mut self, parent: Parent, start: u64, count: u64, write: bool) -> Result<(), xn::Error> {
        self.map_run(parent, start, count, write)
    }
    fn block(&self, b: u64) -> Result<&[u8; BLOCK], xn::Error> {
        if !self.live(b) {
            return Err(xn::Error::NotBound { block: b });
        }
        // SAFETY: block `b`'s cache page is mapped at its window address
        // for as long as it is in `mapped`.
        Ok(unsafe { &*(window(b) as *const [u8; BLOCK]) })
    }
    fn block_mut(&mut self, b: u64) -> Result<&mut [u8; BLOCK], xn::Error> {
        if self.mapped.get(&b) != Some(&true) || !self.live(b) {
            return Err(xn::Error::NotBound { block: b });
        }
        self.stored.insert(b);
        // SAFETY: mapped writable at its window address (a data block this
        // process bound for writing).
        Ok(unsafe { &mut *(window(b) as *mut [u8; BLOCK]) })
    }
    fn modify(
        &mut self,
        changes: &[Change],
        alloc: &[(u64, u64)],
        free: &[(u64, u64)],
    ) -> Result<(), xn::Error> {
        let raw: Vec<x::Change> = changes
            .iter()
            .map(|c| x::Change {
                block: c.block,
                off: c.off as u32,
                len: c.bytes.len() as u32,
                bytes: c.bytes.as_ptr() as u64,
            })
            .collect();
        let ext =
            |v: &[(u64, u64)]| v.iter().map(|&(start, count)| x::Extent { start, count }).collect::<Vec<_>>();
        k::modify(&raw, &ext(alloc), &ext(free), self.slot).map_err(from_abi)?;
        if !free.is_empty() {
            self.unmap_gone(free);
        }
        Ok(())
    }
    fn write(&mut self, start: u64, count: u64) -> Result<(), xn::Error> {
        // The kernel takes at most `MAX_RUN` blocks a call (C-FFS asks for
        // a file's whole run: a 1 MiB file is 256).
        let mut b = start;
        while b < start + count {
            let n = (start + count - b).min(x::MAX_RUN);
            k::write(b, n).map_err(from_abi)?;
            b += n;
        }
        for b in start..start + count {
            self.stored.remove(&b);
        }
        Ok(())
    }
    fn flush(&mut self) -> Result<(), xn::Error> {
        k::flush().map(|_| ()).map_err(from_abi)
    }
    fn dirty(&self, b: u64) -> bool {
        self.stored.contains(&b) || self.entry(b).is_some_and(|e| e.flags & reg::DIRTY != 0)
    }
    fn pending(&self, b: u64) -> bool {
        self.state(b) & (state::UNSTABLE | state::WRITTEN) != 0
    }
    fn taint(&self, b: u64) -> Option<u64> {
        let claims = self.claims(b)?;
        claims.iter().find_map(|c| (c.start..c.end()).find(|&y| self.state(y) & state::UNSTABLE != 0))
    }
    fn claims(&self, b: u64) -> Option<Vec<Claim>> {
        // Most blocks claim a few runs (a data block none): a larger
        // first buffer, cleared at every call, cost more than asking twice.
        let mut out = alloc::vec![x::Claim::default(); 16];
        let n = k::claims(b, &mut out).ok()? as usize;
        if n > out.len() {
            out.resize(n, x::Claim::default());
            k::claims(b, &mut out).ok()?;
        }
        out.truncate(n);
        Some(
            out.iter()
                .map(|c| Claim { start: c.start, count: c.count, tid: c.tid as Tid, slot: c.slot })
                .collect(),
        )
    }
    fn parent(&self, b: u64) -> Option<Parent> {
        let p = k::parent(b).ok()?;
        Some(if p & x::ROOT != 0 { Parent::Root((p & !x::ROOT) as usize) } else { Parent::Block(p) })
    }
    fn claimants(&self, b: u64) -> u8 {
        self.state(b) >> state::CLAIMANTS_SHIFT
    }
    fn dirty_blocks(&self) -> Vec<u64> {
        let mut v: BTreeSet<u64> = self.stored.clone();
        v.extend(k::entries(self.info.registry_slots).filter(|e| e.flags & reg::DIRTY != 0).map(|e| e.block));
        v.into_iter().collect()
    }
    fn shared_blocks(&self) -> Vec<u64> {
        (0..self.info.nblocks).filter(|&b| self.claimants(b) > 1).collect()
    }
    fn evict(&mut self, b: u64) -> Result<(), xn::Error> {
        if self.dirty(b) {
            return Err(xn::Error::Busy { block: b });
        }
        let frame = self.entry(b).map(|e| e.frame);
        if self.mapped.remove(&b).is_some() {
            let _ = sys::unmap(ENV_SELF, window(b));
        }
        k::evict(b).map_err(from_abi)?;
        if let Some(f) = frame {
            let _ = sys::frame_free(f);
        }
        Ok(())
    }
    /// What C-FFS gives new files and judges: this process's effective
    /// ids and supplementary groups (the kernel's, read now: a setuid
    /// program's are its own), which are also what XN judges `XN_SELF` by.
    fn cred(&self) -> Cred {
        let id = super::perm::me();
        Cred::new(id.uid[abi::ident::EFFECTIVE], id.gid[abi::ident::EFFECTIVE]).with_groups(id.groups())
    }
}
