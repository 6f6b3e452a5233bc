//! System V IPC's common part: keys, ids, permissions and each object's
//! frames, for message queues (`ipcmsg.rs`) and semaphore sets
//! (`ipcsem.rs`). Ids are Linux's: a slot and a sequence number bumped
//! each time the slot is reused (`seq * 32768 + slot`), so a stale id is
//! EINVAL. Objects outlive their creators until `IPC_RMID`.
//!
//! Each object's state (its `ipc_perm`, messages or values, waiters'
//! counts, undo records) is in frames of its own (issue 25, as a FIFO's
//! ring: `obj/pipemem.rs`), made a frame range whose rule comes from the
//! `ipc_perm` (`pipemem::rule`) and kept by name (`KEEP`) so that it
//! outlives every mapping until `IPC_RMID` drops it. The key -> id table
//! stays in the shared arena (`shared::Root` slots 5 and 6): each slot
//! names the frames' address and the range's ticket, which every process
//! reads and none trusts: a process maps an object the first time it uses
//! it (`open`: `CLAIM` with the ticket, which the kernel judges by the
//! rule, then checks the frames are that object's) and keeps the mapping
//! until the object is removed or moved (`sweep`) or the process ends; fork
//! and exec pass none (the child maps on its first use). The library then
//! checks the `ipc_perm` in the frames as Linux does (`allowed`).
//!
//! A call that must wait (a full queue, no message, a semaphore operation
//! that cannot proceed) looks again every few milliseconds until it can, a
//! signal comes (EINTR) or the object is removed (EIDRM), as
//! `linux/flock.rs` waits for locks.

use crate::errno::Errno;
use crate::errno::{LxResult, EACCES, EEXIST, EINTR, EINVAL, ENOENT, ENOMEM, ENOSPC, EPERM};
use crate::layout::PAGE;
use crate::obj::pipemem;
use crate::scoped::Scoped;
use crate::uaccess;
use abi::ident::{Ident, EFFECTIVE};
use alloc::vec::Vec;
use user::sys;

pub const IPC_PRIVATE: i32 = 0;
pub const IPC_CREAT: u64 = 0o1000;
pub const IPC_EXCL: u64 = 0o2000;
pub const IPC_NOWAIT: u64 = 0o4000;
pub const IPC_RMID: u64 = 0;
pub const IPC_SET: u64 = 1;
pub const IPC_STAT: u64 = 2;
pub const IPC_INFO: u64 = 3;
/// The flag glibc may add to a `*ctl` command for the 64-bit structures
/// (the only ones on x86-64).
const IPC_64: u64 = 0x100;
/// Linux's `IPCMNI`: an id is `seq * SEQ + slot`.
const SEQ: i64 = 32768;
/// How often a waiting call looks again.
const RECHECK_NS: u64 = 5_000_000;

/// Slots per kind (Linux allows 32000; a library's arena holds fewer).
pub const SLOTS: usize = 64;
/// The most pages an object's frames may take (a range's).
pub const MAX_PAGES: u64 = abi::syscall::frame_range::RANGE_FRAMES as u64;

/// Access an operation asks for, as `ipc_perm`'s bits of one class.
pub const READ: u32 = 4;
pub const WRITE: u32 = 2;

/// Linux's `struct ipc64_perm` (x86-64).
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct Perm {
    pub key: i32,
    pub uid: u32,
    pub gid: u32,
    pub cuid: u32,
    pub cgid: u32,
    pub mode: u32,
    pub seq: u16,
    pad: u16,
    unused: [u64; 2],
}

/// One object's place, in the arena: every process reads it and none
/// trusts it (`open` checks the frames it names).
#[repr(C)]
pub struct Slot {
    /// 1: in use (a byte, not a `bool`: any process may write any value).
    used: u8,
    pub key: i32,
    pub seq: u16,
    pub pages: u64,
    /// The frames' address (`PIPES`' window) and the range's ticket.
    pub at: u64,
    pub ticket: u64,
}

impl Slot {
    pub fn used(&self) -> bool {
        self.used != 0
    }
}

/// Every object of one kind.
#[repr(C)]
pub struct Table {
    pub slots: [Slot; SLOTS],
}

/// What begins every object's frames.
#[repr(C)]
pub struct Head {
    /// Which kind of object follows (`open` refuses frames of another).
    kind: u64,
    id: i64,
    pages: u64,
    /// Not 0: removed, or moved to other frames (`set_perm`): its users
    /// unmap it. (A byte: any of its users may write any value.)
    gone: u8,
    ticket: u64,
    pub perm: Perm,
}

/// An object's frames as this process maps them.
#[derive(Clone, Copy)]
pub struct Obj {
    pub at: u64,
    /// As this process mapped them (not as the frames say).
    pub pages: u64,
}

impl Obj {
    /// The object's header.
    pub fn head(self) -> &'static mut Head {
        // SAFETY: `open` or `get` mapped these frames here and checked they
        // begin with a `Head`; the big lock, held by every caller, makes
        // this the only reference to them in this process.
        unsafe { &mut *(self.at as *mut Head) }
    }

    /// The object's frames as a `T` (which must fit in `pages`).
    pub fn body<T>(self) -> &'static mut T {
        assert!(size_of::<T>() as u64 <= self.pages * PAGE);
        // SAFETY: as in `head`; `T` begins with the `Head` and fits.
        unsafe { &mut *(self.at as *mut T) }
    }
}

/// The objects this process maps (fork copies the list, not the mappings:
/// `sweep` drops entries not mapped here).
static MAPPED: Scoped<Vec<Obj>> = Scoped::new("System V objects mapped here", Vec::new());

/// A kind's table in the arena, from its root slot, made by the first call
/// that needs it (all zero: nothing in use).
pub fn table(root: &crate::shared::Root<Table>) -> Result<&'static mut Table, Errno> {
    // SAFETY: all zero is a valid table.
    let p = unsafe { root.get_or_create_zeroed() }.map_err(|_| ENOMEM)?;
    // SAFETY: the table lives as long as the arena; the big lock, held by
    // every caller, makes this the only reference to it here.
    Ok(unsafe { &mut *p })
}

/// The id of slot `i` of `t`.
pub fn id_of(t: &Table, i: usize) -> i64 {
    t.slots[i].seq as i64 * SEQ + i as i64
}

/// The slot `id` names, if it is in use and not a stale id.
pub fn slot_of(t: &Table, id: i64) -> Result<usize, Errno> {
    let i = usize::try_from(id.rem_euclid(SEQ)).map_err(|_| EINVAL)?;
    let s = t.slots.get(i).ok_or(EINVAL)?;
    if id < 0 || !s.used() || s.seq as i64 != id / SEQ {
        return Err(EINVAL);
    }
    Ok(i)
}

/// Unmaps the objects this process maps that were removed or moved, and
/// forgets those it does not map (a forked child's copy of the list).
fn sweep() {
    MAPPED.with(|m| {
        m.retain(|o| {
            if !pipemem::mapped(o.at) {
                return false;
            }
            if o.head().gone != 0 {
                pipemem::release(o.at, o.pages);
                return false;
            }
            true
        })
    });
}

/// Object `id` (slot `i` of `t`) of kind `kind`, mapped here if it was not
/// (with at least `need` pages): EACCES when its range's rule refuses this
/// process, EINVAL when the slot names no such object (it changed in the
/// arena) or the kernel had no room to map it.
pub fn open(t: &Table, id: i64, kind: u64, need: u64) -> Result<Obj, Errno> {
    sweep();
    let i = slot_of(t, id)?;
    let s = &t.slots[i];
    let (at, pages, ticket) = (s.at, s.pages, s.ticket);
    if !(need..=MAX_PAGES).contains(&pages) || !pipemem::guarded(at) || pipemem::base(at) != at {
        return Err(EINVAL);
    }
    // Mapped here already (by this process, or by a vfork child that
    // shared its memory), or now with the ticket.
    let claimed = pipemem::claim_named(at, ticket, pages)?.ok_or(EINVAL)?;
    let o = Obj { at, pages };
    let whole = (0..pages).all(|p| crate::selfmap::pte(at + p * PAGE).is_some());
    let fits = whole && {
        let h = o.head();
        h.kind == kind && h.id == id && h.pages == pages && h.gone == 0
    };
    if !fits {
        // Not that object: another's, or something else of this process's
        // (a pipe) where the slot points.
        if claimed {
            pipemem::release(at, pages);
        }
        return Err(EINVAL);
    }
    MAPPED.with(|m| {
        if !m.iter().any(|x| x.at == at) {
            m.push(o)
        }
    });
    Ok(o)
}

/// Whether `me` is in group `gid`.
fn in_group(me: &Ident, gid: u32) -> bool {
    me.gid[EFFECTIVE] == gid || me.groups().contains(&gid)
}

/// Linux's `ipcperms`: may this process have `want` (`READ`, `WRITE`
/// bits, or `*get`'s mode bits) of the object `p` describes? The owner's
/// or creator's bits, else the group's or the creator's group's, else
/// everyone's; root may do anything.
pub fn allowed(p: &Perm, want: u32) -> Result<(), Errno> {
    let want = (want >> 6 | want >> 3 | want) & 0o7;
    let me = crate::fs::perm::me();
    let euid = me.uid[EFFECTIVE];
    let granted = if euid == p.uid || euid == p.cuid {
        p.mode >> 6
    } else if in_group(&me, p.gid) || in_group(&me, p.cgid) {
        p.mode >> 3
    } else {
        p.mode
    };
    if euid != 0 && want & !granted & 0o7 != 0 {
        return Err(EACCES);
    }
    Ok(())
}

/// `IPC_SET`'s and `IPC_RMID`'s check: the owner, the creator or root.
pub fn owner(p: &Perm) -> Result<(), Errno> {
    let euid = crate::fs::perm::me().uid[EFFECTIVE];
    if euid != 0 && euid != p.uid && euid != p.cuid {
        return Err(EPERM);
    }
    Ok(())
}

/// New frames for object `id` of `kind` (`pages` of them) with `perm`,
/// a range under the rule `perm` gives, kept by name: the object, mapped
/// here, its body zero (`init` fills it in).
fn make(id: i64, kind: u64, pages: u64, perm: Perm) -> Result<Obj, Errno> {
    let at = pipemem::alloc(pages).ok_or(ENOMEM)?;
    let (owner, mode) = pipemem::rule(perm.uid, perm.gid, perm.mode, 0o6, &crate::fs::perm::me());
    let ticket = match sys::range_make(at, pages, owner, mode) {
        Ok(t) => t,
        Err(_) => {
            pipemem::release(at, pages);
            return Err(ENOSPC);
        }
    };
    if sys::range_keep(ticket, at).is_err() {
        let _ = sys::range_drop(ticket, at);
        pipemem::release(at, pages);
        return Err(ENOMEM);
    }
    let o = Obj { at, pages };
    *o.head() = Head { kind, id, pages, gone: 0, ticket, perm };
    MAPPED.with(|m| m.push(o));
    Ok(o)
}

/// Ends object `o` (`IPC_RMID`, or the old frames of a moved one): every
/// process that maps it lets it go (`sweep`); the frames are freed with
/// the last mapping.
fn end(o: Obj) {
    let h = o.head();
    h.gone = 1;
    let _ = sys::range_drop(h.ticket, o.at);
    pipemem::release(o.at, o.pages);
    MAPPED.with(|m| m.retain(|x| x.at != o.at));
}

/// `*get(key, ..., flags)` of kind `kind`: the object with `key` (after
/// `allowed` for the mode bits asked and `check` of its frames, as a
/// semaphore set with fewer semaphores than asked), or a new one of
/// `pages` pages, its body filled in by `init`, when `IPC_CREAT` allows or
/// `key` is `IPC_PRIVATE`.
pub fn get(
    t: &mut Table,
    key: i32,
    flags: u64,
    (kind, pages): (u64, u64),
    check: impl FnOnce(Obj) -> Result<(), Errno>,
    init: impl FnOnce(Obj),
) -> LxResult {
    let asked = flags as u32 & 0o777;
    if key != IPC_PRIVATE {
        if let Some(i) = t.slots.iter().position(|s| s.used() && s.key == key) {
            if flags & IPC_CREAT != 0 && flags & IPC_EXCL != 0 {
                return Err(EEXIST);
            }
            let id = id_of(t, i);
            let o = match open(t, id, kind, 1) {
                Ok(o) => o,
                // Linux asks nothing of a caller that asks no access.
                Err(EACCES) if asked == 0 => return Ok(id),
                Err(e) => return Err(e),
            };
            allowed(&o.head().perm, asked)?;
            check(o)?;
            return Ok(id);
        }
        if flags & IPC_CREAT == 0 {
            return Err(ENOENT);
        }
    }
    sweep();
    let i = t.slots.iter().position(|s| !s.used()).ok_or(ENOSPC)?;
    let seq = t.slots[i].seq.wrapping_add(1) % (i16::MAX as u16);
    let id = seq as i64 * SEQ + i as i64;
    let me = crate::fs::perm::me();
    let (uid, gid) = (me.uid[EFFECTIVE], me.gid[EFFECTIVE]);
    let perm = Perm { key, uid, gid, cuid: uid, cgid: gid, mode: asked, seq, ..Perm::default() };
    let o = make(id, kind, pages, perm)?;
    init(o);
    t.slots[i] = Slot { used: 1, key, seq, pages, at: o.at, ticket: o.head().ticket };
    Ok(id)
}

/// `IPC_SET`'s part for the permissions of object `o` (slot `i` of `t`):
/// owner, group and mode bits from the program's `ipc64_perm` at `at`,
/// for the owner, the creator or root. When the range's rule they give
/// differs, the object moves to fresh frames under the new rule and the
/// old ones end (rather than `RULE` on the old range, which would leave
/// the frames with whoever mapped them): a process the new bits refuse
/// keeps only emptied frames. Returns the object as it is now.
pub fn set_perm(t: &mut Table, i: usize, o: Obj, at: u64) -> Result<Obj, Errno> {
    let new: Perm = uaccess::get(at)?;
    let old = o.head().perm;
    owner(&old)?;
    let perm = Perm { uid: new.uid, gid: new.gid, mode: old.mode & !0o777 | new.mode & 0o777, ..old };
    let me = crate::fs::perm::me();
    let rule = |p: &Perm| pipemem::rule(p.uid, p.gid, p.mode, 0o6, &me);
    let o = if rule(&perm) == rule(&old) {
        o
    } else {
        let h = o.head();
        let moved = make(h.id, h.kind, o.pages, perm)?;
        let len = (o.pages * PAGE) as usize;
        let skip = size_of::<Head>();
        // SAFETY: both objects' frames, mapped here, `len` bytes each; the
        // new header stays as `make` wrote it.
        unsafe {
            core::ptr::copy_nonoverlapping(
                (o.at as *const u8).add(skip),
                (moved.at as *mut u8).add(skip),
                len - skip,
            );
            core::ptr::write_bytes((o.at as *mut u8).add(skip), 0, len - skip);
        }
        t.slots[i].at = moved.at;
        t.slots[i].ticket = moved.head().ticket;
        end(o);
        moved
    };
    o.head().perm = perm;
    Ok(o)
}

/// `IPC_RMID` of object `o` (slot `i` of `t`), for the owner, the creator
/// or root.
pub fn remove(t: &mut Table, i: usize, o: Obj) -> Result<(), Errno> {
    owner(&o.head().perm)?;
    t.slots[i].used = 0;
    end(o);
    Ok(())
}

/// Every object of `t` of `kind` this process may map, for the `*_INFO`
/// totals (others' are left out).
pub fn each(t: &Table, kind: u64) -> impl Iterator<Item = Obj> + '_ {
    (0..SLOTS).filter(|&i| t.slots[i].used()).filter_map(move |i| open(t, id_of(t, i), kind, 1).ok())
}

/// A `*ctl` command without the `IPC_64` flag.
pub fn command(cmd: u64) -> u64 {
    cmd as u32 as u64 & !IPC_64
}

/// Seconds since 1970, as the `*_time` fields count.
pub fn now_s() -> i64 {
    (crate::time::wall_ns() / 1_000_000_000) as i64
}

/// Runs `attempt` until it stops answering EAGAIN: at once when `wait` is
/// false, else every few milliseconds until `deadline` (EAGAIN then) or a
/// signal (EINTR). `attempt` answers EIDRM itself when its object went.
pub fn retry(wait: bool, deadline: Option<u64>, mut attempt: impl FnMut() -> LxResult) -> LxResult {
    loop {
        match attempt() {
            Err(crate::errno::EAGAIN) if wait => {}
            r => return r,
        }
        let now = crate::time::now_ns();
        if deadline.is_some_and(|d| now >= d) {
            return Err(crate::errno::EAGAIN);
        }
        if crate::proc::deliver::pending() {
            return Err(EINTR);
        }
        let next = now + RECHECK_NS;
        crate::sleep::pause(Some(deadline.map_or(next, |d| d.min(next))));
    }
}
