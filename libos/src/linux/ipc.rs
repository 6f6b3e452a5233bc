//! System V IPC's common part: keys, ids and permissions, for message
//! queues (`ipcmsg.rs`) and semaphore sets (`ipcsem.rs`). Every object
//! lives in the shared arena, one table per kind anchored in the arena's
//! header (`shared::Root` slots 5 and 6), so every process sees the same ones, as
//! every process on Linux does; objects outlive their creators until
//! `IPC_RMID`. Ids are Linux's: a slot and a sequence number bumped each
//! time the slot is reused (`seq * 32768 + slot`), so a stale id is EINVAL.
//! Every process is root: permission bits are kept and shown, never a
//! reason to refuse. A call that must wait (a full queue, no message, a
//! semaphore operation that cannot proceed) looks again every few
//! milliseconds until it can, a signal comes (EINTR) or the object is
//! removed (EIDRM), as `linux/flock.rs` waits for locks.

use crate::errno::Errno;
use crate::errno::{LxResult, EEXIST, EINTR, EINVAL, ENOENT, ENOSPC};
use crate::uaccess;

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

/// One object of a kind: in use, its permissions and its state.
#[repr(C)]
pub struct Slot<T> {
    pub used: bool,
    pub perm: Perm,
    pub obj: T,
}

/// Every object of one kind.
#[repr(C)]
pub struct Table<T> {
    pub slots: [Slot<T>; SLOTS],
}

/// A kind's tables in the arena, from its root slot, made by the first
/// call that needs them (every kind's are all zero at first: nothing in
/// use).
///
/// # Safety
/// All zero is a valid `T`.
pub unsafe fn tables<T>(root: &crate::shared::Root<T>) -> Result<&'static mut T, Errno> {
    // SAFETY: the caller's promise.
    let p = unsafe { root.get_or_create_zeroed() }.map_err(|_| crate::errno::ENOMEM)?;
    // SAFETY: the tables live as long as the arena; the big lock, held by
    // every caller, makes this the only reference to them.
    Ok(unsafe { &mut *p })
}

/// The id of slot `i` of `t`.
pub fn id_of<T>(t: &Table<T>, i: usize) -> i64 {
    t.slots[i].perm.seq as i64 * SEQ + i as i64
}

/// The slot `id` names, if it is in use and not a stale id.
pub fn slot_of<T>(t: &mut Table<T>, id: i64) -> Result<usize, Errno> {
    let i = usize::try_from(id.rem_euclid(SEQ)).map_err(|_| EINVAL)?;
    let s = t.slots.get(i).ok_or(EINVAL)?;
    if id < 0 || !s.used || s.perm.seq as i64 != id / SEQ {
        return Err(EINVAL);
    }
    Ok(i)
}

/// `*get(key, ..., flags)`: the object with `key` (`check` may refuse it,
/// as a semaphore set with fewer semaphores than asked), or a new one made
/// by `make` when `IPC_CREAT` allows or `key` is `IPC_PRIVATE`.
pub fn get<T>(
    t: &mut Table<T>,
    key: i32,
    flags: u64,
    check: impl FnOnce(&T) -> Result<(), Errno>,
    make: impl FnOnce() -> Result<T, Errno>,
) -> LxResult {
    if key != IPC_PRIVATE {
        if let Some(i) = t.slots.iter().position(|s| s.used && s.perm.key == key) {
            if flags & IPC_CREAT != 0 && flags & IPC_EXCL != 0 {
                return Err(EEXIST);
            }
            check(&t.slots[i].obj)?;
            return Ok(id_of(t, i));
        }
        if flags & IPC_CREAT == 0 {
            return Err(ENOENT);
        }
    }
    let i = t.slots.iter().position(|s| !s.used).ok_or(ENOSPC)?;
    let obj = make()?;
    let s = &mut t.slots[i];
    let seq = s.perm.seq.wrapping_add(1) % (i16::MAX as u16);
    s.perm = Perm { key, mode: flags as u32 & 0o777, seq, ..Perm::default() };
    s.obj = obj;
    s.used = true;
    Ok(id_of(t, i))
}

/// A `*ctl` command without the `IPC_64` flag.
pub fn command(cmd: u64) -> u64 {
    cmd as u32 as u64 & !IPC_64
}

/// `IPC_SET`'s part for the permissions: owner, group and mode bits from
/// the program's `ipc64_perm` at `at`.
pub fn set_perm(p: &mut Perm, at: u64) -> Result<(), Errno> {
    let new: Perm = uaccess::get(at)?;
    p.uid = new.uid;
    p.gid = new.gid;
    p.mode = p.mode & !0o777 | new.mode & 0o777;
    Ok(())
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
