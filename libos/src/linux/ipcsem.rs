//! System V semaphore sets (`semget`, `semop`, `semtimedop`, `semctl`), as
//! Linux keeps them: a set of counters, each changed only by operations
//! that all succeed together (an operation that would take a counter
//! below zero, or wait for it to be zero, waits unless `IPC_NOWAIT`);
//! `SEM_UNDO` keeps what a process did to undo it when it ends. Each set,
//! its `ipc_perm`, its counters, the counts of its waiters and its undo
//! records are in frames of its own (`ipc.rs`), as many pages as its
//! counters need. A process that ended is undone the next time anyone
//! operates on the set (the library learns of ends by looking at the
//! kernel's table, as the lock table does).

use super::ipc::{self, retry, Obj, Table, IPC_INFO, IPC_NOWAIT, IPC_RMID, IPC_SET, IPC_STAT, READ, WRITE};
use crate::errno::Errno;
use crate::errno::{LxResult, E2BIG, EFBIG, EIDRM, EINVAL, ENOSPC, ERANGE};
use crate::layout::PAGE;
use crate::uaccess;
use abi::tables::env_state;
use alloc::vec::Vec;

/// The semaphore sets' root slot in the arena.
static SETS: crate::shared::Root<Table> = crate::shared::Root::new(6);

/// The semaphore sets' places, in the arena (where any process finds them).
pub fn table() -> Result<&'static mut Table, Errno> {
    ipc::table(&SETS)
}

/// What a set's frames begin with (`ipc::Head::kind`).
const KIND: u64 = u64::from_le_bytes(*b"sysv sem");

/// Linux's limits: operations in a call, a counter's largest value. (The
/// semaphores in a set, `SEMMSL`, are as many as a range's frames hold.)
const SEMOPM: u64 = 500;
const SEMVMX: i32 = 32767;
const SEM_UNDO: i16 = 0x1000;
const GETPID: u64 = 11;
const GETVAL: u64 = 12;
const GETALL: u64 = 13;
const GETNCNT: u64 = 14;
const GETZCNT: u64 = 15;
const SETVAL: u64 = 16;
const SETALL: u64 = 17;
const SEM_STAT: u64 = 18;
const SEM_INFO: u64 = 19;
const SEM_STAT_ANY: u64 = 20;

/// One counter: its value, the last process to change it, and how many
/// wait for it to grow or to be zero.
#[repr(C)]
#[derive(Clone, Copy)]
struct Sem {
    val: i32,
    pid: u32,
    ncnt: u32,
    zcnt: u32,
}

/// A `SEM_UNDO` record: what to add to counter `num` of the set when
/// process `env` ends (`env` 0: a free entry).
#[repr(C)]
#[derive(Clone, Copy)]
struct Undo {
    env: u32,
    num: u32,
    adj: i32,
}

/// Undo records per set.
const UNDOS: usize = 64;

/// A set's frames: this, then its `nsems` counters.
#[repr(C)]
struct State {
    head: ipc::Head,
    nsems: u64,
    otime: i64,
    ctime: i64,
    undo: [Undo; UNDOS],
}

/// Semaphores one set may have: as many as a range's frames hold.
const SEMMSL: u64 = (ipc::MAX_PAGES * PAGE - size_of::<State>() as u64) / size_of::<Sem>() as u64;

/// The pages of a set of `n` semaphores.
fn pages(n: u64) -> u64 {
    (size_of::<State>() as u64 + n * size_of::<Sem>() as u64).div_ceil(PAGE)
}

/// Linux's `struct sembuf`.
#[repr(C)]
#[derive(Clone, Copy)]
struct Sembuf {
    num: u16,
    op: i16,
    flg: i16,
}

/// Linux's `struct semid64_ds` (x86-64).
#[repr(C)]
#[derive(Clone, Copy)]
struct Ds {
    perm: ipc::Perm,
    otime: i64,
    unused1: u64,
    ctime: i64,
    unused2: u64,
    nsems: u64,
    unused: [u64; 2],
}

/// The counters of set `o`: as many as it says it has, at most as many as
/// the pages it was mapped with hold (any holder can write its frames).
fn sems(o: Obj) -> &'static mut [Sem] {
    let room = (o.pages * PAGE - size_of::<State>() as u64) / size_of::<Sem>() as u64;
    let n = o.body::<State>().nsems.min(room) as usize;
    // SAFETY: the frames mapped here hold `room` counters after the state;
    // the big lock makes this the only reference.
    unsafe { core::slice::from_raw_parts_mut((o.at as *mut State).add(1) as *mut Sem, n) }
}

pub fn semget(key: i32, nsems: u64, flags: u64) -> LxResult {
    let n = nsems as i32 as i64;
    if n < 0 || n as u64 > SEMMSL {
        return Err(EINVAL);
    }
    let t = table()?;
    // A new set needs at least one semaphore.
    let fresh = t.slots.iter().all(|s| !s.used() || s.key != key) || key == ipc::IPC_PRIVATE;
    if fresh && n == 0 && (flags & ipc::IPC_CREAT != 0 || key == ipc::IPC_PRIVATE) {
        return Err(EINVAL);
    }
    ipc::get(
        t,
        key,
        flags,
        (KIND, pages(n as u64)),
        |o| if n as usize > sems(o).len() { Err(EINVAL) } else { Ok(()) },
        |o| {
            let st: &mut State = o.body();
            (st.nsems, st.ctime) = (n as u64, ipc::now_s());
        },
    )
}

/// Applies and drops the undo records of set `o` for processes that have
/// ended.
fn undo_ended(o: Obj) {
    let vals = sems(o);
    for u in o.body::<State>().undo.iter_mut().filter(|u| u.env != 0) {
        let live = user::kinfo::env_by_id(u.env as u64).is_some_and(|e| e.state != env_state::EXITED);
        if live {
            continue;
        }
        if let Some(s) = vals.get_mut(u.num as usize) {
            s.val = (s.val + u.adj).clamp(0, SEMVMX);
        }
        u.env = 0;
    }
}

/// Adds `adj` to this process's undo record for counter `num` of set `o`.
fn record_undo(o: Obj, num: u32, adj: i32) -> Result<(), Errno> {
    let env = crate::proc::env();
    let recs = &mut o.body::<State>().undo;
    let at = match recs.iter().position(|u| u.env == env && u.num == num) {
        Some(i) => i,
        None => {
            let i = recs.iter().position(|u| u.env == 0).ok_or(ENOSPC)?;
            recs[i] = Undo { env, num, adj: 0 };
            i
        }
    };
    recs[at].adj = recs[at].adj.saturating_add(adj);
    Ok(())
}

/// Forgets the undo records of set `o` for counter `num` (every counter if
/// None): they no longer mean anything once it is set.
fn forget_undo(o: Obj, num: Option<u32>) {
    for u in o.body::<State>().undo.iter_mut().filter(|u| num.is_none_or(|n| u.num == n)) {
        u.adj = 0;
    }
}

/// `semtimedop(id, sops, nsops, timeout)` (`semop`: no timeout).
pub fn semtimedop(id: i64, sops: u64, nsops: u64, timeout: u64) -> LxResult {
    if nsops as i64 <= 0 {
        return Err(EINVAL);
    }
    if nsops > SEMOPM {
        return Err(E2BIG);
    }
    let raw = uaccess::bytes(sops, nsops * 6)?;
    let ops: Vec<Sembuf> = raw
        .chunks_exact(6)
        .map(|c| Sembuf {
            num: u16::from_ne_bytes([c[0], c[1]]),
            op: i16::from_ne_bytes([c[2], c[3]]),
            flg: i16::from_ne_bytes([c[4], c[5]]),
        })
        .collect();
    let deadline = if timeout != 0 {
        let [s, ns]: [i64; 2] = uaccess::get(timeout)?;
        if s < 0 || !(0..1_000_000_000).contains(&ns) {
            return Err(EINVAL);
        }
        Some(crate::time::now_ns() + s as u64 * 1_000_000_000 + ns as u64)
    } else {
        None
    };
    let nowait = ops.iter().any(|o| o.flg as u64 & IPC_NOWAIT != 0);
    let mut waited = false;
    // The counts of waiters, while this call waits.
    let mut counted: Option<(u16, bool)> = None;
    let alters = ops.iter().any(|o| o.op != 0);
    let r = retry(!nowait, deadline, || {
        let o =
            ipc::open(table()?, id, KIND, 1).map_err(|e| if waited && e == EINVAL { EIDRM } else { e })?;
        waited = true;
        ipc::allowed(&o.head().perm, if alters { WRITE } else { READ })?;
        undo_ended(o);
        let s = sems(o);
        if ops.iter().any(|o| o.num as usize >= s.len()) {
            return Err(EFBIG);
        }
        // All at once on a copy: the first that cannot go on waits.
        let mut vals: Vec<i32> = s.iter().map(|x| x.val).collect();
        for op in &ops {
            let v = &mut vals[op.num as usize];
            let blocked = match op.op {
                0 => *v != 0,
                n if n < 0 => *v < -(n as i32),
                _ => false,
            };
            if blocked {
                if counted.is_none() {
                    let zero = op.op == 0;
                    let c = &mut s[op.num as usize];
                    if zero {
                        c.zcnt += 1
                    } else {
                        c.ncnt += 1
                    }
                    counted = Some((op.num, zero));
                }
                return Err(crate::errno::EAGAIN);
            }
            *v += op.op as i32;
            if *v > SEMVMX {
                return Err(ERANGE);
            }
        }
        for op in ops.iter().filter(|op| op.flg & SEM_UNDO != 0 && op.op != 0) {
            record_undo(o, op.num as u32, -(op.op as i32))?;
        }
        let pid = crate::proc::pid();
        for (c, v) in s.iter_mut().zip(vals) {
            if c.val != v {
                (c.val, c.pid) = (v, pid);
            }
        }
        for op in &ops {
            s[op.num as usize].pid = pid;
        }
        o.body::<State>().otime = ipc::now_s();
        Ok(0)
    });
    if let Some((num, zero)) = counted {
        let set = table().and_then(|t| ipc::open(t, id, KIND, 1));
        if let Some(c) = set.ok().and_then(|o| sems(o).get_mut(num as usize)) {
            if zero {
                c.zcnt = c.zcnt.saturating_sub(1)
            } else {
                c.ncnt = c.ncnt.saturating_sub(1)
            }
        }
    }
    r
}

fn ds(o: Obj) -> Ds {
    let st: &State = o.body();
    Ds {
        perm: o.head().perm,
        otime: st.otime,
        unused1: 0,
        ctime: st.ctime,
        unused2: 0,
        nsems: sems(o).len() as u64,
        unused: [0; 2],
    }
}

/// `semctl(id, num, cmd, arg)`: `arg` is the union's value (a number for
/// `SETVAL`, else a pointer).
pub fn semctl(id: i64, num: u64, cmd: u64, arg: u64) -> LxResult {
    let t = table()?;
    let cmd = ipc::command(cmd);
    if matches!(cmd, IPC_INFO | SEM_INFO) {
        // struct seminfo: semmap, semmni, semmns, semmnu, semmsl, semopm,
        // semume, semusz, semvmx, semaem; SEM_INFO reports use.
        let (sets, total) = ipc::each(t, KIND).fold((0, 0), |(n, c), o| (n + 1, c + sems(o).len() as i32));
        let (usz, aem) = if cmd == SEM_INFO { (sets, total) } else { (20, 16384) };
        let info: [i32; 10] = [
            32000,
            ipc::SLOTS as i32,
            1_024_000_000,
            32000,
            SEMMSL as i32,
            SEMOPM as i32,
            UNDOS as i32,
            usz,
            SEMVMX,
            aem,
        ];
        uaccess::put(arg, info)?;
        return Ok(t.slots.iter().rposition(|s| s.used()).map_or(0, |i| i as i64));
    }
    if matches!(cmd, SEM_STAT | SEM_STAT_ANY) {
        let i = usize::try_from(id).ok().filter(|&i| i < ipc::SLOTS && t.slots[i].used()).ok_or(EINVAL)?;
        let o = ipc::open(t, ipc::id_of(t, i), KIND, 1)?;
        if cmd == SEM_STAT {
            ipc::allowed(&o.head().perm, READ)?;
        }
        uaccess::put(arg, ds(o))?;
        return Ok(ipc::id_of(t, i));
    }
    let o = ipc::open(t, id, KIND, 1)?;
    let need = match cmd {
        IPC_STAT | GETVAL | GETPID | GETNCNT | GETZCNT | GETALL => READ,
        SETVAL | SETALL => WRITE,
        // IPC_SET and IPC_RMID check the owner themselves.
        _ => 0,
    };
    ipc::allowed(&o.head().perm, need)?;
    undo_ended(o);
    let s = sems(o);
    let one = || s.get(num as u32 as usize).copied().ok_or(EINVAL);
    match cmd {
        IPC_STAT => uaccess::put(arg, ds(o)).map(|_| 0),
        IPC_SET => {
            let o = ipc::set_perm(t, ipc::slot_of(t, id)?, o, arg)?;
            o.body::<State>().ctime = ipc::now_s();
            Ok(0)
        }
        IPC_RMID => ipc::remove(t, ipc::slot_of(t, id)?, o).map(|_| 0),
        GETVAL => one().map(|c| c.val as i64),
        GETPID => one().map(|c| c.pid as i64),
        GETNCNT => one().map(|c| c.ncnt as i64),
        GETZCNT => one().map(|c| c.zcnt as i64),
        GETALL => {
            let vals: Vec<u8> = s.iter().flat_map(|c| (c.val as u16).to_ne_bytes()).collect();
            uaccess::write(arg, &vals).map(|_| 0)
        }
        SETVAL => {
            let v = arg as i32;
            one()?;
            if !(0..=SEMVMX).contains(&v) {
                return Err(ERANGE);
            }
            let c = &mut s[num as usize];
            (c.val, c.pid) = (v, crate::proc::pid());
            o.body::<State>().ctime = ipc::now_s();
            forget_undo(o, Some(num as u32));
            Ok(0)
        }
        SETALL => {
            let raw = uaccess::bytes(arg, s.len() as u64 * 2)?;
            let vals: Vec<i32> =
                raw.chunks_exact(2).map(|c| u16::from_ne_bytes([c[0], c[1]]) as i32).collect();
            if vals.iter().any(|&v| v > SEMVMX) {
                return Err(ERANGE);
            }
            let pid = crate::proc::pid();
            for (c, v) in s.iter_mut().zip(vals) {
                (c.val, c.pid) = (v, pid);
            }
            o.body::<State>().ctime = ipc::now_s();
            forget_undo(o, None);
            Ok(0)
        }
        _ => Err(EINVAL),
    }
}
