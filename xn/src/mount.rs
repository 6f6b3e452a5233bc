//! Formatting a disk for XN, and mounting it: the superblock and the type
//! catalogue are read and checked (every template's functions verified
//! again), then the free map is rebuilt by traversing every block
//! reachable from the root catalogue with the `owns` functions (paper 000
//! §4.4: "reachable blocks are allocated, non-reachable blocks are not").
//! The traversal visits each block once (so a cycle is a second claim,
//! reported, not followed) and is bounded in steps.

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::vec;
use alloc::vec::Vec;

use crate::layout::{decode_catalogue, Super, CATALOGUE_BYTES};
use crate::{Disk, Error, Info, Meta, Pages, Parent, Stats, Tid, Xn, BLOCK, RESERVED};

/// A block claimed by more than one metadata block (or root): after a
/// crash in the middle of a move (the library repairs it from its own
/// records), or a damaged disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Conflict {
    pub block: u64,
    pub tid: Tid,
    /// The later claimant (the first keeps the block as its child).
    pub claimant: Parent,
    /// The block is an ancestor of its claimant: the structure loops.
    pub cycle: bool,
}

/// What a mount found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MountReport {
    pub conflicts: Vec<Conflict>,
    /// Conflicts beyond those listed.
    pub more_conflicts: u64,
    pub metadata_blocks: u64,
    pub allocated_blocks: u64,
    /// UDF runs and blocks claimed: the rebuild's work.
    pub steps: u64,
}

/// Bounds on a mount's work.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Most steps (UDF runs plus claimed blocks) the rebuild may take.
    pub max_steps: u64,
    /// Most conflicts listed one by one.
    pub max_conflicts: usize,
}

impl Limits {
    /// Linear in the disk's size: a consistent disk needs about one step
    /// per block plus two per used slot.
    pub fn for_disk(nblocks: u64) -> Limits {
        Limits { max_steps: 16 * nblocks + (1 << 22), max_conflicts: 256 }
    }
}

impl<D: Disk, P: Pages> Xn<D, P> {
    /// Writes an empty XN (no templates, no roots) on `disk`.
    pub fn format(disk: &mut D) -> Result<(), Error> {
        let nblocks = disk.blocks();
        if nblocks <= RESERVED + 1 {
            return Err(Error::DiskTooSmall);
        }
        let sb = Super { nblocks, ntemplates: 0, catalogue_bytes: 0, roots: Vec::new() };
        disk.write(0, &sb.encode())?;
        disk.flush()?;
        Ok(())
    }

    /// Mounts the disk with the default limits.
    pub fn mount(disk: D, pages: P) -> Result<(Xn<D, P>, MountReport), Error> {
        let limits = Limits::for_disk(disk.blocks());
        Xn::mount_with(disk, pages, limits)
    }

    pub fn mount_with(mut disk: D, pages: P, limits: Limits) -> Result<(Xn<D, P>, MountReport), Error> {
        let disk_blocks = disk.blocks();
        if disk_blocks <= RESERVED + 1 {
            return Err(Error::DiskTooSmall);
        }
        let mut b0 = [0u8; BLOCK];
        disk.read(0, &mut b0)?;
        let sb = Super::decode(&b0, disk_blocks)?;
        let mut catalogue = vec![0u8; CATALOGUE_BYTES];
        disk.read(1, &mut catalogue)?;
        catalogue.truncate(sb.catalogue_bytes as usize);
        let templates = decode_catalogue(&catalogue, sb.ntemplates)?;
        let mut xn = Xn {
            info: vec![Info::default(); sb.nblocks as usize],
            disk,
            pages,
            sb,
            templates,
            catalogue,
            meta: BTreeMap::new(),
            registry: BTreeMap::new(),
            cached_pages: BTreeSet::new(),
            bindings: BTreeMap::new(),
            unstable: BTreeSet::new(),
            written: BTreeSet::new(),
            touched: None,
            stats: Stats { reads: 2, ..Stats::default() },
        };
        let report = xn.rebuild(limits)?;
        Ok((xn, report))
    }

    fn rebuild(&mut self, limits: Limits) -> Result<MountReport, Error> {
        let mut report = MountReport::default();
        let mut todo: Vec<(u64, Parent)> = Vec::new();
        for i in 0..self.sb.roots.len() {
            let r = &self.sb.roots[i];
            let (start, end, tid) = (r.start, r.start + r.count, r.tid);
            for b in start..end {
                self.claim(b, tid, Parent::Root(i), &mut todo, &mut report, limits)?;
            }
        }
        let mut buf = [0u8; BLOCK];
        while let Some((b, parent)) = todo.pop() {
            self.disk.read(b, &mut buf)?;
            self.stats.reads += 1;
            report.metadata_blocks += 1;
            let t = self.tmpl(self.info[b as usize].tid)?;
            let (claims, runs) = t.claims(b, &buf, self.sb.nblocks)?;
            self.stats.udf_runs += runs;
            report.steps += runs;
            self.meta.insert(b, Meta { parent, mem: Vec::new(), disk: Vec::new(), last: None });
            for c in &claims {
                for x in c.start..c.end() {
                    self.claim(x, c.tid, Parent::Block(b), &mut todo, &mut report, limits)?;
                }
            }
            if let Some(m) = self.meta.get_mut(&b) {
                m.disk = claims.clone();
                m.mem = claims;
            }
        }
        report.allocated_blocks = self.allocated_count();
        Ok(report)
    }

    /// Records one claim of block `b` found by the traversal.
    fn claim(
        &mut self,
        b: u64,
        tid: Tid,
        by: Parent,
        todo: &mut Vec<(u64, Parent)>,
        report: &mut MountReport,
        limits: Limits,
    ) -> Result<(), Error> {
        report.steps += 1;
        if report.steps > limits.max_steps {
            return Err(Error::RebuildTooLong { steps: report.steps });
        }
        let metadata = self.tmpl(tid)?.is_metadata();
        let i = &mut self.info[b as usize];
        if i.mem == 0 {
            *i = Info { tid, mem: 1, disk: 1, uninit: false };
            if metadata {
                todo.push((b, by));
            }
            return Ok(());
        }
        i.mem = i.mem.saturating_add(1);
        i.disk = i.disk.saturating_add(1);
        if report.conflicts.len() < limits.max_conflicts {
            let cycle = self.is_ancestor(b, by);
            report.conflicts.push(Conflict { block: b, tid, claimant: by, cycle });
        } else {
            report.more_conflicts += 1;
        }
        Ok(())
    }

    /// True if `b` is `p` or above it in the recorded parent chain (a walk
    /// bounded by the number of metadata blocks).
    pub(crate) fn is_ancestor(&self, b: u64, mut p: Parent) -> bool {
        for _ in 0..=self.meta.len() {
            match p {
                Parent::Root(_) => return false,
                Parent::Block(x) if x == b => return true,
                Parent::Block(x) => match self.meta.get(&x) {
                    Some(m) => p = m.parent,
                    None => return false,
                },
            }
        }
        true
    }
}
