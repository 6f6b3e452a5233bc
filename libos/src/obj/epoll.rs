//! epoll sets: an open file whose object is a list of interests, each a
//! (descriptor number, open file) with the events asked for. Readiness is
//! not pushed by the watched files (they have no callbacks to call): a
//! wait looks at every interest, as `poll` looks at its entries, and
//! sleeps on the same wakeup predicates (`crate::wait`). Edge-triggered
//! interests report only what is new since they last reported: a change
//! of the object's stamp (bytes written into a pipe, a write to an
//! eventfd, a timer's expiry) or an event that was not there at the last
//! look.
//!
//! Interests live in the shared arena, as the set does (after fork both
//! processes share it, as on Linux). Each is linked into its set and into
//! its file's `watch` list, so closing the last descriptor of a watched
//! file removes it from every set, as Linux does.
//!
//! A pipe end's description lives in the pipe's own frames, mapped only
//! where needed (`pipemem`): a process holding a set keeps the frames of
//! every pipe the set watches mapped (`super::pipes_of`, fork and
//! `fd::close` use it). A pipe added after the set was shared is not in
//! the other sharers' memory: there the interest is invisible (`visible`),
//! reports nothing, and if such a process closes the set last the interest
//! is left on the pipe's `watch` list without a set, for the pipe's last
//! close to free (`drop_interest`).

use super::{no_seek, File, Kind, Ops};
use super::{pipemem, Look, POLLERR, POLLHUP};
use crate::errno::Errno;
use crate::errno::{EEXIST, EINVAL, ELOOP, ENOENT, EPERM};
use crate::fs::Stat;
use crate::obj::Handle;

pub const EPOLLIN: u32 = 0x1;
pub const EPOLLET: u32 = 1 << 31;
pub const EPOLLONESHOT: u32 = 1 << 30;
pub const EPOLLWAKEUP: u32 = 1 << 29;
pub const EPOLLEXCLUSIVE: u32 = 1 << 28;

pub const CTL_ADD: u64 = 1;
pub const CTL_DEL: u64 = 2;
pub const CTL_MOD: u64 = 3;

/// Sets nested deeper than this are refused (Linux's `EP_MAX_NESTS`).
pub const MAX_NESTS: u32 = 4;

/// One watched (descriptor, file) of a set.
pub struct Interest {
    set: *mut Epoll,
    file: Handle<File>,
    fd: i32,
    /// Events asked for, with the `EPOLLET`/`EPOLLONESHOT` flags.
    events: u32,
    data: u64,
    /// Edge-triggered: the events ready at the last look, and the object's
    /// stamp when this interest last reported (`u64::MAX`: never).
    seen: u16,
    stamp: u64,
    /// A one-shot interest has reported: silent until `EPOLL_CTL_MOD`.
    disarmed: bool,
    next_in_set: *mut Interest,
    next_on_file: *mut Interest,
}

/// A set's object (`Object::Epoll`).
pub struct Epoll {
    /// The set's own file (for walking up through sets that watch it).
    file: Option<Handle<File>>,
    first: *mut Interest,
    /// Where the next report starts, so that a wait returning fewer events
    /// than are ready does not always favour the same interests.
    rotate: u32,
}

pub static OPS: Ops = Ops { read, write, seek: no_seek, stat, ioctl: super::no_ioctl, close };

/// An epoll set is neither read nor written (Linux: EINVAL).
fn read(_: &mut File, _: &mut [u8]) -> Result<usize, Errno> {
    Err(crate::errno::EINVAL)
}

fn write(_: &mut File, _: &[u8]) -> Result<usize, Errno> {
    Err(crate::errno::EINVAL)
}

/// A new, empty set.
pub fn create(flags: u32) -> Result<Handle<File>, Errno> {
    let empty = Epoll { file: None, first: core::ptr::null_mut(), rotate: 0 };
    let f = super::new_with(Kind::Epoll, flags | super::flags::RDWR, empty)?;
    // SAFETY: just created; its object is the set.
    unsafe { (*set_of(f)).file = Some(f) };
    Ok(f)
}

/// The set behind an epoll file.
fn set_of(f: Handle<File>) -> *mut Epoll {
    f.obj().handle::<Epoll>().as_ptr()
}

/// The interests of set `e`, in order.
fn interests(e: *mut Epoll) -> impl Iterator<Item = *mut Interest> {
    // SAFETY: the set is live (its file is open) and the lock is held.
    let mut at = unsafe { (*e).first };
    core::iter::from_fn(move || {
        let cur = (!at.is_null()).then_some(at)?;
        // SAFETY: a linked interest is live.
        at = unsafe { (*cur).next_in_set };
        Some(cur)
    })
}

/// The interests watching file `f` (its `watch` list).
fn watchers(f: Handle<File>) -> impl Iterator<Item = *mut Interest> {
    // SAFETY: the file is live and the lock is held.
    let mut at = unsafe { (*f.as_ptr()).watch };
    core::iter::from_fn(move || {
        let cur = (!at.is_null()).then_some(at)?;
        // SAFETY: a linked interest is live.
        at = unsafe { (*cur).next_on_file };
        Some(cur)
    })
}

/// Unlinks `i` from the singly linked list starting at `*head`, whose
/// links `next` selects.
fn unlink(head: *mut *mut Interest, i: *mut Interest, next: fn(*mut Interest) -> *mut *mut Interest) {
    let mut at = head;
    // SAFETY: `head` and every link reached are live list words (lock held).
    unsafe {
        while !(*at).is_null() {
            if *at == i {
                *at = *next(i);
                return;
            }
            at = next(*at);
        }
    }
}

fn in_set(i: *mut Interest) -> *mut *mut Interest {
    // SAFETY: `i` is a live interest.
    unsafe { &raw mut (*i).next_in_set }
}

fn on_file(i: *mut Interest) -> *mut *mut Interest {
    // SAFETY: `i` is a live interest.
    unsafe { &raw mut (*i).next_on_file }
}

/// Whether this process can read file `f` (`super::usable`).
fn visible(f: Handle<File>) -> bool {
    super::usable(f)
}

/// Whether `f` is a set (sets live in description pages: a file elsewhere,
/// or in a page not mapped here, is not read to tell).
fn is_set(f: Handle<File>) -> bool {
    pipemem::in_descs(f.addr()) && pipemem::mapped(f.addr()) && f.kind() == Kind::Epoll
}

/// Removes interest `i` from its set and its file, and frees it; one on a
/// pipe this process does not map stays on the pipe's list, without a
/// set, until the pipe's last close (`forget`) frees it.
fn drop_interest(i: *mut Interest) {
    // SAFETY: `i` is live; its set (if any) and file are too (each removes
    // its interests before it goes); the file's list only where mapped.
    unsafe {
        if !(*i).set.is_null() {
            unlink(&raw mut (*(*i).set).first, i, in_set);
        }
        if visible((*i).file) {
            unlink(&raw mut (*(*i).file.as_ptr()).watch, i, on_file);
            super::free_object(i);
        } else {
            (*i).set = core::ptr::null_mut();
        }
    }
}

/// Whether `found` holds for the base of a pipe set `f` watches, directly
/// or through sets inside it (addresses only: their frames are not read);
/// stops at the first that does.
pub fn any_watched_pipe(f: Handle<File>, found: &mut impl FnMut(u64) -> bool) -> bool {
    // SAFETY: a live interest of a live set.
    interests(set_of(f)).any(|i| super::any_pipe_of(unsafe { (*i).file }, found))
}

/// The last descriptor of `f` has closed: it leaves every set watching it.
pub fn forget(f: Handle<File>) {
    // SAFETY: `f` is live; `watch` is read anew each time, as
    // `drop_interest` changes it.
    while let Some(i) = Some(unsafe { (*f.as_ptr()).watch }).filter(|i| !i.is_null()) {
        drop_interest(i);
    }
}

fn close(f: &mut File) {
    let e = set_of(f.handle());
    // SAFETY: the set is live until freed below; the lock is held.
    while let Some(i) = Some(unsafe { (*e).first }).filter(|i| !i.is_null()) {
        drop_interest(i);
    }
    // SAFETY: made by `create`; its file is going.
    unsafe { f.object::<Epoll>().free() };
}

fn stat(_: &File, st: &mut Stat) -> Result<(), Errno> {
    // Linux's anonymous inode: mode 0600, no type bits.
    st.mode = 0o600;
    st.blksize = 4096;
    Ok(())
}

/// How deep the sets below `f` nest (0: `f` is not a set).
fn depth_below(f: Handle<File>) -> u32 {
    if !is_set(f) {
        return 0;
    }
    // SAFETY: interests of a live set name live files.
    1 + interests(set_of(f)).map(|i| depth_below(unsafe { (*i).file })).max().unwrap_or(0)
}

/// How many sets `f` is nested in, at most, counting up.
fn depth_above(f: Handle<File>) -> u32 {
    // SAFETY: a watcher's set (if it has one) and that set's file are live.
    let set_file = |i: *mut Interest| unsafe { (*i).set.as_ref().and_then(|e| e.file) };
    watchers(f).filter_map(set_file).map(|s| 1 + depth_above(s)).max().unwrap_or(0)
}

/// Whether `target` is `f` or reachable from it through nested sets.
fn reaches(f: Handle<File>, target: Handle<File>) -> bool {
    f == target
        || is_set(f)
            // SAFETY: interests of a live set name live files.
            && interests(set_of(f)).any(|i| reaches(unsafe { (*i).file }, target))
}

/// The one interest of set `e` for descriptor `fd` open on `f`.
fn find(e: *mut Epoll, fd: i32, f: Handle<File>) -> Option<*mut Interest> {
    // SAFETY: interests of a live set are live.
    interests(e).find(|&i| unsafe { (*i).fd == fd && (*i).file == f })
}

/// `epoll_ctl` on the set open as `ep`: `op` for descriptor `fd`, open as
/// `target`, with (events, data) for ADD and MOD. The caller has checked
/// that `fd` is not the set's own descriptor.
pub fn ctl(
    ep: Handle<File>,
    op: u64,
    fd: i32,
    target: Handle<File>,
    event: (u32, u64),
) -> Result<i64, Errno> {
    let (ep_kind, kind) = (ep.kind(), target.kind());
    if ep_kind != Kind::Epoll {
        return Err(EINVAL);
    }
    if matches!(kind, Kind::Regular | Kind::Dir) {
        return Err(EPERM);
    }
    let e = set_of(ep);
    let (events, data) = event;
    let exclusive = events & EPOLLEXCLUSIVE != 0;
    let existing = find(e, fd, target);
    match op {
        CTL_ADD => {
            if existing.is_some() {
                return Err(EEXIST);
            }
            if exclusive && (events & EPOLLONESHOT != 0 || kind == Kind::Epoll) {
                return Err(EINVAL);
            }
            if kind == Kind::Epoll
                && (reaches(target, ep) || depth_above(ep) + 1 + depth_below(target) > MAX_NESTS + 1)
            {
                return Err(ELOOP);
            }
            let i = super::alloc_object(Interest {
                set: e,
                file: target,
                fd,
                events,
                data,
                seen: 0,
                stamp: u64::MAX,
                disarmed: false,
                next_in_set: core::ptr::null_mut(),
                // SAFETY: the target is live (the caller holds it open).
                next_on_file: unsafe { (*target.as_ptr()).watch },
            })?;
            // SAFETY: the set and file are live, the lock held.
            unsafe {
                (*target.as_ptr()).watch = i;
                // At the end, so reports come in the order of adding.
                let mut at = &raw mut (*e).first;
                while !(*at).is_null() {
                    at = &raw mut (**at).next_in_set;
                }
                *at = i;
            }
            Ok(0)
        }
        CTL_MOD => {
            let i = existing.ok_or(ENOENT)?;
            // SAFETY: a live interest of this set.
            let i = unsafe { &mut *i };
            if exclusive || i.events & EPOLLEXCLUSIVE != 0 {
                return Err(EINVAL);
            }
            // Re-armed: what is ready now is reported again.
            *i = Interest { events, data, seen: 0, stamp: u64::MAX, disarmed: false, ..*i };
            Ok(0)
        }
        CTL_DEL => {
            drop_interest(existing.ok_or(ENOENT)?);
            Ok(0)
        }
        _ => Err(EINVAL),
    }
}

/// What interest `i` would report now (0: nothing), or None when `look`
/// cannot tell without the lock.
fn report_of(i: &Interest, look: Look) -> Option<(u16, u64)> {
    if i.disarmed || !visible(i.file) {
        return Some((0, 0));
    }
    let ev = super::file_events(i.file, look)? & (i.events as u16 | POLLERR | POLLHUP);
    if i.events & EPOLLET == 0 || ev == 0 {
        return Some((ev, 0));
    }
    // Edge-triggered: only what is new.
    let stamp = stamp(i.file);
    let new = ev & !i.seen != 0 || stamp != i.stamp;
    Some((if new { ev } else { 0 }, stamp))
}

/// Whether a wait on set `f` would report something now (`poll` of a set,
/// a set inside a set): `POLLIN` if so.
pub fn ready(f: Handle<File>) -> u16 {
    // SAFETY: interests of a live set are live.
    let any = interests(set_of(f)).any(|i| report_of(unsafe { &*i }, Look::Locked).is_some_and(|r| r.0 != 0));
    if any {
        EPOLLIN as u16
    } else {
        0
    }
}

/// Puts what the interests of set `f` report into `out` (events, data),
/// starting after where the last report stopped; returns how many, or
/// None when `look` cannot tell without the lock. Edge-triggered
/// interests remember what they saw, one-shot ones that reported go
/// silent.
pub fn collect(f: Handle<File>, look: Look, out: &mut [(u32, u64)]) -> Option<usize> {
    if look == Look::LockFree {
        return None;
    }
    let e = set_of(f);
    let len = interests(e).count();
    // SAFETY: the set is live and the lock held.
    let start = unsafe { (*e).rotate } as usize % len.max(1);
    let mut n = 0;
    for (k, i) in interests(e).skip(start).chain(interests(e).take(start)).enumerate() {
        if n == out.len() {
            // SAFETY: as above.
            unsafe { (*e).rotate = ((start + k) % len) as u32 };
            break;
        }
        // SAFETY: a live interest of this set; the lock is held.
        let i = unsafe { &mut *i };
        let (ev, stamp) = report_of(i, look)?;
        if i.events & EPOLLET != 0 && visible(i.file) {
            i.seen = super::file_events(i.file, look)?;
        }
        if ev == 0 {
            continue;
        }
        out[n] = (ev as u32, i.data);
        n += 1;
        i.stamp = stamp;
        i.disarmed = i.events & EPOLLONESHOT != 0;
    }
    Some(n)
}

/// Calls `each` with every file a wait for `events` on `f` depends on:
/// `f` itself, or for a set, what its armed interests watch (sets inside
/// it opened up in turn). Returns false as soon as `each` does.
pub fn expand(f: Handle<File>, events: u16, each: &mut dyn FnMut(Handle<File>, u16) -> bool) -> bool {
    if !is_set(f) {
        return visible(f) && each(f, events);
    }
    // SAFETY: interests of a live set are live.
    interests(set_of(f)).all(|i| {
        // SAFETY: a live interest of a live set.
        let i = unsafe { &*i };
        i.disarmed || expand(i.file, i.events as u16, each)
    })
}

/// A number that changes whenever `f` gets something new to report to an
/// edge-triggered interest (0 for objects that have none: there, only an
/// event appearing counts).
fn stamp(f: Handle<File>) -> u64 {
    // SAFETY: `f` is live; its kind and objects never change once made.
    let f = unsafe { f.get() };
    match f.kind {
        Kind::PipeRead | Kind::PipeWrite => super::pipe::stamp(f),
        Kind::EventFd => super::eventfd::stamp(f),
        Kind::TimerFd => super::timerfd::stamp(f),
        Kind::Socket => super::unix::stamp(f),
        Kind::Inet => crate::net::stack::stamp(),
        Kind::Netlink => super::netlink::stamp(f),
        Kind::PtyMaster | Kind::PtySlave => super::pty::stamp(f),
        _ => 0,
    }
}
