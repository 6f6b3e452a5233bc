//! `/data`, or `/` itself: the C-FFS of the XN disk (`docs/cffs.md`, "The
//! persistent directory" and "The disk as the root"), reached as an
//! ordinary directory by every program.
//!
//! The first process mounts C-FFS (with recovery) and makes the disk's
//! names in the in-memory file system at `/data` (or at `/`, lxrt's `-r`,
//! but for the memory trees mounted over it, `OVER`): directories, names,
//! modes, owners, sizes, times and symbolic links' targets, no file data.
//! A regular file's bytes stay in XN's buffer cache: each read, write and
//! truncation goes through the calling process's own C-FFS library over
//! the kernel's XN (`read`, `write`, `truncate`), and XN's registry is one
//! for all processes, so a block one process wrote is what the next reads
//! (paper 000 §4: the buffer-cache registry). The in-memory inode keeps
//! what the rest of lxrt needs (mode, size, times, the C-FFS inode and
//! where its entry was last seen); a write changes the size and mtime
//! there for every process at once, and C-FFS's entry once, at the next
//! close, `fsync` or write-back (`settle`), as ext4 keeps a dirty inode in
//! memory. Only three cases copy a file into the
//! arena (`copy_in`): a shared mapping (it maps arena pages), a program
//! being run (loaded from one buffer), and a file unlinked while open;
//! such a copy is written back as before (`write_back`) and dropped when
//! nobody maps or holds the file (`uncopy`).
//!
//! Every change of names (create, mkdir, symlink, link, unlink, rmdir,
//! rename, chmod) is made in XN's cache at once by the process that makes
//! it. Nothing is made durable then: as on Linux, a change reaches the
//! disk at `fsync`, `fdatasync`, `sync`, `syncfs`, a write through
//! `O_SYNC`/`O_DSYNC`, or by the periodic write-back (`expire`): 30 s
//! after the first change since the last write-back, whichever lxrt
//! process next makes a call or wakes from a wait (each wait wakes at
//! least every 50 ms) writes everything back, as Linux's flusher writes
//! what has been dirty 30 s.
//!
//! A process's C-FFS state (where inodes live, its batch of inode
//! numbers, its mappings of cached blocks) is its own: a forked child
//! opens its own (`forked_child`). Another process may have moved an
//! entry since; C-FFS checks each location it remembers before it uses it,
//! then the place the inode says (`place`), then looks the name up again
//! from `/data`. What a process stored into cache pages is told to XN
//! before its call returns (`SysXn::publish`), so whoever writes back next
//! finds it. The big lock keeps two processes from changing the disk at
//! once.

use super::node::{self, Ino, Inode};
use super::{dir, path, ROOT, S_IFDIR, S_IFLNK, S_IFMT, S_IFREG};
use crate::errno::Errno;
use crate::errno::{
    EACCES, EEXIST, EFBIG, EINVAL, EIO, EISDIR, ENAMETOOLONG, ENOENT, ENOMEM, ENOSPC, ENOTDIR, ENOTEMPTY,
    ENXIO, EPERM, EXDEV,
};
use crate::scoped::Scoped;
use crate::word::Word;
use abi::syscall::XN_SELF;
use alloc::vec::Vec;
use cffs::{Errno as CfsErrno, Fs, Loc, XnClient};
use core::sync::atomic::Ordering::Relaxed;

use super::xnclient::SysXn;

/// Where the disk's tree appears unless it is the root.
pub const AT: &[u8] = b"/data";
const NAME: &[u8] = b"data";

/// The names under `/` that stay in memory when the disk is the root: the
/// synthetic trees and `/tmp` (`boot::populate`), mounted over whatever
/// directories of these names the disk has.
const OVER: &[&[u8]] = &[b"dev", b"proc", b"sys", b"tmp"];

/// C-FFS's root directory's inode number.
const DISK_ROOT: u64 = 1;

/// Whether the first process mounted the disk (inherited by every
/// child). Each process acts on XN as itself (`XN_SELF`: its effective
/// uid and gid, which the kernel holds), so XN's `acl` judges a user's
/// every block by the disk's own inodes, whatever the arena says.
static MOUNTED: Word<bool> = Word::new(false);

/// This process's C-FFS, opened on first use.
static FS: Scoped<Option<Fs<SysXn>>> = Scoped::new("the disk's file system", None);

/// C-FFS's refusal as Linux's errno.
fn errno(e: CfsErrno) -> Errno {
    match e {
        CfsErrno::NoEnt => ENOENT,
        CfsErrno::Exist => EEXIST,
        CfsErrno::NotDir => ENOTDIR,
        CfsErrno::IsDir => EISDIR,
        CfsErrno::NotEmpty => ENOTEMPTY,
        CfsErrno::NoSpace => ENOSPC,
        CfsErrno::Access => EACCES,
        CfsErrno::Perm => EPERM,
        CfsErrno::NameTooLong => ENAMETOOLONG,
        CfsErrno::Inval => EINVAL,
        CfsErrno::FileTooBig => EFBIG,
        CfsErrno::Xn(_) | CfsErrno::Corrupt(_) => {
            // What the disk refused is said: EIO alone tells nobody why.
            crate::log::note(format_args!("the disk: C-FFS: {e:?}"));
            EIO
        }
    }
}

/// Runs `f` on this process's C-FFS (opened without recovery: the first
/// process recovered it at mount).
fn with_fs<R>(f: impl FnOnce(&mut Fs<SysXn>) -> Result<R, CfsErrno>) -> Result<R, Errno> {
    FS.with(|slot| {
        if slot.is_none() {
            let x = SysXn::open(XN_SELF).map_err(|_| EIO)?;
            *slot = Some(Fs::open(x, false).map_err(errno)?);
        }
        let fs = slot.as_mut().expect("opened above");
        fs.set_time(crate::time::wall_ns() as i64);
        f(fs).map_err(errno)
    })
}

/// The C-FFS inode of in-memory inode `ino`, if it lies on the disk.
fn on_disk(ino: Ino) -> Option<u64> {
    Some(node::get(ino).disk).filter(|&d| d != 0)
}

/// The in-memory directory the disk's root is: `/` or `/data`.
fn top() -> Option<Ino> {
    match on_disk(ROOT) {
        Some(_) => Some(ROOT),
        None => dir::lookup(ROOT, NAME).filter(|&d| on_disk(d).is_some()),
    }
}

/// The path of in-memory directory `d` inside the disk's tree.
fn disk_path(d: Ino) -> Option<Vec<u8>> {
    let abs = path::absolute(d);
    if top()? == ROOT {
        return Some(abs);
    }
    let rest = abs.strip_prefix(AT)?;
    Some(if rest.is_empty() { b"/".to_vec() } else { rest.to_vec() })
}

/// Where C-FFS knows directory `d` (in memory) as: its remembered inode,
/// checked, or found again by its path (another process moved it).
fn disk_dir(fs: &mut Fs<SysXn>, d: Ino) -> Result<u64, CfsErrno> {
    let ino = node::get(d).disk;
    if fs.exists(ino) {
        return Ok(ino);
    }
    let p = disk_path(d).ok_or(CfsErrno::NoEnt)?;
    fs.resolve(core::str::from_utf8(&p).map_err(|_| CfsErrno::Inval)?)
}

/// Where C-FFS knows regular file `ino` (in memory; `i` on the disk) as:
/// `i` where this process saw it, or where the inode says the last
/// process saw it (both checked), or found again by one of its paths.
fn disk_file(fs: &mut Fs<SysXn>, ino: Ino, i: u64) -> Result<u64, CfsErrno> {
    if fs.exists(i) {
        return Ok(i);
    }
    if unplace(node::get(ino).disk_at).is_some_and(|at| fs.recall(i, at)) {
        return Ok(i);
    }
    let top = top().ok_or(CfsErrno::NoEnt)?;
    let p = path_in(top, ino).ok_or(CfsErrno::NoEnt)?;
    fs.resolve(core::str::from_utf8(&p).map_err(|_| CfsErrno::Inval)?)
}

/// C-FFS's place of an entry as one word (`Inode::disk_at`): the block
/// times 16 plus the slot (1 to 15).
fn place(at: Loc) -> u64 {
    at.block.saturating_mul(16) | at.entry as u64
}

/// The place a word holds, if any (the word may be anything: C-FFS checks
/// the place before it believes it).
fn unplace(w: u64) -> Option<Loc> {
    (w != 0).then_some(Loc { block: w / 16, entry: (w % 16) as usize })
}

/// Notes in inode `ino` where C-FFS has its inode `i` now.
fn placed(fs: &Fs<SysXn>, ino: Ino, i: u64) {
    if let Some(at) = fs.location(i) {
        node::update(ino, |n| n.disk_at = place(at));
    }
}

/// A path of `ino` below in-memory directory `d`, relative to it, through
/// the disk's directories only.
fn path_in(d: Ino, ino: Ino) -> Option<Vec<u8>> {
    let kids: Vec<(Ino, Vec<u8>)> = dir::with_entries(d, |es| {
        es.iter()
            .filter(|e| e.name() != b"." && e.name() != b"..")
            .map(|e| (e.ino, e.name().to_vec()))
            .collect()
    });
    for (k, name) in kids {
        let mut p = b"/".to_vec();
        p.extend_from_slice(&name);
        if k == ino {
            return Some(p);
        }
        if node::is_dir(k) && on_disk(k).is_some() {
            if let Some(rest) = path_in(k, ino) {
                p.extend_from_slice(&rest);
                return Some(p);
            }
        }
    }
    None
}

/// Whether the disk is mounted (a disk was found at start).
fn mounted() -> bool {
    MOUNTED.get()
}

/// First process, after the boot tree is built: mounts the disk's C-FFS
/// (if the machine has an XN disk holding one) and makes its names at
/// `/data`, or at `/` if the boot tree left the root to the disk
/// (`boot::root_is_disk`).
pub fn mount() {
    let at_root = super::boot::root_is_disk();
    let at = if at_root { "/" } else { "/data" };
    let Ok(x) = SysXn::open(abi::syscall::CRED_DEVICES) else {
        if at_root {
            crate::log::note(format_args!("/: no XN disk to mount"));
        }
        return;
    };
    let mut fs = match Fs::mount(x) {
        Ok(fs) => fs,
        Err(e) => return crate::log::note(format_args!("{at}: the disk's C-FFS is refused: {e:?}")),
    };
    let made = match at_root {
        true => Ok(ROOT),
        false => node::alloc(S_IFDIR | 0o755).and_then(|d| dir::add(ROOT, NAME, d).map(|_| d)),
    };
    let loaded = made.and_then(|d| {
        let st = fs.stat(DISK_ROOT).map_err(errno)?;
        node::update(d, |n| (n.disk, n.mode, n.uid, n.gid) = (DISK_ROOT, st.mode, st.uid, st.gid));
        let mut seen = Vec::new();
        load(&mut fs, DISK_ROOT, d, &mut seen)?;
        Ok(seen.len())
    });
    match loaded {
        Ok(n) => {
            MOUNTED.set(true);
            // Mounted (and recovered) with the device capability; from
            // now on this process acts as itself, like every other.
            fs.xn.act_with(XN_SELF);
            FS.with(|s| *s = Some(fs));
            // An idle system's changes reach the disk too.
            crate::sleep::on_wake(expire);
            crate::log::note(format_args!("{at} is C-FFS on the XN disk ({n} names)"));
        }
        Err(e) => crate::log::note(format_args!("{at}: cannot load the disk's tree: errno {e}")),
    }
}

/// Makes C-FFS directory `from`'s names in in-memory directory `to` (no
/// file's data: it stays on the disk, read through XN's cache when asked
/// for); `seen` pairs each C-FFS inode met with its in-memory one (hard
/// links).
fn load(fs: &mut Fs<SysXn>, from: u64, to: Ino, seen: &mut Vec<(u64, Ino)>) -> Result<(), Errno> {
    let names = fs.readdir(from).map_err(errno)?;
    for (name, ino, _) in names {
        if name == b"." || name == b".." || (to == ROOT && OVER.contains(&&name[..])) {
            continue;
        }
        if let Some(&(_, m)) = seen.iter().find(|(d, _)| *d == ino) {
            dir::add(to, &name, m)?;
            continue;
        }
        let st = fs.stat(ino).map_err(errno)?;
        let m = node::alloc(st.mode)?;
        seen.push((ino, m));
        dir::add(to, &name, m)?;
        match st.mode & S_IFMT {
            S_IFDIR => load(fs, ino, m, seen)?,
            S_IFLNK => {
                let t = fs.readlink(ino).map_err(errno)?;
                node::update(m, |n| node::write_at(n, 0, &t))?;
            }
            _ => node::update(m, |n| n.size = st.size),
        }
        placed(fs, m, ino);
        node::update(m, |n| {
            (n.uid, n.gid, n.disk, n.dirty) = (st.uid, st.gid, ino, false);
            (n.atime_ns, n.mtime_ns, n.ctime_ns) = (st.atime as u64, st.mtime as u64, st.ctime as u64);
        });
    }
    Ok(())
}

/// `ino` was just linked into `d` as `name` (a new file, directory or
/// symlink): made on the disk too if `d` is there. On failure the caller
/// undoes its own change.
pub fn created(d: Ino, name: &[u8], ino: Ino) -> Result<(), Errno> {
    if !mounted() || on_disk(d).is_none() {
        return Ok(());
    }
    let n = node::get(ino);
    let made = with_fs(|fs| {
        let at = disk_dir(fs, d)?;
        let i = match n.mode & S_IFMT {
            S_IFDIR => fs.mkdir(at, name, n.mode)?,
            S_IFLNK => fs.symlink(at, name, node::bytes(&n))?,
            S_IFREG => fs.create(at, name, n.mode)?,
            _ => return Err(CfsErrno::Perm), // device nodes, fifos: memory only
        };
        // C-FFS makes it as its caller's effective ids; the inode's (a
        // setgid directory's group) follow.
        if (n.uid, n.gid) != (fs.xn.cred().uid, fs.xn.cred().gid) && n.mode & S_IFMT != S_IFLNK {
            fs.setattr(i, None, Some((n.uid, n.gid)))?;
        }
        placed(fs, ino, i);
        Ok(i)
    })?;
    node::update(ino, |n| n.disk = made);
    changed();
    Ok(())
}

/// `name` is about to go from `d` (unlink or rmdir).
pub fn removing(d: Ino, name: &[u8], is_dir: bool) -> Result<(), Errno> {
    if !mounted() || on_disk(d).is_none() {
        return Ok(());
    }
    let orphan = keep_orphan(dir::lookup(d, name))?;
    with_fs(|fs| {
        let at = disk_dir(fs, d)?;
        if is_dir {
            fs.rmdir(at, name)
        } else {
            fs.unlink(at, name)
        }
    })?;
    off_disk(orphan);
    changed();
    Ok(())
}

/// A regular file on the disk about to lose its last name while open or
/// mapped: C-FFS has no inode without a name, so its bytes are copied to
/// the arena first, and it lives on there (`off_disk`).
fn keep_orphan(f: Option<Ino>) -> Result<Option<Ino>, Errno> {
    let Some(f) = f else { return Ok(None) };
    let n = node::get(f);
    if n.disk == 0 || n.mode & S_IFMT != S_IFREG || n.nlink > 1 || n.opens + n.maps == 0 {
        return Ok(None);
    }
    copy_in(f)?;
    Ok(Some(f))
}

/// The orphan `keep_orphan` copied is the disk's no more.
fn off_disk(orphan: Option<Ino>) {
    if let Some(f) = orphan {
        node::update(f, |n| (n.disk, n.disk_at, n.copied) = (0, 0, false));
    }
}

/// `od/oname` is about to become `nd/nname`: on the disk as one C-FFS
/// rename (atomic there). Between the disk and memory: `EXDEV`.
pub fn renaming(od: Ino, oname: &[u8], nd: Ino, nname: &[u8]) -> Result<(), Errno> {
    if !mounted() {
        return Ok(());
    }
    match (on_disk(od), on_disk(nd)) {
        (None, None) => Ok(()),
        (Some(_), Some(_)) => {
            let orphan = keep_orphan(dir::lookup(nd, nname))?;
            let moved = dir::lookup(od, oname);
            with_fs(|fs| {
                let (a, b) = (disk_dir(fs, od)?, disk_dir(fs, nd)?);
                fs.rename(a, oname, b, nname)?;
                // The entry may be in another block now.
                if let Some(m) = moved {
                    placed(fs, m, node::get(m).disk);
                }
                Ok(())
            })?;
            off_disk(orphan);
            changed();
            Ok(())
        }
        _ => Err(EXDEV),
    }
}

/// A second name `d/name` for `ino`, which is on the disk if `d` is.
pub fn linking(ino: Ino, d: Ino, name: &[u8]) -> Result<(), Errno> {
    if !mounted() {
        return Ok(());
    }
    match (on_disk(ino), on_disk(d)) {
        (None, None) => Ok(()),
        (Some(i), Some(_)) => with_fs(|fs| {
            let at = disk_dir(fs, d)?;
            let i = disk_file(fs, ino, i)?;
            fs.link(i, at, name)?;
            // The first link moves the inode into the inode table.
            placed(fs, ino, i);
            Ok(())
        })
        .map(|_| changed()),
        _ => Err(EXDEV),
    }
}

/// `ino`'s mode or owner changed in memory: the same on the disk.
pub fn attributes(ino: Ino) -> Result<(), Errno> {
    let Some(i) = on_disk(ino).filter(|_| mounted()) else {
        return Ok(());
    };
    let n = node::get(ino);
    with_fs(|fs| {
        let i = if node::is_dir(ino) { disk_dir(fs, ino)? } else { disk_file(fs, ino, i)? };
        fs.setattr(i, Some(n.mode), Some((n.uid, n.gid)))
    })?;
    changed();
    Ok(())
}

/// `statfs` of the disk: its blocks and how many are free, as C-FFS
/// counts them (XN's free map: every block the disk has is looked at).
pub fn space() -> Result<(u64, u64), Errno> {
    if !mounted() {
        return Err(EIO);
    }
    with_fs(|fs| {
        let s = fs.statfs();
        Ok((s.blocks, s.bfree))
    })
}

/// Whether regular file `n`'s bytes are in XN's cache (read and written
/// through C-FFS), not in the arena.
pub fn direct(n: &Inode) -> bool {
    n.disk != 0 && n.mode & S_IFMT == S_IFREG && !n.copied
}

/// Runs `op` on regular file `ino` in this process's C-FFS, with the
/// C-FFS inode it stands for; if C-FFS no longer knows where that inode
/// is (another process moved it, or this one never met it), it is found
/// again (`disk_file`) and `op` runs once more.
fn on_file<R>(ino: Ino, mut op: impl FnMut(&mut Fs<SysXn>, u64) -> Result<R, CfsErrno>) -> Result<R, Errno> {
    let i = node::get(ino).disk;
    with_fs(|fs| match op(fs, i) {
        Err(CfsErrno::NoEnt) => {
            let i = disk_file(fs, ino, i)?;
            op(fs, i)
        }
        done => done,
    })
}

/// Reads file `ino` (`direct`) from `off` through this process's C-FFS:
/// XN's cache pages, read from the disk once by whoever needed them
/// first. The inode's size bounds it (C-FFS's entry may be behind:
/// `settle`); past the file's extents C-FFS gives zeros.
pub fn read(ino: Ino, off: u64, buf: &mut [u8]) -> Result<usize, Errno> {
    let size = node::get(ino).size;
    if off >= size {
        return Ok(0);
    }
    on_file(ino, |fs, i| fs.read_sized(i, off, buf, size))
}

/// Writes `buf` at `off` into file `ino` (`direct`): into XN's cache
/// pages, told to XN as dirty before the call returns; the inode's size
/// and times follow for every process at once, C-FFS's entry at the next
/// close, `fsync` or write-back (`settle`).
pub fn write(ino: Ino, off: u64, buf: &[u8]) -> Result<usize, Errno> {
    let end = off.checked_add(buf.len() as u64).ok_or(EFBIG)?;
    let behind = on_file(ino, |fs, i| {
        let behind = fs.write_data(i, off, buf)?;
        fs.xn.publish().map_err(CfsErrno::Xn)?;
        Ok(behind)
    })?;
    resized(ino, node::get(ino).size.max(end), behind);
    Ok(buf.len())
}

/// Sets file `ino`'s (`direct`) size to `len`, on the disk's inode.
pub fn truncate(ino: Ino, len: u64) -> Result<(), Errno> {
    on_file(ino, |fs, i| {
        settle(fs, ino, i)?;
        fs.truncate(i, len)?;
        fs.xn.publish().map_err(CfsErrno::Xn)
    })?;
    resized(ino, len, false);
    Ok(())
}

/// `SEEK_DATA` (`hole` false) or `SEEK_HOLE` from `off` in file `ino`
/// (`direct`), by its extents: ENXIO at or past the end, or with no data
/// after `off`.
pub fn seek(ino: Ino, off: u64, hole: bool) -> Result<u64, Errno> {
    on_file(ino, |fs, i| {
        settle(fs, ino, i)?;
        fs.seek(i, off, hole)
    })?
    .ok_or(ENXIO)
}

/// File `ino`'s data changed on the disk and its size is `size`: the
/// inode says so to every process, and the write-back's clock runs;
/// `behind`: C-FFS's entry does not say so yet (`settle`).
fn resized(ino: Ino, size: u64, behind: bool) {
    node::update(ino, |n| {
        n.size = size;
        n.mtime_ns = crate::time::wall_ns();
        n.ctime_ns = n.mtime_ns;
        n.stale |= behind;
    });
    changed();
}

/// Writes the size and mtime file `ino` (C-FFS's `i`) has in the inode
/// into its C-FFS entry, if writes left the entry behind (`Inode::stale`):
/// one change of the entry for any number of writes before it.
fn settle(fs: &mut Fs<SysXn>, ino: Ino, i: u64) -> Result<(), CfsErrno> {
    let n = node::get(ino);
    if n.stale {
        fs.settle(i, n.size, n.mtime_ns as i64)?;
        node::update(ino, |n| n.stale = false);
    }
    Ok(())
}

/// Gives file `ino` a copy of its bytes in the arena (`Inode::copied`),
/// if it has none: a shared mapping maps arena pages, a program is loaded
/// from one buffer, an orphan has no disk inode to read through. From
/// then on the copy is the file, written back at close and sync.
pub fn copy_in(ino: Ino) -> Result<(), Errno> {
    let n = node::get(ino);
    if !direct(&n) {
        return Ok(());
    }
    // C-FFS's size (the inode's, settled first), checked: no file larger
    // than the arena can hold is copied, nor asked for.
    let size = on_file(ino, |fs, i| {
        settle(fs, ino, i)?;
        Ok(fs.stat(i)?.size)
    })?;
    if size > crate::layout::SHARED_MAX {
        return Err(EFBIG);
    }
    let mut buf = Vec::new();
    buf.try_reserve_exact(size as usize).map_err(|_| ENOMEM)?;
    buf.resize(size as usize, 0);
    let got = on_file(ino, |fs, i| fs.read(i, 0, &mut buf))?;
    node::update(ino, |c| {
        c.size = 0;
        node::write_at(c, 0, &buf[..got])?;
        (c.mtime_ns, c.ctime_ns, c.dirty, c.copied) = (n.mtime_ns, n.ctime_ns, false, true);
        Ok(())
    })
}

/// File `ino`'s (`direct`) bytes seen at `at` without copying them: its
/// cache pages, each bound for reading (XN checking this process's
/// identity) and mapped read-only there in file order. None when it
/// cannot be (an inline or holed file, or larger than `max`): the caller
/// copies (`copy_in`). `vm::drop_view` unmaps it.
pub fn view(ino: Ino, at: u64, max: u64) -> Result<Option<&'static [u8]>, Errno> {
    let n = node::get(ino);
    if !direct(&n) || n.size > max {
        return Ok(None);
    }
    let size = n.size;
    let sources = on_file(ino, |fs, i| {
        settle(fs, ino, i)?;
        let Some(blocks) = fs.data_blocks(i, size)? else { return Ok(None) };
        let mut pages = Vec::with_capacity(blocks.len());
        for b in blocks {
            let Some(b) = b else { return Ok(None) };
            pages.push(fs.xn.block(b).map_err(CfsErrno::Xn)?.as_ptr() as u64);
        }
        Ok(Some(pages))
    })?;
    let Some(sources) = sources else { return Ok(None) };
    if !crate::vm::map_view(at, &sources) {
        crate::vm::drop_view(at, at + max);
        return Ok(None);
    }
    // SAFETY: `[at, at + size)` is mapped read-only just above and stays
    // so until `vm::drop_view`, which exec calls once it is done with it.
    Ok(Some(unsafe { core::slice::from_raw_parts(at as *const u8, size as usize) }))
}

/// Drops file `ino`'s arena copy once nobody holds or maps it and it is
/// written back: its bytes are XN's again.
pub fn uncopy(ino: Ino) {
    node::update(ino, |n| {
        if n.copied && n.opens == 0 && n.maps == 0 && !n.dirty {
            node::drop_copy(n);
        }
    });
}

/// How far a write-back goes (`write_back`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Durable {
    /// Into XN's cache only (a close): the disk gets it at the next
    /// `sync` or periodic write-back.
    No,
    /// The data durable, the inode only if the size or block map changed
    /// (`fdatasync`, `O_DSYNC`).
    Data,
    /// Data, inode and name durable (`fsync`, `O_SYNC`).
    All,
}

/// How long a change under `/data` may wait in the cache before the
/// periodic write-back (Linux's `dirty_expire_centisecs`, 30 s).
pub const EXPIRE_NS: u64 = 30_000_000_000;

/// Something under `/data` changed in the cache: the periodic write-back's
/// clock starts if it is not running.
pub fn changed() {
    let w = crate::shared::disk_dirty_since();
    if w.load(Relaxed) == 0 {
        w.store(crate::time::now_ns().max(1), Relaxed);
    }
}

/// The periodic write-back: if `/data` has waited `EXPIRE_NS` since its
/// first change, everything is written back now (`sync`). Every call's
/// start and every wake from a wait asks (under the big lock): one load
/// while nothing waits.
pub fn expire() {
    let since = crate::shared::disk_dirty_since().load(Relaxed);
    if since == 0 || !mounted() || crate::time::now_ns().saturating_sub(since) < EXPIRE_NS {
        return;
    }
    if let Err(e) = sync() {
        // Tried again a period later; what failed is on the console.
        crate::log::note(format_args!("/data: the periodic write-back failed: errno {e}"));
        crate::shared::disk_dirty_since().store(crate::time::now_ns().max(1), Relaxed);
    }
}

/// Writes regular file `ino`'s arena copy (`copy_in`) into XN's cache if
/// it changed since (a close does only this; a file without a copy is in
/// the cache already), and makes it durable as far as `durable`
/// asks (C-FFS's `fsync` or `fdatasync`: with `All`, its data, entry and
/// the entries above it, even if unchanged: its name may be new).
pub fn write_back(ino: Ino, durable: Durable) -> Result<(), Errno> {
    let n = node::get(ino);
    let Some(i) = Some(n.disk).filter(|&d| d != 0 && mounted() && n.mode & S_IFMT == S_IFREG) else {
        return Ok(());
    };
    if !n.dirty && !n.stale && durable == Durable::No {
        return Ok(());
    }
    with_fs(|fs| {
        let i = disk_file(fs, ino, i)?;
        settle(fs, ino, i)?;
        if n.dirty {
            let data = node::contents(&n);
            // Shortened only: a file grown by writes keeps C-FFS's choice
            // of inline data or blocks.
            if fs.stat(i)?.size > data.len() as u64 {
                fs.truncate(i, data.len() as u64)?;
            }
            let mut off = 0;
            while off < data.len() {
                off += fs.write(i, off as u64, &data[off..])?;
            }
            fs.xn.publish().map_err(CfsErrno::Xn)?;
        }
        match durable {
            Durable::No => Ok(()),
            Durable::Data => fs.fdatasync(i),
            Durable::All => fs.fsync(i),
        }
    })?;
    node::update(ino, |n| n.dirty = false);
    if durable == Durable::No {
        changed();
    }
    Ok(())
}

/// `sync`, `syncfs` and the periodic write-back: every changed file under
/// `/data` written to the cache, then everything C-FFS has made durable
/// (names included), `SYNC_STEP` blocks at a time: after a step that
/// left blocks ready to write the library's lock is let go
/// (`lock::wait`), so a sync of thousands of blocks never holds it past
/// the kernel's bound while the disk works.
pub fn sync() -> Result<(), Errno> {
    /// Blocks written a step (1 MiB: a few requests, `dev::run`).
    const SYNC_STEP: usize = 256;
    if !mounted() {
        return Ok(());
    }
    if let Some(top) = top() {
        sync_tree(top)?;
    }
    let (mut syncing, mut flushed) = (with_fs(|fs| Ok(fs.sync_start()))?, 0);
    loop {
        match with_fs(|fs| fs.sync_step(&mut syncing, SYNC_STEP))? {
            cffs::Step::Done => break,
            cffs::Step::Flushed if flushed == cffs::ROUNDS => return Err(EIO),
            cffs::Step::Flushed => flushed += 1,
            cffs::Step::Wrote if crate::lock::held() => crate::lock::wait(),
            cffs::Step::Wrote => {}
        }
    }
    crate::shared::disk_dirty_since().store(0, Relaxed);
    Ok(())
}

fn sync_tree(d: Ino) -> Result<(), Errno> {
    let kids: Vec<Ino> = dir::with_entries(d, |es| es.iter().map(|e| e.ino).collect());
    for k in kids {
        if node::is_dir(k) && on_disk(k).is_some() {
            sync_tree(k)?;
        } else {
            match write_back(k, Durable::No) {
                // C-FFS judged by the disk's inode (not the arena's, which
                // anyone may forge) that this process may not write it:
                // left to its writer, who settles it at close.
                Err(EACCES) => {}
                r => r?,
            }
        }
    }
    Ok(())
}

/// First thing in a forked child: its own C-FFS (the parent's mappings
/// of cached blocks were not copied).
pub fn forked_child() {
    if mounted() {
        // The parent's state holds nothing unwritten: every change is
        // made through XN at once, and data is written back to the cache
        // and told to XN (`publish`) before a call returns.
        FS.with(|s| core::mem::forget(s.take()));
    }
}
