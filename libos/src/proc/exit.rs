//! Ending a process and waiting for children.
//!
//! The kernel destroys an environment's whole subtree when it is reaped,
//! but a UNIX child may outlive its parent. So a process that exits while
//! its environment still has live children does not end its environment:
//! it closes its files, gives back its memory, records its status in the
//! process table (its parent's `wait4` sees a zombie) and then only waits,
//! yielding, for its child environments to end, reaping them, before it
//! calls the kernel's `exit`. Orphans get no new parent (`getppid` says 1).

use super::table::{self, FREE, RUNNING, ZOMBIE};
use crate::errno::{ECHILD, EINTR};
use crate::{fd, lock, vm};
use abi::tables::{env_state, EnvInfo};
use alloc::vec::Vec;
use user::{kinfo, sys};

/// The environments this process created (fork), which may still exist:
/// the kernel's environment table says which do, without scanning it all.
static mut CHILDREN: Vec<u32> = Vec::new();

fn children() -> &'static mut Vec<u32> {
    // SAFETY: private to this process; one thread.
    unsafe { &mut *(&raw mut CHILDREN) }
}

/// Fork made environment `env`.
pub fn add_child(env: u32) {
    children().push(env);
}

/// A forked child's copy of the list names its siblings, not its children.
pub fn forked_child() {
    children().clear();
}

/// The kernel's view: live environments whose parent is this one.
fn child_envs() -> impl Iterator<Item = EnvInfo> {
    let me = sys::self_id() as u32;
    children().retain(|&id| kinfo::env_by_id(id as u64).is_some_and(|e| e.parent == me));
    children().iter().filter_map(|&id| kinfo::env_by_id(id as u64))
}

/// Destroys child environments that have ended and whose process nobody
/// will wait for any more (their slot is free or was reaped).
fn reap_envs() {
    for e in child_envs().filter(|e| e.state == env_state::EXITED) {
        let waited = table::table().slots.iter().any(|s| s.state == ZOMBIE && s.env == e.id);
        if !waited {
            let _ = sys::env_destroy(e.id as u64);
        }
    }
}

/// Ends this process with Linux wait status `status`.
pub fn exit(status: i32) -> ! {
    lock::acquire();
    fd::close_all();
    vm::remove(0, u64::MAX);
    let me = super::pid();
    let first = kinfo::env_by_id(sys::self_id()).is_some_and(|e| e.parent == 0);
    for s in table::table().slots.iter_mut() {
        if s.state != FREE && s.ppid == me {
            s.ppid = 0;
            if s.state == ZOMBIE {
                s.state = FREE;
            }
        }
    }
    if let Some(s) = table::by_pid(me) {
        let parent_waits = s.ppid != 0 && table::by_pid(s.ppid).is_some_and(|p| p.state == RUNNING);
        if parent_waits && !first {
            s.state = ZOMBIE;
            s.status = status;
        } else {
            s.state = FREE;
        }
    }
    crate::log::flush();
    loop {
        reap_envs();
        if child_envs().next().is_none() {
            break;
        }
        lock::wait();
    }
    lock::release();
    let code = if status & 0x7f == 0 { (status >> 8) & 0xff } else { 128 + (status & 0x7f) };
    sys::exit(code)
}

const WNOHANG: u64 = 1;

/// `wait4`: waits for a child matching `pid` (-1 any, > 0 that one, 0 or
/// < -1 a process group) to end; returns its pid and status.
pub fn wait(pid: i64, options: u64) -> Result<(i64, i32), i64> {
    let me = super::pid();
    let matches = |s: &table::Slot| {
        s.state != FREE
            && s.ppid == me
            && match pid {
                -1 => true,
                p if p > 0 => s.pid as i64 == p,
                0 => table::by_pid(me).is_some_and(|m| m.pgid == s.pgid),
                p => s.pgid as i64 == -p,
            }
    };
    loop {
        let slots = &mut table::table().slots;
        if !slots.iter().any(&matches) {
            return Err(ECHILD);
        }
        for s in slots.iter_mut().filter(|s| matches(s)) {
            if s.state == ZOMBIE {
                let r = (s.pid as i64, s.status);
                s.state = FREE;
                reap_envs();
                return Ok(r);
            }
            // A child whose environment vanished without a status was
            // killed from outside.
            let gone = kinfo::env_by_id(s.env as u64)
                .is_none_or(|e| e.state == env_state::EXITED && s.state == RUNNING);
            if gone {
                let r = (s.pid as i64, super::signal::SIGKILL as i32);
                s.state = FREE;
                reap_envs();
                return Ok(r);
            }
        }
        if options & WNOHANG != 0 {
            return Ok((0, 0));
        }
        lock::wait();
        crate::obj::console::poll_interrupt();
        if table::by_pid(me)
            .is_some_and(|m| m.pending & !super::signal::blocked() & !(1 << super::signal::SIGCHLD) != 0)
        {
            return Err(EINTR);
        }
    }
}
