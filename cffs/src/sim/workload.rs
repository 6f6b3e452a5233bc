//! The workloads the crash simulator runs: base images (fresh, aged, and
//! fresh with embedding off) and the operations of issue 23 §4, each
//! applied to fixed paths of the base.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;

use xn::{Cred, HostPages, MemDisk, Xn};

use crate::check::{snapshot, Node};
use crate::client::Local;
use crate::fs::{Fs, Options, ROOT_INO};
use crate::sim::disk::{RecDisk, Rng};
use crate::{Errno, Result};

pub const ROOT: Cred = Cred::new(0, 0);
/// Blocks in a simulated disk (1 MiB).
pub const BLOCKS: u64 = 256;

/// The starting images.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Base {
    Fresh,
    Aged,
    NoEmbed,
}

pub const BASES: [Base; 3] = [Base::Fresh, Base::Aged, Base::NoEmbed];

/// The operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Create,
    WriteNew,
    Overwrite,
    Append,
    Truncate,
    Link,
    Unlink,
    RenameSame,
    RenameCross,
    RenameReplace,
    Mkdir,
    Rmdir,
    Symlink,
    /// fsync of the file the previous operation touched.
    Fsync,
    Sync,
}

pub const OPS: [Op; 15] = [
    Op::Create,
    Op::WriteNew,
    Op::Overwrite,
    Op::Append,
    Op::Truncate,
    Op::Link,
    Op::Unlink,
    Op::RenameSame,
    Op::RenameCross,
    Op::RenameReplace,
    Op::Mkdir,
    Op::Rmdir,
    Op::Symlink,
    Op::Fsync,
    Op::Sync,
];

pub type Snapshot = BTreeMap<String, Node>;
pub type SimFs = Fs<Local<RecDisk>>;

fn pattern(seed: u32, len: usize) -> Vec<u8> {
    (0..len as u32).map(|i| (i.wrapping_mul(31).wrapping_add(seed * 7) % 251) as u8).collect()
}

fn mount_rec(img: Vec<u8>) -> Result<SimFs> {
    let local = Local::mount(RecDisk::new(img), 1, ROOT)?;
    Fs::mount(local)
}

/// The base image: synced, everything durable.
pub fn base_image(base: Base) -> Result<Vec<u8>> {
    let mut disk = MemDisk::new(BLOCKS);
    Xn::<MemDisk, HostPages>::format(&mut disk)?;
    let local = Local::mount(disk, 1, ROOT)?;
    let opts =
        if base == Base::NoEmbed { Options { embed: false, group: false } } else { Options::default() };
    let mut fs = Fs::mkfs(local, opts, 1_000)?;
    let a = fs.mkdir(ROOT_INO, b"a", 0o755)?;
    let b = fs.mkdir(ROOT_INO, b"b", 0o755)?;
    fs.mkdir(a, b"sub", 0o755)?;
    let f1 = fs.create(a, b"f1", 0o644)?;
    fs.write(f1, 0, &pattern(1, 3000))?;
    let f2 = fs.create(a, b"f2", 0o644)?;
    fs.write(f2, 0, &pattern(2, 20_000))?;
    let g = fs.create(b, b"g", 0o644)?;
    fs.write(g, 0, &pattern(3, 5000))?;
    if base == Base::Aged {
        let old = fs.mkdir(ROOT_INO, b"old", 0o755)?;
        for i in 0..24u32 {
            let f = fs.create(old, alloc::format!("x{i}").as_bytes(), 0o644)?;
            fs.write(f, 0, &pattern(i, 500 + 700 * i as usize))?;
        }
        for i in (0..24u32).step_by(2) {
            fs.unlink(old, alloc::format!("x{i}").as_bytes())?;
        }
        // Fragmented: five extents, so an extent block.
        let frag = fs.create(old, b"frag", 0o644)?;
        for i in 0..6u64 {
            fs.write(frag, i * 3 * 4096, &pattern(9, 4096))?;
        }
        let x1 = fs.lookup(old, b"x1")?;
        fs.link(x1, b, b"hard")?;
        fs.create(old, &[b'L'; 180], 0o600)?;
    }
    fs.sync()?;
    Ok(fs.xn.into_disk().data)
}

/// The file an operation touched (for a following fsync).
fn touched(op: Op) -> Option<&'static str> {
    Some(match op {
        Op::WriteNew => "/a/w",
        Op::Overwrite | Op::Link => "/a/f1",
        Op::Append | Op::Truncate => "/a/f2",
        Op::RenameSame => "/a/f1r",
        Op::RenameCross => "/b/m",
        Op::RenameReplace => "/b/g",
        Op::Create => "/a/new",
        _ => return None,
    })
}

/// Every path an operation may change.
fn paths(op: Op) -> Vec<&'static str> {
    match op {
        Op::Link => alloc::vec!["/a/f1", "/b/l1"],
        Op::Unlink | Op::Overwrite => alloc::vec!["/a/f1"],
        Op::RenameSame | Op::RenameCross | Op::RenameReplace => {
            alloc::vec!["/a/f1", touched(op).unwrap_or("/")]
        }
        Op::Rmdir => alloc::vec!["/a/sub"],
        Op::Mkdir => alloc::vec!["/a/nd"],
        Op::Symlink => alloc::vec!["/b/s"],
        _ => touched(op).into_iter().collect(),
    }
}

fn touches(op: Op, path: &str) -> bool {
    paths(op).contains(&path)
}

/// What the checker must hold after a crash.
#[derive(Clone, Debug)]
pub enum Mark {
    /// From the flush at this log index on, the whole tree is snapshot
    /// `n`, but for the paths later operations change.
    Sync { flush: usize, snap: usize, later: Vec<&'static str> },
    /// From the flush at this log index on, `path` holds snapshot `n`'s.
    Fsync { flush: usize, snap: usize, path: &'static str },
}

/// A rename's two paths; snapshot `before` is the tree before it.
#[derive(Clone, Debug)]
pub struct Rename {
    pub before: usize,
    pub from: &'static str,
    pub to: &'static str,
}

/// A recorded run of a workload.
pub struct Run {
    pub log: Vec<crate::sim::disk::Event>,
    /// Snapshot 0 is the base; snapshot `i` is after operation `i`.
    pub snaps: Vec<Snapshot>,
    pub marks: Vec<Mark>,
    pub renames: Vec<Rename>,
    /// Paths some operation touches.
    pub touched: Vec<&'static str>,
}

fn last_flush(fs: &SimFs) -> usize {
    fs.xn.xn.disk().log.iter().rposition(|e| matches!(e, crate::sim::disk::Event::Flush)).unwrap_or(0)
}

/// Applies one operation (an error such as "no such file" is a valid
/// outcome and changes nothing).
fn apply(fs: &mut SimFs, op: Op, prev: Option<Op>) -> Result<()> {
    let a = fs.resolve("/a")?;
    let b = fs.resolve("/b")?;
    match op {
        Op::Create => fs.create(a, b"new", 0o644).map(drop),
        Op::WriteNew => {
            let w = fs.create(a, b"w", 0o644)?;
            fs.write(w, 0, &pattern(5, 6000)).map(drop)
        }
        Op::Overwrite => {
            let f = fs.lookup(a, b"f1")?;
            fs.write(f, 1000, &pattern(6, 100)).map(drop)
        }
        Op::Append => {
            let f = fs.lookup(a, b"f2")?;
            fs.append(f, &pattern(7, 5000)).map(drop)
        }
        Op::Truncate => {
            let f = fs.lookup(a, b"f2")?;
            fs.truncate(f, 1000)
        }
        Op::Link => {
            let f = fs.lookup(a, b"f1")?;
            fs.link(f, b, b"l1")
        }
        Op::Unlink => fs.unlink(a, b"f1"),
        Op::RenameSame => fs.rename(a, b"f1", a, b"f1r"),
        Op::RenameCross => fs.rename(a, b"f1", b, b"m"),
        Op::RenameReplace => fs.rename(a, b"f1", b, b"g"),
        Op::Mkdir => fs.mkdir(a, b"nd", 0o755).map(drop),
        Op::Rmdir => fs.rmdir(a, b"sub"),
        Op::Symlink => fs.symlink(b, b"s", b"/a/f1").map(drop),
        Op::Fsync => {
            let path = prev.and_then(touched).unwrap_or("/a/f2");
            let ino = fs.resolve(path)?;
            fs.fsync(ino)
        }
        Op::Sync => fs.sync(),
    }
}

/// Runs `ops` then a final sync on `base`, recording the disk.
pub fn run(base: &[u8], ops: &[Op], seeded_bug: bool) -> Result<Run> {
    let mut fs = mount_rec(base.to_vec())?;
    fs.xn.xn.disk_mut().log.clear();
    fs.seeded_bug = seeded_bug;
    let mut snaps = alloc::vec![snapshot(&mut fs)?];
    let mut marks = Vec::new();
    let mut renames = Vec::new();
    let mut all: Vec<Op> = ops.to_vec();
    all.push(Op::Sync);
    let mut touched_paths = Vec::new();
    for (i, &op) in all.iter().enumerate() {
        let prev = i.checked_sub(1).map(|p| all[p]);
        let done = match apply(&mut fs, op, prev) {
            Ok(()) => true,
            Err(Errno::NoEnt | Errno::Exist | Errno::NotEmpty | Errno::IsDir | Errno::NotDir) => false,
            Err(e) => return Err(e),
        };
        snaps.push(snapshot(&mut fs)?);
        let n = snaps.len() - 1;
        // An fsync promises the file as it is until something changes it.
        let untouched_later = |path: &str| all[i + 1..].iter().all(|&o| !touches(o, path));
        match op {
            Op::Sync => {
                let later = all[i + 1..].iter().flat_map(|&o| paths(o)).collect();
                marks.push(Mark::Sync { flush: last_flush(&fs), snap: n, later });
            }
            Op::Fsync if done => {
                let path = prev.and_then(touched).unwrap_or("/a/f2");
                if untouched_later(path) {
                    marks.push(Mark::Fsync { flush: last_flush(&fs), snap: n, path });
                }
            }
            Op::RenameSame | Op::RenameCross | Op::RenameReplace if done => {
                let to = touched(op).unwrap_or("/");
                renames.push(Rename { before: n - 1, from: "/a/f1", to });
            }
            _ => {}
        }
        touched_paths.extend(paths(op));
    }
    let log = core::mem::take(&mut fs.xn.xn.disk_mut().log);
    Ok(Run { log, snaps, marks, renames, touched: touched_paths })
}

/// Random workloads beyond the exhaustive ones.
pub fn random_ops(rng: &mut Rng, n: usize) -> Vec<Op> {
    (0..n).map(|_| OPS[rng.below(OPS.len() as u64) as usize]).collect()
}
