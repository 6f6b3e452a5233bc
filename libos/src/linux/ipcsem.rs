//! System V semaphore sets (`semget`, `semop`, `semtimedop`, `semctl`), as
//! Linux keeps them: a set of counters, each changed only by operations
//! that all succeed together (an operation that would take a counter
//! below zero, or wait for it to be zero, waits unless `IPC_NOWAIT`);
//! `SEM_UNDO` keeps what a process did to undo it when it ends. The sets,
//! their counters and the undo records are in the shared arena (`ipc.rs`).
//! A process that ended is undone the next time anyone operates on
//! semaphores (the library learns of ends by looking at the kernel's
//! table, as the lock table does).

use super::ipc::{self, retry, Table, IPC_INFO, IPC_NOWAIT, IPC_RMID, IPC_SET, IPC_STAT};
use crate::errno::Errno;
use crate::errno::{LxResult, E2BIG, EFBIG, EIDRM, EINVAL, ENOMEM, ENOSPC, ERANGE};
use crate::uaccess;
use abi::tables::env_state;
use alloc::vec::Vec;

/// Every semaphore set and every process's undo records, in the arena.
#[repr(C)]
struct Sems {
    sem: Table<Set>,
    undo: Undos,
}

/// Their root slot in the arena.
static SEMS: crate::shared::Root<Sems> = crate::shared::Root::new(6);

/// The semaphore sets, made by the first call that needs them.
fn tables() -> Result<&'static mut Sems, Errno> {
    // SAFETY: all zero is a valid `Sems` (nothing in use).
    unsafe { ipc::tables(&SEMS) }
}

/// Linux's limits: semaphores in a set, operations in a call, a counter's
/// largest value.
const SEMMSL: u64 = 32000;
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

/// A set (all zero: none).
#[repr(C)]
pub struct Set {
    sems: *mut Sem,
    nsems: u64,
    otime: i64,
    ctime: i64,
}

/// A `SEM_UNDO` record: what to add to counter `num` of set `id` when
/// process `env` ends.
#[repr(C)]
#[derive(Clone, Copy)]
struct Undo {
    env: u32,
    num: u32,
    id: i64,
    adj: i32,
}

const UNDOS: usize = 256;

/// Every process's undo records (`env` 0: a free entry).
#[repr(C)]
pub struct Undos([Undo; UNDOS]);

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

/// The counters of set `s`.
fn sems(s: &Set) -> &'static mut [Sem] {
    if s.sems.is_null() {
        return &mut [];
    }
    // SAFETY: the set's block holds `nsems` counters in the arena; the big
    // lock makes this the only reference.
    unsafe { core::slice::from_raw_parts_mut(s.sems, s.nsems as usize) }
}

pub fn semget(key: i32, nsems: u64, flags: u64) -> LxResult {
    let n = nsems as i32 as i64;
    if n < 0 || n as u64 > SEMMSL {
        return Err(EINVAL);
    }
    ipc::get(
        &mut tables()?.sem,
        key,
        flags,
        |s| if n as u64 > s.nsems { Err(EINVAL) } else { Ok(()) },
        || {
            if n == 0 {
                return Err(EINVAL);
            }
            let block = crate::shared::alloc(n as usize * size_of::<Sem>(), 8) as *mut Sem;
            if block.is_null() {
                return Err(ENOMEM);
            }
            // SAFETY: a fresh block for `n` counters; zero is a valid one.
            unsafe { core::ptr::write_bytes(block, 0, n as usize) };
            Ok(Set { sems: block, nsems: n as u64, otime: 0, ctime: ipc::now_s() })
        },
    )
}

/// Applies and drops the undo records of processes that have ended.
fn undo_ended(t: &mut Sems) {
    for u in t.undo.0.iter_mut().filter(|u| u.env != 0) {
        let live = user::kinfo::env_by_id(u.env as u64).is_some_and(|e| e.state != env_state::EXITED);
        if live {
            continue;
        }
        if let Ok(i) = ipc::slot_of(&mut t.sem, u.id) {
            if let Some(s) = sems(&t.sem.slots[i].obj).get_mut(u.num as usize) {
                s.val = (s.val + u.adj).clamp(0, SEMVMX);
            }
        }
        u.env = 0;
    }
}

/// Adds `adj` to this process's undo record for counter `num` of `id`.
fn record_undo(t: &mut Sems, id: i64, num: u32, adj: i32) -> Result<(), Errno> {
    let env = crate::proc::env();
    let recs = &mut t.undo.0;
    let at = match recs.iter().position(|u| u.env == env && u.id == id && u.num == num) {
        Some(i) => i,
        None => {
            let i = recs.iter().position(|u| u.env == 0).ok_or(ENOSPC)?;
            recs[i] = Undo { env, num, id, adj: 0 };
            i
        }
    };
    recs[at].adj += adj;
    Ok(())
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
    let r = retry(!nowait, deadline, || {
        let t = tables()?;
        undo_ended(t);
        let i = ipc::slot_of(&mut t.sem, id).map_err(|e| if waited { EIDRM } else { e })?;
        waited = true;
        let set = &mut t.sem.slots[i].obj;
        let s = sems(set);
        if ops.iter().any(|o| o.num as usize >= s.len()) {
            return Err(EFBIG);
        }
        // All at once on a copy: the first that cannot go on waits.
        let mut vals: Vec<i32> = s.iter().map(|x| x.val).collect();
        for o in &ops {
            let v = &mut vals[o.num as usize];
            let blocked = match o.op {
                0 => *v != 0,
                op if op < 0 => *v < -(op as i32),
                _ => false,
            };
            if blocked {
                if counted.is_none() {
                    let zero = o.op == 0;
                    let c = &mut s[o.num as usize];
                    if zero {
                        c.zcnt += 1
                    } else {
                        c.ncnt += 1
                    }
                    counted = Some((o.num, zero));
                }
                return Err(crate::errno::EAGAIN);
            }
            *v += o.op as i32;
            if *v > SEMVMX {
                return Err(ERANGE);
            }
        }
        for o in ops.iter().filter(|o| o.flg & SEM_UNDO != 0 && o.op != 0) {
            record_undo(t, id, o.num as u32, -(o.op as i32))?;
        }
        let set = &mut t.sem.slots[i].obj;
        let pid = crate::proc::pid();
        for (c, v) in sems(set).iter_mut().zip(vals) {
            if c.val != v {
                (c.val, c.pid) = (v, pid);
            }
        }
        for o in &ops {
            sems(set)[o.num as usize].pid = pid;
        }
        set.otime = ipc::now_s();
        Ok(0)
    });
    if let Some((num, zero)) = counted {
        if let Ok(i) = tables().and_then(|t| ipc::slot_of(&mut t.sem, id).map(|i| (t, i))) {
            let (t, i) = i;
            if let Some(c) = sems(&t.sem.slots[i].obj).get_mut(num as usize) {
                if zero {
                    c.zcnt -= 1
                } else {
                    c.ncnt -= 1
                }
            }
        }
    }
    r
}

fn ds(s: &ipc::Slot<Set>) -> Ds {
    Ds {
        perm: s.perm,
        otime: s.obj.otime,
        unused1: 0,
        ctime: s.obj.ctime,
        unused2: 0,
        nsems: s.obj.nsems,
        unused: [0; 2],
    }
}

/// `semctl(id, num, cmd, arg)`: `arg` is the union's value (a number for
/// `SETVAL`, else a pointer).
pub fn semctl(id: i64, num: u64, cmd: u64, arg: u64) -> LxResult {
    let t = tables()?;
    undo_ended(t);
    let cmd = ipc::command(cmd);
    if matches!(cmd, IPC_INFO | SEM_INFO) {
        // struct seminfo: semmap, semmni, semmns, semmnu, semmsl, semopm,
        // semume, semusz, semvmx, semaem; SEM_INFO reports use.
        let used = t.sem.slots.iter().filter(|s| s.used);
        let (sets, total) = used.fold((0, 0), |(n, c), s| (n + 1, c + s.obj.nsems as i32));
        let (usz, aem) = if cmd == SEM_INFO { (sets, total) } else { (20, 16384) };
        let info: [i32; 10] = [
            32000,
            ipc::SLOTS as i32,
            1_024_000_000,
            32000,
            SEMMSL as i32,
            SEMOPM as i32,
            500,
            usz,
            SEMVMX,
            aem,
        ];
        uaccess::put(arg, info)?;
        return Ok(t.sem.slots.iter().rposition(|s| s.used).map_or(0, |i| i as i64));
    }
    if matches!(cmd, SEM_STAT | SEM_STAT_ANY) {
        let i = usize::try_from(id).ok().filter(|&i| i < ipc::SLOTS && t.sem.slots[i].used).ok_or(EINVAL)?;
        uaccess::put(arg, ds(&t.sem.slots[i]))?;
        return Ok(ipc::id_of(&t.sem, i));
    }
    let i = ipc::slot_of(&mut t.sem, id)?;
    let slot = &mut t.sem.slots[i];
    let s = sems(&slot.obj);
    let one = || s.get(num as u32 as usize).copied().ok_or(EINVAL);
    match cmd {
        IPC_STAT => uaccess::put(arg, ds(slot)).map(|_| 0),
        IPC_SET => {
            ipc::set_perm(&mut slot.perm, arg)?;
            slot.obj.ctime = ipc::now_s();
            Ok(0)
        }
        IPC_RMID => {
            // SAFETY: the set's block, from `shared::alloc` with this size.
            unsafe { crate::shared::free(slot.obj.sems as *mut u8, size_of_val(s), 8) };
            slot.obj = Set { sems: core::ptr::null_mut(), nsems: 0, otime: 0, ctime: 0 };
            slot.used = false;
            for u in t.undo.0.iter_mut().filter(|u| u.id == id) {
                u.env = 0;
            }
            Ok(0)
        }
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
            slot.obj.ctime = ipc::now_s();
            // Undo records for it no longer mean anything.
            for u in t.undo.0.iter_mut().filter(|u| u.id == id && u.num == num as u32) {
                u.adj = 0;
            }
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
            slot.obj.ctime = ipc::now_s();
            for u in t.undo.0.iter_mut().filter(|u| u.id == id) {
                u.adj = 0;
            }
            Ok(0)
        }
        _ => Err(EINVAL),
    }
}
