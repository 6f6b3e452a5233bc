//! System V message queues (`msgget`, `msgsnd`, `msgrcv`, `msgctl`), as
//! Linux keeps them: typed messages of up to `MSGMAX` bytes in a queue of
//! at most `qbytes` bytes, received by type (the first, the first of a
//! type or of any other with `MSG_EXCEPT`, the lowest type up to a bound),
//! truncated with `MSG_NOERROR`, copied without taking with `MSG_COPY`.
//! Each queue, its messages and its `ipc_perm` are in frames of its own
//! (`ipc.rs`): the messages one after another, oldest first, in the
//! frames' `store`.

use super::ipc::{self, retry, Obj, Table, IPC_INFO, IPC_NOWAIT, IPC_RMID, IPC_SET, IPC_STAT, READ, WRITE};
use crate::errno::Errno;
use crate::errno::{LxResult, E2BIG, EFAULT, EIDRM, EINVAL, ENOMSG};
use crate::layout::PAGE;
use crate::uaccess;
use alloc::vec::Vec;

/// The message queues' root slot in the arena.
static QUEUES: crate::shared::Root<Table> = crate::shared::Root::new(5);

/// The message queues' places, in the arena (where any process finds them).
pub fn table() -> Result<&'static mut Table, Errno> {
    ipc::table(&QUEUES)
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

/// A queue's frames: as many as a range takes.
const PAGES: u64 = ipc::MAX_PAGES;
/// What a queue's frames begin with (`ipc::Head::kind`).
const KIND: u64 = u64::from_le_bytes(*b"sysv msq");

/// A queue's state (all zero but `qbytes` and `ctime`: an empty one).
#[repr(C)]
struct State {
    head: ipc::Head,
    qnum: u64,
    cbytes: u64,
    qbytes: u64,
    stime: i64,
    rtime: i64,
    ctime: i64,
    lspid: u32,
    lrpid: u32,
    /// Bytes of `store` the messages take.
    used: u64,
}

/// Bytes for messages: each its type, its length and its bytes, padded
/// to 8 (`MSG`). A queue whose store is full takes no more messages
/// until some are received, however few bytes it counts.
const STORE: usize = (PAGES * PAGE) as usize - size_of::<State>();
const MSG: usize = 16;

/// A queue's frames.
#[repr(C)]
struct Queue {
    s: State,
    store: [u8; STORE],
}

const _: () = assert!(size_of::<Queue>() as u64 == PAGES * PAGE);

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

/// The store's bytes a message of `len` bytes takes.
fn size(len: u64) -> usize {
    MSG + (len as usize).next_multiple_of(8)
}

/// One message in a queue's store: where it starts, its type, its length.
#[derive(Clone, Copy)]
struct Msg {
    at: usize,
    mtype: i64,
    len: u64,
}

/// The messages of `q`, oldest first. Any holder of the queue can write
/// its frames: a record that does not fit ends the list.
fn messages(q: &Queue) -> impl Iterator<Item = Msg> + '_ {
    let used = (q.s.used as usize).min(STORE);
    let mut at = 0;
    core::iter::from_fn(move || {
        let word = |i: usize| u64::from_ne_bytes(q.store[at + i..at + i + 8].try_into().unwrap_or([0; 8]));
        if at + MSG > used {
            return None;
        }
        let m = Msg { at, mtype: word(0) as i64, len: word(8) };
        if m.len > MSGMAX || at + size(m.len) > used {
            return None;
        }
        at += size(m.len);
        Some(m)
    })
}

/// The bytes of message `m` of `q`.
fn text(q: &Queue, m: Msg) -> &[u8] {
    &q.store[m.at + MSG..m.at + MSG + m.len as usize]
}

/// Queue `id`, mapped here: EINVAL if there is none, EIDRM instead once
/// the caller has waited on it (it was removed meanwhile).
fn queue(id: i64, waited: bool) -> Result<(Obj, &'static mut Queue), Errno> {
    let o =
        ipc::open(table()?, id, KIND, PAGES).map_err(|e| if waited && e == EINVAL { EIDRM } else { e })?;
    Ok((o, o.body()))
}

pub fn msgget(key: i32, flags: u64) -> LxResult {
    ipc::get(
        table()?,
        key,
        flags,
        (KIND, PAGES),
        |_| Ok(()),
        |o| {
            let q: &mut Queue = o.body();
            (q.s.qbytes, q.s.ctime) = (MSGMNB, ipc::now_s());
        },
    )
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
        let (o, q) = queue(id, core::mem::replace(&mut waited, true))?;
        ipc::allowed(&o.head().perm, WRITE)?;
        let (at, s) = ((q.s.used as usize).min(STORE), &mut q.s);
        if s.cbytes + size > s.qbytes || s.qnum + 1 > s.qbytes || at + self::size(size) > STORE {
            return Err(crate::errno::EAGAIN);
        }
        q.store[at..at + 8].copy_from_slice(&mtype.to_ne_bytes());
        q.store[at + 8..at + MSG].copy_from_slice(&size.to_ne_bytes());
        q.store[at + MSG..at + MSG + data.len()].copy_from_slice(&data);
        let s = &mut q.s;
        s.used = (at + self::size(size)) as u64;
        (s.qnum, s.cbytes) = (s.qnum + 1, s.cbytes + size);
        (s.stime, s.lspid) = (ipc::now_s(), crate::proc::pid());
        Ok(0)
    })
}

/// The message `msgrcv` takes for `typ`, or with `MSG_COPY` the one at
/// index `typ`.
fn choose(q: &Queue, typ: i64, flags: u64) -> Option<Msg> {
    if flags & MSG_COPY != 0 {
        return messages(q).nth(usize::try_from(typ).ok()?);
    }
    if typ >= 0 {
        return messages(q).find(|m| typ == 0 || (m.mtype == typ) != (flags & MSG_EXCEPT != 0));
    }
    // The lowest type at most |typ|, the first of it.
    messages(q)
        .filter(|m| m.mtype <= typ.saturating_neg())
        .reduce(|b, m| if m.mtype < b.mtype { m } else { b })
}

pub fn msgrcv(id: i64, msgp: u64, size: u64, typ: i64, flags: u64) -> LxResult {
    if (size as i64) < 0 || flags & MSG_COPY != 0 && (flags & IPC_NOWAIT == 0 || flags & MSG_EXCEPT != 0) {
        return Err(EINVAL);
    }
    uaccess::writable(msgp, 8 + size)?;
    let mut waited = false;
    retry(flags & IPC_NOWAIT == 0, None, || {
        let (o, q) = queue(id, core::mem::replace(&mut waited, true))?;
        ipc::allowed(&o.head().perm, READ)?;
        let Some(m) = choose(q, typ, flags) else {
            return Err(if flags & IPC_NOWAIT != 0 { ENOMSG } else { crate::errno::EAGAIN });
        };
        if m.len > size && flags & MSG_NOERROR == 0 {
            return Err(E2BIG);
        }
        let n = m.len.min(size) as usize;
        let mut out = Vec::with_capacity(8 + n);
        out.extend_from_slice(&m.mtype.to_ne_bytes());
        out.extend_from_slice(&text(q, m)[..n]);
        uaccess::write(msgp, &out).map_err(|_| EFAULT)?;
        if flags & MSG_COPY == 0 {
            let (used, end) = ((q.s.used as usize).min(STORE), m.at + self::size(m.len));
            q.store.copy_within(end..used, m.at);
            let s = &mut q.s;
            s.used = (used - (end - m.at)) as u64;
            (s.qnum, s.cbytes) = (s.qnum.saturating_sub(1), s.cbytes.saturating_sub(m.len));
            (s.rtime, s.lrpid) = (ipc::now_s(), crate::proc::pid());
        }
        Ok(n as i64)
    })
}

fn ds(o: Obj) -> Ds {
    let q: &Queue = o.body();
    let s = &q.s;
    Ds {
        perm: o.head().perm,
        stime: s.stime,
        rtime: s.rtime,
        ctime: s.ctime,
        cbytes: s.cbytes,
        qnum: s.qnum,
        qbytes: s.qbytes,
        lspid: s.lspid,
        lrpid: s.lrpid,
        unused: [0; 2],
    }
}

pub fn msgctl(id: i64, cmd: u64, buf: u64) -> LxResult {
    let t = table()?;
    match ipc::command(cmd) {
        IPC_INFO | MSG_INFO => {
            let queues = ipc::each(t, KIND).map(|o| o.body::<Queue>());
            let (n, msgs, bytes) =
                queues.fold((0, 0, 0), |(n, m, b), q| (n + 1, m + q.s.qnum as i32, b + q.s.cbytes as i32));
            // struct msginfo: msgpool, msgmap, msgmax, msgmnb, msgmni,
            // msgssz, msgtql (ints), msgseg (a short); MSG_INFO reports use.
            let (pool, map, tql) =
                if ipc::command(cmd) == MSG_INFO { (n, msgs, bytes) } else { (32000, 32000, 32000) };
            let info: [i32; 8] =
                [pool, map, MSGMAX as i32, MSGMNB as i32, ipc::SLOTS as i32, 16, tql, 0xffff];
            uaccess::put(buf, info)?;
            Ok(t.slots.iter().rposition(|s| s.used()).map_or(0, |i| i as i64))
        }
        MSG_STAT | MSG_STAT_ANY => {
            let i =
                usize::try_from(id).ok().filter(|&i| i < ipc::SLOTS && t.slots[i].used()).ok_or(EINVAL)?;
            let o = ipc::open(t, ipc::id_of(t, i), KIND, PAGES)?;
            if ipc::command(cmd) == MSG_STAT {
                ipc::allowed(&o.head().perm, READ)?;
            }
            uaccess::put(buf, ds(o))?;
            Ok(ipc::id_of(t, i))
        }
        IPC_STAT => {
            let o = ipc::open(t, id, KIND, PAGES)?;
            ipc::allowed(&o.head().perm, READ)?;
            uaccess::put(buf, ds(o)).map(|_| 0)
        }
        IPC_SET => {
            let o = ipc::open(t, id, KIND, PAGES)?;
            let new: Ds = uaccess::get(buf)?;
            let o = ipc::set_perm(t, ipc::slot_of(t, id)?, o, buf)?;
            let q: &mut Queue = o.body();
            (q.s.qbytes, q.s.ctime) = (new.qbytes, ipc::now_s());
            Ok(0)
        }
        IPC_RMID => {
            let o = ipc::open(t, id, KIND, PAGES)?;
            ipc::remove(t, ipc::slot_of(t, id)?, o).map(|_| 0)
        }
        _ => Err(EINVAL),
    }
}
