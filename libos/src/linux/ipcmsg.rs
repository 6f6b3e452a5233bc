//! System V message queues (`msgget`, `msgsnd`, `msgrcv`, `msgctl`), as
//! Linux keeps them: typed messages of up to `MSGMAX` bytes in a queue of
//! at most `qbytes` bytes, received by type (the first, the first of a
//! type or of any other with `MSG_EXCEPT`, the lowest type up to a bound),
//! truncated with `MSG_NOERROR`, copied without taking with `MSG_COPY`.
//! The queues and their messages are in the shared arena (`ipc.rs`).

use super::ipc::{self, retry, Table, IPC_INFO, IPC_NOWAIT, IPC_RMID, IPC_SET, IPC_STAT};
use crate::errno::Errno;
use crate::errno::{LxResult, E2BIG, EFAULT, EIDRM, EINVAL, ENOMEM, ENOMSG};
use crate::uaccess;
use alloc::vec::Vec;

/// The message queues' root slot in the arena.
static QUEUES: crate::shared::Root<Table<Queue>> = crate::shared::Root::new(5);

/// Every message queue, made by the first call that needs them.
fn tables() -> Result<&'static mut Table<Queue>, Errno> {
    // SAFETY: all zero is a valid table (no queue in use).
    unsafe { ipc::tables(&QUEUES) }
}

/// Linux's limits: the largest message and a new queue's size in bytes.
const MSGMAX: u64 = 8192;
const MSGMNB: u64 = 16384;
const MSG_NOERROR: u64 = 0o10000;
const MSG_EXCEPT: u64 = 0o20000;
const MSG_COPY: u64 = 0o40000;
const MSG_STAT: u64 = 11;
const MSG_INFO: u64 = 12;
const MSG_STAT_ANY: u64 = 13;

/// A message: its header, then its `len` bytes, in one arena block.
#[repr(C)]
struct Msg {
    next: *mut Msg,
    mtype: i64,
    len: u64,
}

/// A queue (all zero is an empty one).
#[repr(C)]
pub struct Queue {
    first: *mut Msg,
    last: *mut Msg,
    qnum: u64,
    cbytes: u64,
    qbytes: u64,
    stime: i64,
    rtime: i64,
    ctime: i64,
    lspid: u32,
    lrpid: u32,
}

/// Linux's `struct msqid64_ds` (x86-64).
#[repr(C)]
#[derive(Clone, Copy)]
struct Ds {
    perm: ipc::Perm,
    stime: i64,
    rtime: i64,
    ctime: i64,
    cbytes: u64,
    qnum: u64,
    qbytes: u64,
    lspid: u32,
    lrpid: u32,
    unused: [u64; 2],
}

fn block_size(len: u64) -> usize {
    size_of::<Msg>() + len as usize
}

/// The bytes of message `m`.
///
/// # Safety
/// `m` is a live message block.
unsafe fn text<'a>(m: *mut Msg) -> &'a mut [u8] {
    // SAFETY: the block holds `len` bytes after the header (passed on).
    unsafe { core::slice::from_raw_parts_mut((m as *mut u8).add(size_of::<Msg>()), (*m).len as usize) }
}

fn free(m: *mut Msg) {
    // SAFETY: `m` came from `shared::alloc` with this size; nobody refers to it.
    unsafe { crate::shared::free(m as *mut u8, block_size((*m).len), 8) };
}

pub fn msgget(key: i32, flags: u64) -> LxResult {
    ipc::get(
        tables()?,
        key,
        flags,
        |_| Ok(()),
        || Ok(Queue { qbytes: MSGMNB, ctime: ipc::now_s(), ..empty() }),
    )
}

fn empty() -> Queue {
    Queue {
        first: core::ptr::null_mut(),
        last: core::ptr::null_mut(),
        qnum: 0,
        cbytes: 0,
        qbytes: 0,
        stime: 0,
        rtime: 0,
        ctime: 0,
        lspid: 0,
        lrpid: 0,
    }
}

/// The queue `id` names: EINVAL the first time, EIDRM once the caller has
/// waited on it (it was removed meanwhile).
fn queue(id: i64, waited: bool) -> Result<&'static mut Queue, Errno> {
    let t = tables()?;
    let i = ipc::slot_of(t, id).map_err(|e| if waited { EIDRM } else { e })?;
    Ok(&mut t.slots[i].obj)
}

pub fn msgsnd(id: i64, msgp: u64, size: u64, flags: u64) -> LxResult {
    if size > MSGMAX {
        return Err(EINVAL);
    }
    let mtype: i64 = uaccess::get(msgp)?;
    if mtype < 1 {
        return Err(EINVAL);
    }
    let data = uaccess::bytes(msgp + 8, size)?.to_vec();
    let mut waited = false;
    retry(flags & IPC_NOWAIT == 0, None, || {
        let q = queue(id, core::mem::replace(&mut waited, true))?;
        if q.cbytes + size > q.qbytes {
            return Err(crate::errno::EAGAIN);
        }
        let m = crate::shared::alloc(block_size(size), 8) as *mut Msg;
        if m.is_null() {
            return Err(ENOMEM);
        }
        // SAFETY: a fresh block for a header and `size` bytes.
        unsafe {
            m.write(Msg { next: core::ptr::null_mut(), mtype, len: size });
            text(m).copy_from_slice(&data);
        }
        if q.last.is_null() {
            q.first = m;
        } else {
            // SAFETY: the queue's last message is live.
            unsafe { (*q.last).next = m };
        }
        q.last = m;
        (q.qnum, q.cbytes) = (q.qnum + 1, q.cbytes + size);
        (q.stime, q.lspid) = (ipc::now_s(), crate::proc::pid());
        Ok(0)
    })
}

/// The message `msgrcv` takes for `typ` (and its predecessor, null for the
/// first), or with `MSG_COPY` the one at index `typ`.
fn choose(q: &Queue, typ: i64, flags: u64) -> Option<(*mut Msg, *mut Msg)> {
    let (mut prev, mut m) = (core::ptr::null_mut(), q.first);
    let mut best: Option<(*mut Msg, *mut Msg)> = None;
    let mut index = 0;
    while !m.is_null() {
        // SAFETY: the queue's messages are live.
        let t = unsafe { (*m).mtype };
        let take = if flags & MSG_COPY != 0 {
            index == typ
        } else if typ == 0 {
            true
        } else if typ > 0 {
            (t == typ) != (flags & MSG_EXCEPT != 0)
        } else {
            // The lowest type at most |typ|.
            // SAFETY: the best so far is a live message of the queue.
            t <= typ.saturating_neg() && best.is_none_or(|(_, b)| t < unsafe { (*b).mtype })
        };
        if take {
            best = Some((prev, m));
            if typ >= 0 || flags & MSG_COPY != 0 {
                break;
            }
        }
        index += 1;
        // SAFETY: as above.
        (prev, m) = (m, unsafe { (*m).next });
    }
    best
}

pub fn msgrcv(id: i64, msgp: u64, size: u64, typ: i64, flags: u64) -> LxResult {
    if (size as i64) < 0 || flags & MSG_COPY != 0 && (flags & IPC_NOWAIT == 0 || flags & MSG_EXCEPT != 0) {
        return Err(EINVAL);
    }
    uaccess::writable(msgp, 8 + size)?;
    let mut waited = false;
    retry(flags & IPC_NOWAIT == 0, None, || {
        let q = queue(id, core::mem::replace(&mut waited, true))?;
        let Some((prev, m)) = choose(q, typ, flags) else {
            return Err(if flags & IPC_NOWAIT != 0 { ENOMSG } else { crate::errno::EAGAIN });
        };
        // SAFETY: a live message of the queue.
        let (mtype, bytes) = unsafe { ((*m).mtype, text(m)) };
        if bytes.len() as u64 > size && flags & MSG_NOERROR == 0 {
            return Err(E2BIG);
        }
        let n = bytes.len().min(size as usize);
        let mut out = Vec::with_capacity(8 + n);
        out.extend_from_slice(&mtype.to_ne_bytes());
        out.extend_from_slice(&bytes[..n]);
        uaccess::write(msgp, &out).map_err(|_| EFAULT)?;
        if flags & MSG_COPY == 0 {
            // SAFETY: `m` and `prev` are live messages of the queue.
            let next = unsafe { (*m).next };
            if prev.is_null() {
                q.first = next;
            } else {
                // SAFETY: as above.
                unsafe { (*prev).next = next };
            }
            if q.last == m {
                q.last = prev;
            }
            (q.qnum, q.cbytes) = (q.qnum - 1, q.cbytes - bytes.len() as u64);
            (q.rtime, q.lrpid) = (ipc::now_s(), crate::proc::pid());
            free(m);
        }
        Ok(n as i64)
    })
}

fn ds(s: &ipc::Slot<Queue>) -> Ds {
    let q = &s.obj;
    Ds {
        perm: s.perm,
        stime: q.stime,
        rtime: q.rtime,
        ctime: q.ctime,
        cbytes: q.cbytes,
        qnum: q.qnum,
        qbytes: q.qbytes,
        lspid: q.lspid,
        lrpid: q.lrpid,
        unused: [0; 2],
    }
}

pub fn msgctl(id: i64, cmd: u64, buf: u64) -> LxResult {
    let t = tables()?;
    match ipc::command(cmd) {
        IPC_INFO | MSG_INFO => {
            let used = t.slots.iter().filter(|s| s.used);
            let (queues, msgs, bytes) =
                used.fold((0, 0, 0), |(n, m, b), s| (n + 1, m + s.obj.qnum as i32, b + s.obj.cbytes as i32));
            // struct msginfo: msgpool, msgmap, msgmax, msgmnb, msgmni,
            // msgssz, msgtql (ints), msgseg (a short); MSG_INFO reports use.
            let (pool, map, tql) =
                if ipc::command(cmd) == MSG_INFO { (queues, msgs, bytes) } else { (32000, 32000, 32000) };
            let info: [i32; 8] =
                [pool, map, MSGMAX as i32, MSGMNB as i32, ipc::SLOTS as i32, 16, tql, 0xffff];
            uaccess::put(buf, info)?;
            Ok(t.slots.iter().rposition(|s| s.used).map_or(0, |i| i as i64))
        }
        MSG_STAT | MSG_STAT_ANY => {
            let i = usize::try_from(id).ok().filter(|&i| i < ipc::SLOTS && t.slots[i].used).ok_or(EINVAL)?;
            uaccess::put(buf, ds(&t.slots[i]))?;
            Ok(ipc::id_of(t, i))
        }
        IPC_STAT => {
            let i = ipc::slot_of(t, id)?;
            uaccess::put(buf, ds(&t.slots[i])).map(|_| 0)
        }
        IPC_SET => {
            let i = ipc::slot_of(t, id)?;
            let new: Ds = uaccess::get(buf)?;
            let s = &mut t.slots[i];
            ipc::set_perm(&mut s.perm, buf)?;
            (s.obj.qbytes, s.obj.ctime) = (new.qbytes, ipc::now_s());
            Ok(0)
        }
        IPC_RMID => {
            let i = ipc::slot_of(t, id)?;
            let s = &mut t.slots[i];
            let mut m = s.obj.first;
            while !m.is_null() {
                // SAFETY: the queue's messages are live until freed here.
                let next = unsafe { (*m).next };
                free(m);
                m = next;
            }
            s.obj = empty();
            s.used = false;
            Ok(0)
        }
        _ => Err(EINVAL),
    }
}
