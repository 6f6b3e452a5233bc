//! Scheduling calls: CPU affinity (one CPU), policies and parameters,
//! the round-robin interval, and nice values (`getpriority`,
//! `setpriority`). Veneer's kernel schedules every environment round-robin
//! with equal slices: a policy or nice value is kept in the process-table
//! entry (`/proc/PID/stat` shows it, children inherit it) and changes
//! nothing else. The arguments are checked as Linux checks them.

use crate::errno::Errno;
use crate::errno::{LxResult, EINVAL, EPERM, ESRCH};
use crate::proc::{self, exit, table};
use crate::uaccess;
use alloc::vec::Vec;
use user::kinfo;

const SCHED_OTHER: u64 = 0;
const SCHED_FIFO: u64 = 1;
const SCHED_RR: u64 = 2;
const SCHED_BATCH: u64 = 3;
const SCHED_IDLE: u64 = 5;
const SCHED_DEADLINE: u64 = 6;
const SCHED_RESET_ON_FORK: u64 = 0x4000_0000;

const PRIO_PROCESS: u64 = 0;
const PRIO_PGRP: u64 = 1;
const PRIO_USER: u64 = 2;

/// The environment a scheduling call's `pid` names (0: the caller); a
/// negative pid is EINVAL, as in Linux's `sched_*` calls.
fn target(pid: i64) -> Result<u32, Errno> {
    match pid {
        p if p < 0 => Err(EINVAL),
        0 => Ok(proc::env()),
        p => u32::try_from(p).ok().and_then(proc::pid::env).ok_or(ESRCH),
    }
}

/// The entry of environment `env`, changed by `f`: ours, or a child's
/// (others' entries are read-only to us: EPERM, as for a process without
/// `CAP_SYS_NICE`).
fn update(env: u32, f: impl FnOnce(&mut table::Entry)) -> LxResult {
    if env == proc::env() {
        table::update_mine(f);
    } else if exit::is_child(env) {
        table::write_child(env, f).map_err(|_| ESRCH)?;
    } else {
        return Err(EPERM);
    }
    Ok(0)
}

fn entry(env: u32) -> Result<table::Entry, Errno> {
    table::get(env).copied().ok_or(ESRCH)
}

/// `sched_getaffinity`: the one CPU. Linux's checks: a negative pid is
/// ESRCH (no such task), a length too short for the CPUs or not a
/// multiple of 8 is EINVAL; it returns the bytes written.
pub fn sched_getaffinity(pid: i64, len: u64, mask: u64) -> LxResult {
    if pid < 0 {
        return Err(ESRCH);
    }
    target(pid)?;
    if len < 8 || !len.is_multiple_of(8) {
        return Err(EINVAL);
    }
    uaccess::put(mask, 1u64)?;
    Ok(8)
}

/// `sched_setaffinity`: the mask must name CPU 0 (EINVAL otherwise); it
/// is read (EFAULT) before the pid is looked up, as Linux does.
pub fn sched_setaffinity(pid: i64, len: u64, mask: u64) -> LxResult {
    let mut bytes = [0u8; 8];
    let n = len.min(8) as usize;
    bytes[..n].copy_from_slice(uaccess::bytes(mask, n as u64)?);
    if pid < 0 {
        return Err(ESRCH);
    }
    target(pid)?;
    if bytes[0] & 1 == 0 {
        return Err(EINVAL);
    }
    Ok(0)
}

/// The priority range of `policy`.
fn range(policy: u64) -> Result<(i64, i64), Errno> {
    match policy {
        SCHED_FIFO | SCHED_RR => Ok((1, 99)),
        SCHED_OTHER | SCHED_BATCH | SCHED_IDLE | SCHED_DEADLINE => Ok((0, 0)),
        _ => Err(EINVAL),
    }
}

pub fn sched_get_priority_max(policy: u64) -> LxResult {
    range(policy).map(|(_, hi)| hi)
}

pub fn sched_get_priority_min(policy: u64) -> LxResult {
    range(policy).map(|(lo, _)| lo)
}

pub fn sched_getscheduler(pid: i64) -> LxResult {
    Ok(entry(target(pid)?)?.policy as i64)
}

pub fn sched_getparam(pid: i64, param: u64) -> LxResult {
    if param == 0 {
        return Err(EINVAL);
    }
    target(pid).and_then(entry)?;
    uaccess::put(param, 0i32)
}

/// `sched_setscheduler` (and `sched_setparam`, `policy` None: the current
/// one): the time-sharing policies with priority 0; the real-time ones are
/// refused with EPERM (Veneer cannot give them), after the checks Linux
/// makes first.
pub fn sched_setscheduler(pid: i64, policy: Option<u64>, param: u64) -> LxResult {
    if param == 0 || pid < 0 {
        return Err(EINVAL);
    }
    let prio: i32 = uaccess::get(param)?;
    let env = target(pid)?;
    let policy = match policy {
        Some(p) => p & !SCHED_RESET_ON_FORK,
        None => entry(env)?.policy as u64,
    };
    let (lo, hi) = range(policy)?;
    if policy == SCHED_DEADLINE || !(lo..=hi).contains(&i64::from(prio)) {
        return Err(EINVAL);
    }
    if policy == SCHED_FIFO || policy == SCHED_RR {
        return Err(EPERM);
    }
    update(env, |e| e.policy = policy as u8)
}

/// `sched_rr_get_interval`: the kernel's slice.
pub fn sched_rr_get_interval(pid: i64, tp: u64) -> LxResult {
    target(pid)?;
    let ns = kinfo::clock().tick_ns;
    uaccess::put(tp, [(ns / 1_000_000_000) as i64, (ns % 1_000_000_000) as i64])
}

/// The processes `which`/`who` name (Linux's `getpriority` set): one
/// process, a process group, or (everyone being root) every process for
/// uid 0 and none for another.
fn named(which: u64, who: u64) -> Result<Vec<u32>, Errno> {
    let who = who as u32;
    let live = || table::all().filter(|(_, e)| table::alive(e.env)).map(|(_, e)| *e);
    let v: Vec<u32> = match which {
        PRIO_PROCESS if who == 0 => alloc::vec![proc::env()],
        PRIO_PROCESS => alloc::vec![proc::pid::env(who).ok_or(ESRCH)?],
        PRIO_PGRP => {
            let group = if who == 0 { table::mine().pgid } else { who };
            live().filter(|e| e.pgid == group).map(|e| e.env).collect()
        }
        PRIO_USER if who == 0 => live().map(|e| e.env).collect(),
        PRIO_USER => Vec::new(),
        _ => return Err(EINVAL),
    };
    if v.is_empty() {
        return Err(ESRCH);
    }
    Ok(v)
}

/// `getpriority`: the highest priority (lowest nice) among those named,
/// as the kernel returns it: 20 - nice (1..=40).
pub fn getpriority(which: u64, who: u64) -> LxResult {
    let nice = named(which, who)?.into_iter().filter_map(|env| table::get(env).map(|e| e.nice)).min();
    Ok(20 - i64::from(nice.ok_or(ESRCH)?))
}

/// `setpriority`: nice values beyond -20..=19 are clamped; each process
/// named gets it (EPERM for one that is neither us nor our child).
pub fn setpriority(which: u64, who: u64, prio: i64) -> LxResult {
    let nice = (prio as i32).clamp(-20, 19) as i8;
    let mut result = Ok(0);
    for env in named(which, who)? {
        if let Err(e) = update(env, |e| e.nice = nice) {
            result = Err(e);
        }
    }
    result
}
