//! The crash-consistency simulator (issue 23 §4): run a workload on a
//! disk that records writes and flushes, then, for every crash state (all
//! writes before a flush, and any subset of those after it), mount
//! (XN's free-map rebuild, C-FFS's recovery) and check: no block claimed
//! twice, none leaked (C-FFS's own count of its blocks equals XN's
//! allocated blocks), `fsck` clean, untouched files intact, every file
//! and name an `fsync` or `sync` promised intact, every rename all or
//! nothing. Recovery's own writes are crashed too.

pub mod corrupt;
pub mod disk;
pub mod workload;

use alloc::collections::BTreeSet;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use crate::check::{blocks_in_use, fsck, snapshot};
use crate::client::Local;
use crate::fs::Fs;
use crate::sim::disk::{crashes, fingerprint, image, Crash, Event, RecDisk, Rng};
use crate::sim::workload::{base_image, random_ops, run, Base, Mark, Op, Run, Snapshot, BASES, OPS, ROOT};

/// How much to run.
#[derive(Clone, Debug)]
pub struct Config {
    pub bases: Vec<Base>,
    /// Every workload of up to this many operations (1 or 2; each then
    /// syncs).
    pub depth: usize,
    /// Random workloads of 3-6 operations after the exhaustive ones,
    /// until `min_states` crash states were checked.
    pub min_states: u64,
    /// Random subsets per epoch longer than `disk::EXHAUSTIVE` writes.
    pub samples: usize,
    pub seed: u64,
    /// Test only: C-FFS's rename writes in the wrong order.
    pub seeded_bug: bool,
    /// Stop at the first violation.
    pub stop_early: bool,
}

#[derive(Clone, Debug, Default)]
pub struct Stats {
    pub workloads: u64,
    /// Distinct crash states checked (recovery crashes included).
    pub states: u64,
    /// Of which, states of a crash during recovery.
    pub recovery_states: u64,
    pub violations: u64,
    /// The first violations, described.
    pub examples: Vec<String>,
}

fn ino(s: &Snapshot, p: &str) -> Option<u64> {
    s.get(p).map(|n| n.ino)
}

/// Mounts a crash image, recovers, checks; returns the recovery's log.
fn check(img: Vec<u8>, r: &Run, c: &Crash) -> Result<Vec<Event>, String> {
    let local =
        Local::mount(RecDisk::new(img), 1, ROOT).map_err(|e| format!("XN refused to mount: {e:?}"))?;
    let mut fs = Fs::mount(local).map_err(|e| format!("C-FFS refused to mount: {e:?}"))?;
    let report = fsck(&mut fs);
    if !report.clean() {
        return Err(format!("fsck: {}", report.problems.join("; ")));
    }
    let ours = blocks_in_use(&mut fs).map_err(|e| format!("walking the tree: {e:?}"))?;
    let xn_count = fs.xn.xn.allocated_count();
    if ours != xn_count {
        return Err(format!("C-FFS accounts for {ours} blocks, XN has {xn_count} allocated"));
    }
    let now = snapshot(&mut fs).map_err(|e| format!("reading the tree: {e:?}"))?;
    // A path is touched if an operation names it, or names another name
    // of the same file (a hard link), in any snapshot.
    let inos = |set: &[&str]| -> BTreeSet<u64> {
        r.snaps.iter().flat_map(|s| set.iter().filter_map(|p| s.get(*p).map(|n| n.ino))).collect()
    };
    let under = |p: &str, set: &[&str], inos: &BTreeSet<u64>| {
        set.iter().any(|t| p == *t || p.starts_with(&format!("{t}/")))
            || r.snaps.iter().chain([&now]).any(|s| s.get(p).is_some_and(|n| inos.contains(&n.ino)))
    };
    let touched = inos(&r.touched);
    for (p, node) in &r.snaps[0] {
        if !under(p, &r.touched, &touched) && now.get(p) != Some(node) {
            return Err(format!("{p}, untouched, changed or vanished"));
        }
    }
    for m in &r.marks {
        match m {
            Mark::Sync { flush, snap, later } if *flush < c.from => {
                let then = &r.snaps[*snap];
                let later_inos = inos(later);
                for p in then.keys().chain(now.keys()).filter(|p| !under(p, later, &later_inos)) {
                    if now.get(p) != then.get(p) {
                        return Err(format!("{p} differs from what the sync at event {flush} made durable"));
                    }
                }
            }
            Mark::Fsync { flush, snap, path }
                if *flush < c.from && now.get(*path) != r.snaps[*snap].get(*path) =>
            {
                return Err(format!("{path} differs from what its fsync at event {flush} made durable"));
            }
            _ => {}
        }
    }
    for rn in &r.renames {
        let seen = (ino(&now, rn.from), ino(&now, rn.to));
        if !r.snaps[rn.before..].iter().any(|s| (ino(s, rn.from), ino(s, rn.to)) == seen) {
            return Err(format!("rename {} -> {} half done: {seen:?}", rn.from, rn.to));
        }
    }
    Ok(core::mem::take(&mut fs.xn.xn.disk_mut().log))
}

impl Stats {
    fn violation(&mut self, what: String) {
        self.violations += 1;
        if self.examples.len() < 10 {
            self.examples.push(what);
        }
    }
}

/// Checks every crash state of one workload (and of the recovery from
/// each state whose recovery writes).
fn workload(base: &[u8], name: &str, ops: &[Op], cfg: &Config, rng: &mut Rng, st: &mut Stats) {
    st.workloads += 1;
    let r = match run(base, ops, cfg.seeded_bug) {
        Ok(r) => r,
        Err(e) => return st.violation(format!("{name} {ops:?}: the workload itself failed: {e:?}")),
    };
    let mut seen = BTreeSet::new();
    for c in crashes(&r.log, cfg.samples, rng) {
        if !seen.insert(fingerprint(&r.log, &c)) {
            continue;
        }
        st.states += 1;
        let img = image(base, &r.log, &c);
        let rec = match check(img.clone(), &r, &c) {
            Ok(rec) => rec,
            Err(e) => {
                st.violation(format!("{name} {ops:?} epoch {} kept {:?}: {e}", c.epoch, c.kept));
                continue;
            }
        };
        if rec.iter().any(|e| matches!(e, Event::Write(..))) {
            for c2 in crashes(&rec, cfg.samples, rng) {
                st.states += 1;
                st.recovery_states += 1;
                if let Err(e) = check(image(&img, &rec, &c2), &r, &c) {
                    st.violation(format!(
                        "{name} {ops:?} epoch {} kept {:?}, crash in recovery: {e}",
                        c.epoch, c.kept
                    ));
                }
            }
        }
        if cfg.stop_early && st.violations > 0 {
            return;
        }
    }
}

/// Runs the campaign; `progress` sees the figures after each workload.
pub fn campaign(cfg: &Config, mut progress: impl FnMut(&Stats)) -> Stats {
    let mut st = Stats::default();
    let mut rng = Rng(cfg.seed | 1);
    let mut images = Vec::new();
    for &b in &cfg.bases {
        match base_image(b) {
            Ok(img) => images.push((format!("{b:?}"), img)),
            Err(e) => st.violation(format!("{b:?}: making the base image failed: {e:?}")),
        }
    }
    if cfg.depth > 0 {
        for (name, img) in &images {
            for &a in &OPS {
                workload(img, name, &[a], cfg, &mut rng, &mut st);
                progress(&st);
                for &b in OPS.iter().filter(|_| cfg.depth > 1) {
                    workload(img, name, &[a, b], cfg, &mut rng, &mut st);
                    progress(&st);
                    if cfg.stop_early && st.violations > 0 {
                        return st;
                    }
                }
            }
        }
    }
    while st.states < cfg.min_states && !images.is_empty() {
        let (name, img) = &images[rng.below(images.len() as u64) as usize];
        let n = 3 + rng.below(4) as usize;
        let ops = random_ops(&mut rng, n);
        workload(img, name, &ops, cfg, &mut rng, &mut st);
        progress(&st);
        if cfg.stop_early && st.violations > 0 {
            break;
        }
    }
    st
}

/// The default campaign over every base.
pub fn full(min_states: u64, seed: u64) -> Config {
    Config {
        bases: BASES.to_vec(),
        depth: 2,
        min_states,
        samples: 64,
        seed,
        seeded_bug: false,
        stop_early: false,
    }
}
