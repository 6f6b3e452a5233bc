//! inotify: watches on inodes of the in-memory file system, and a queue of
//! `struct inotify_event` records a read takes whole. The calls that change
//! the file system raise the events where they change it (`created`,
//! `removed`, `moved`, `changed`: the personality's file calls and the
//! open files' writes and closes); each goes to every instance watching the
//! inode itself, and, named, to every instance watching its directory.
//!
//! An instance lives in the shared arena (processes share it across fork
//! as any open file); a registry of instances hangs from arena root 8, so
//! raising an event costs one load when nobody watches anything. The queue
//! starts with a predicate's header (`crate::predicate`: head − tail is
//! the bytes queued), so a blocked read, `poll` and `epoll_wait` sleep in
//! the kernel until an event comes. Everything changes under the big lock.

use super::flags::{NONBLOCK, RDONLY};
use super::{no_seek, no_write, File, Handle, Kind, Object, Ops, POLLIN};
use crate::errno::Errno;
use crate::errno::{EAGAIN, EEXIST, EINVAL, ENOMEM, ENOSPC, ENOTTY};
use crate::fs::{dir, node, Ino, Stat};
use crate::shared;
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// Event bits (`<sys/inotify.h>`).
pub const IN_ACCESS: u32 = 0x1;
pub const IN_MODIFY: u32 = 0x2;
pub const IN_ATTRIB: u32 = 0x4;
pub const IN_CLOSE_WRITE: u32 = 0x8;
pub const IN_CLOSE_NOWRITE: u32 = 0x10;
pub const IN_OPEN: u32 = 0x20;
const IN_MOVED_FROM: u32 = 0x40;
const IN_MOVED_TO: u32 = 0x80;
const IN_CREATE: u32 = 0x100;
const IN_DELETE: u32 = 0x200;
const IN_DELETE_SELF: u32 = 0x400;
const IN_MOVE_SELF: u32 = 0x800;
const IN_Q_OVERFLOW: u32 = 0x4000;
const IN_IGNORED: u32 = 0x8000;
/// Every event a watch can ask for (`IN_ALL_EVENTS`).
const ALL_EVENTS: u32 = 0xfff;
pub const IN_ONLYDIR: u32 = 0x0100_0000;
pub const IN_DONT_FOLLOW: u32 = 0x0200_0000;
const IN_EXCL_UNLINK: u32 = 0x0400_0000;
pub const IN_MASK_CREATE: u32 = 0x1000_0000;
pub const IN_MASK_ADD: u32 = 0x2000_0000;
const IN_ISDIR: u32 = 0x4000_0000;
const IN_ONESHOT: u32 = 0x8000_0000;
/// Every bit `inotify_add_watch` takes.
pub const VALID: u32 =
    ALL_EVENTS | IN_ONLYDIR | IN_DONT_FOLLOW | IN_EXCL_UNLINK | IN_MASK_CREATE | IN_MASK_ADD | IN_ONESHOT;

/// Bytes a queue holds, watches an instance holds, instances at once.
const QUEUE: usize = 16384;
const WATCHES: usize = 128;
const INSTANCES: usize = 64;
/// `struct inotify_event` without its name.
const HEADER: usize = 16;
/// No event to merge a new one with.
const NONE: usize = usize::MAX;

#[derive(Clone, Copy)]
#[repr(C)]
struct Watch {
    /// Its descriptor (0: a free entry).
    wd: i32,
    mask: u32,
    ino: Ino,
}

#[repr(C, align(64))]
pub struct Inotify {
    /// The predicate's header: both 1 (never an end), head the bytes
    /// queued, tail 0.
    readers: AtomicU32,
    writers: AtomicU32,
    head: AtomicU64,
    tail: AtomicU64,
    room: AtomicU64,
    len: usize,
    /// Where the last event queued starts (a new one equal to it is
    /// dropped, as Linux merges them), or `NONE`.
    last: usize,
    overflowed: bool,
    next_wd: i32,
    watches: [Watch; WATCHES],
    queue: [u8; QUEUE],
}

const _: () = {
    assert!(core::mem::offset_of!(Inotify, readers) == crate::predicate::READERS_AT as usize);
    assert!(core::mem::offset_of!(Inotify, writers) == crate::predicate::WRITERS_AT as usize);
    assert!(core::mem::offset_of!(Inotify, head) == crate::predicate::HEAD_AT as usize);
    assert!(core::mem::offset_of!(Inotify, tail) == crate::predicate::TAIL_AT as usize);
};

/// The instances, and how many watches they hold in all.
struct Registry {
    all: [*mut Inotify; INSTANCES],
    watches: usize,
    cookie: u32,
}

/// Slot 8 of the arena's roots (`shared::Root`).
static REGISTRY: shared::Root<Registry> = shared::Root::new(8);

/// The registry, once the first instance has made it.
fn registry() -> Option<&'static mut Registry> {
    // SAFETY: made by `create`, it lives as long as the arena; the big lock
    // is held and no other reference to it is live.
    unsafe { REGISTRY.get().as_mut() }
}

pub static OPS: Ops = Ops { read, write: no_write, seek: no_seek, stat, ioctl, close };

/// A new instance; `flags` its status flags (`NONBLOCK`).
pub fn create(flags: u32) -> Result<Handle<File>, Errno> {
    // SAFETY: null pointers and zero counts are an empty registry; the big
    // lock is held and no other reference to it is live.
    let r = unsafe { &mut *REGISTRY.get_or_create_zeroed().map_err(|_| ENOMEM)? };
    let slot = r.all.iter().position(|p| p.is_null()).ok_or(crate::errno::EMFILE)?;
    let p = shared::alloc(size_of::<Inotify>(), align_of::<Inotify>()) as *mut Inotify;
    if p.is_null() {
        return Err(ENOMEM);
    }
    // SAFETY: a fresh block for an Inotify; all zero is an empty one.
    let i = unsafe {
        p.write_bytes(0, 1);
        &mut *p
    };
    i.readers.store(1, Ordering::Relaxed);
    i.writers.store(1, Ordering::Relaxed);
    i.last = NONE;
    i.next_wd = 1;
    match super::new(Kind::Inotify, (flags & NONBLOCK) | RDONLY, 0) {
        Ok(f) => {
            r.all[slot] = p;
            // SAFETY: just made; nobody else refers to it yet; `p` is a
            // live instance.
            unsafe { f.get_mut().obj = Object::Inotify(Handle::from_raw(p)) };
            Ok(f)
        }
        Err(e) => {
            // SAFETY: made above, named by nothing.
            unsafe { shared::free(p as *mut u8, size_of::<Inotify>(), align_of::<Inotify>()) };
            Err(e)
        }
    }
}

/// The instance behind description `f`, if it is one.
fn of(f: &File) -> Option<&'static mut Inotify> {
    // SAFETY: an inotify description's object is its instance, live while
    // it is open; the big lock is held.
    (f.kind == Kind::Inotify).then(|| unsafe { f.object::<Inotify>().get_mut() })
}

/// `inotify_add_watch` on `f` for inode `ino`: its watch descriptor.
pub fn add_watch(f: &File, ino: Ino, mask: u32) -> Result<i64, Errno> {
    let i = of(f).ok_or(EINVAL)?;
    let r = registry().ok_or(ENOMEM)?;
    if let Some(w) = i.watches.iter_mut().find(|w| w.wd != 0 && w.ino == ino) {
        if mask & IN_MASK_CREATE != 0 {
            return Err(EEXIST);
        }
        w.mask = if mask & IN_MASK_ADD != 0 { w.mask | mask } else { mask };
        return Ok(w.wd as i64);
    }
    let w = i.watches.iter_mut().find(|w| w.wd == 0).ok_or(ENOSPC)?;
    *w = Watch { wd: i.next_wd, mask, ino };
    i.next_wd += 1;
    r.watches += 1;
    Ok(w.wd as i64)
}

/// `inotify_rm_watch`: the watch goes, with an `IN_IGNORED` event.
pub fn rm_watch(f: &File, wd: i64) -> Result<i64, Errno> {
    let i = of(f).ok_or(EINVAL)?;
    let at = i.watches.iter().position(|w| w.wd != 0 && w.wd as i64 == wd).ok_or(EINVAL)?;
    forget(i, at);
    Ok(0)
}

/// Takes watch `at` out of `i`, queueing `IN_IGNORED`.
fn forget(i: &mut Inotify, at: usize) {
    let wd = i.watches[at].wd;
    i.watches[at].wd = 0;
    if let Some(r) = registry() {
        r.watches -= 1;
    }
    queue(i, wd, IN_IGNORED, 0, b"");
}

/// Queues an event (merged with an equal last one; past the queue's room,
/// one `IN_Q_OVERFLOW`).
fn queue(i: &mut Inotify, wd: i32, mask: u32, cookie: u32, name: &[u8]) {
    let padded = if name.is_empty() { 0 } else { (name.len() + 1).next_multiple_of(HEADER) };
    let size = HEADER + padded;
    let mut e = [0u8; HEADER + 272];
    e[..4].copy_from_slice(&wd.to_ne_bytes());
    e[4..8].copy_from_slice(&mask.to_ne_bytes());
    e[8..12].copy_from_slice(&cookie.to_ne_bytes());
    e[12..16].copy_from_slice(&(padded as u32).to_ne_bytes());
    e[HEADER..HEADER + name.len()].copy_from_slice(name);
    if i.last != NONE && i.queue.get(i.last..i.last + size) == Some(&e[..size]) && i.last + size == i.len {
        return;
    }
    if i.len + size > QUEUE - HEADER {
        if !i.overflowed {
            i.overflowed = true;
            let at = i.len;
            i.queue[at..at + 4].copy_from_slice(&(-1i32).to_ne_bytes());
            i.queue[at + 4..at + 8].copy_from_slice(&IN_Q_OVERFLOW.to_ne_bytes());
            i.queue[at + 8..at + HEADER].fill(0);
            i.len += HEADER;
            i.last = NONE;
            i.head.store(i.len as u64, Ordering::Release);
        }
        return;
    }
    i.queue[i.len..i.len + size].copy_from_slice(&e[..size]);
    i.last = i.len;
    i.len += size;
    i.head.store(i.len as u64, Ordering::Release);
}

/// Sends `mask` about inode `ino` to every watch on `target`: `ino`
/// itself (no name), or its directory (naming it `name`); `IN_ISDIR` is
/// added for a directory, and a one-shot watch goes after it.
fn send(target: Ino, ino: Ino, mask: u32, cookie: u32, name: &[u8]) {
    let Some(r) = registry() else { return };
    let isdir = if node::is_dir(ino) { IN_ISDIR } else { 0 };
    for &p in r.all.iter().filter(|p| !p.is_null()) {
        // SAFETY: a registered instance is live; the big lock is held.
        let i = unsafe { &mut *p };
        for at in 0..WATCHES {
            let w = i.watches[at];
            if w.wd != 0 && w.ino == target && w.mask & mask != 0 {
                queue(i, w.wd, mask | isdir, cookie, name);
                if w.mask & IN_ONESHOT != 0 {
                    forget(i, at);
                }
            }
        }
    }
}

fn to_self(ino: Ino, mask: u32, cookie: u32) {
    send(ino, ino, mask, cookie, b"");
}

/// An entry of `d` changed: for inotify's watches on `d`, and dnotify's
/// marks.
fn to_dir(d: Ino, name: &[u8], ino: Ino, mask: u32, cookie: u32) {
    use super::dnotify as dn;
    // Linux's mapping: a rename is DN_RENAME alone.
    let map = [
        (IN_ACCESS, dn::DN_ACCESS),
        (IN_MODIFY, dn::DN_MODIFY),
        (IN_CREATE, dn::DN_CREATE),
        (IN_DELETE, dn::DN_DELETE),
        (IN_MOVED_FROM | IN_MOVED_TO, dn::DN_RENAME),
        (IN_ATTRIB, dn::DN_ATTRIB),
    ];
    dn::changed(d, map.iter().filter(|(i, _)| mask & i != 0).fold(0, |m, (_, d)| m | d));
    send(d, ino, mask, cookie, name);
}

/// Whether any watch or dnotify mark exists (raising costs nothing
/// otherwise).
fn watched() -> bool {
    registry().is_some_and(|r| r.watches > 0) || super::dnotify::marked()
}

/// `ino` went: `IN_DELETE_SELF` and then `IN_IGNORED` for its watches,
/// which go.
fn deleted(ino: Ino) {
    to_self(ino, IN_DELETE_SELF, 0);
    let Some(r) = registry() else { return };
    for &p in r.all.iter().filter(|p| !p.is_null()) {
        // SAFETY: as in `send`.
        let i = unsafe { &mut *p };
        for at in 0..WATCHES {
            if i.watches[at].wd != 0 && i.watches[at].ino == ino {
                forget(i, at);
            }
        }
    }
}

/// `ino` was linked into directory `d` as `name` (made, or linked again).
pub fn created(d: Ino, name: &[u8], ino: Ino) {
    if watched() {
        to_dir(d, name, ino, IN_CREATE, 0);
    }
}

/// Entry `name` of `d` (inode `ino`) was removed: its link count changed
/// (`IN_ATTRIB`, not for a directory), it went if that was its last link,
/// and `d` lost it.
pub fn removed(d: Ino, name: &[u8], ino: Ino) {
    if !watched() {
        return;
    }
    if !node::is_dir(ino) {
        to_self(ino, IN_ATTRIB, 0);
    }
    if node::get(ino).nlink == 0 || node::is_dir(ino) {
        deleted(ino);
    }
    to_dir(d, name, ino, IN_DELETE, 0);
}

/// Inode `ino` (not a directory) lost its last link by being replaced by
/// a rename.
pub fn replaced(ino: Ino) {
    if watched() && node::get(ino).nlink == 0 {
        deleted(ino);
    }
}

/// `ino` moved from `od`/`oname` to `nd`/`nname`: the two halves share a
/// cookie.
pub fn moved(od: Ino, oname: &[u8], nd: Ino, nname: &[u8], ino: Ino) {
    if !watched() {
        return;
    }
    let cookie = registry().map_or(0, |r| {
        r.cookie = r.cookie.wrapping_add(1).max(1);
        r.cookie
    });
    to_dir(od, oname, ino, IN_MOVED_FROM, cookie);
    to_dir(nd, nname, ino, IN_MOVED_TO, cookie);
    to_self(ino, IN_MOVE_SELF, 0);
}

/// `ino` was used or changed (`IN_OPEN`, `IN_ACCESS`, `IN_MODIFY`,
/// `IN_ATTRIB`, `IN_CLOSE_WRITE`, `IN_CLOSE_NOWRITE`): for the
/// watches on each directory naming it, with that name, then for its own.
pub fn changed(ino: Ino, mask: u32) {
    if !watched() {
        return;
    }
    // The directories watched or marked for this, each once.
    let mut dirs = [0 as Ino; 8];
    let mut n = 0;
    let mut add = |d: Ino| {
        if n < dirs.len() && d != ino && !dirs[..n].contains(&d) && node::is_dir(d) {
            dirs[n] = d;
            n += 1;
        }
    };
    for &p in registry().iter().flat_map(|r| r.all.iter()).filter(|p| !p.is_null()) {
        // SAFETY: as in `send`.
        let i = unsafe { &*p };
        i.watches.iter().filter(|w| w.wd != 0 && w.mask & mask != 0).for_each(|w| add(w.ino));
    }
    super::dnotify::each_dir(&mut add);
    for &d in &dirs[..n] {
        let name = dir::with_entries(d, |es| es.iter().find(|e| e.ino == ino).map(|e| e.name().to_vec()));
        if let Some(name) = name {
            to_dir(d, &name, ino, mask, 0);
        }
    }
    to_self(ino, mask, 0);
}

/// Takes whole events: EINVAL if the first does not fit, EAGAIN if there
/// is none.
fn read(f: &mut File, buf: &mut [u8]) -> Result<usize, Errno> {
    let Some(i) = of(f) else { return Err(EINVAL) };
    if i.len == 0 {
        return Err(EAGAIN);
    }
    let mut n = 0;
    while n < i.len {
        let name = u32::from_ne_bytes(i.queue[n + 12..n + 16].try_into().expect("4 bytes")) as usize;
        if n + HEADER + name > buf.len() {
            break;
        }
        n += HEADER + name;
    }
    if n == 0 {
        return Err(EINVAL);
    }
    buf[..n].copy_from_slice(&i.queue[..n]);
    i.queue.copy_within(n..i.len, 0);
    i.len -= n;
    i.last = if i.last != NONE && i.last >= n { i.last - n } else { NONE };
    if i.len == 0 {
        i.overflowed = false;
    }
    i.head.store(i.len as u64, Ordering::Release);
    Ok(n)
}

/// What `poll` finds on `instance`, which the caller holds open
/// (lock-free: the count alone).
pub fn events(instance: Handle<Inotify>) -> u16 {
    // SAFETY: the caller's description keeps it; only the atomic is read.
    if unsafe { instance.get() }.head.load(Ordering::Acquire) > 0 {
        POLLIN
    } else {
        0
    }
}

fn ioctl(f: &mut File, req: u64, arg: u64) -> Result<usize, Errno> {
    match of(f) {
        Some(i) if req == super::FIONREAD => super::put_readable(arg, i.len as u64),
        _ => Err(ENOTTY),
    }
}

fn stat(_: &File, st: &mut Stat) -> Result<(), Errno> {
    st.mode = 0o600;
    st.blksize = 4096;
    Ok(())
}

fn close(f: &mut File) {
    let Some(i) = of(f) else { return };
    let live = i.watches.iter().filter(|w| w.wd != 0).count();
    if let Some(r) = registry() {
        r.watches -= live;
        if let Some(slot) = r.all.iter_mut().find(|p| **p == f.object::<Inotify>().as_ptr()) {
            *slot = core::ptr::null_mut();
        }
    }
    // SAFETY: made by `create`; its only description is going.
    unsafe { f.object::<Inotify>().free() };
}
