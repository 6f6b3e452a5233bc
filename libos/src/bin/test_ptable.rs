//! Boot test: the process table's protection (paper 000 §5.2.1: readable
//! by all, each entry written only by its owner). A forked child can map
//! its parent's entry read-only and read it, but the kernel refuses it the
//! entry writable, with the shared read capability or its own; it can
//! signal its parent only with that capability; it can change its own
//! entry; the parent, which owns the child's environment,
//! can change the child's entry too (as Linux lets a parent `setpgid` its
//! child) and still reads it after the child has ended, until it reaps it.
#![no_std]
#![no_main]

use abi::syscall::{map as mf, CRED_SELF, ENV_SELF};
use abi::Error;
use libos::layout::SCRATCH;
use libos::linux::nr::{SYS_EXIT, SYS_FORK, SYS_GETPID, SYS_GETPPID, SYS_WAIT4};
use libos::native::{self, linux};
use libos::proc::{self, table};
use user::verdict::check;
use user::{kinfo, println, sys};

/// In the child: what it may and may not do with its parent's entry.
fn child() -> u64 {
    let mut ok = true;
    // The parent changes our entry first.
    while table::mine().pgid != 55 {
        sys::yield_now();
    }
    let parent = proc::pid::env(linux(SYS_GETPPID, [0; 6]) as u32).unwrap_or(0);
    let frame = kinfo::env_by_id(parent as u64).map_or(0, |e| e.published);
    check(&mut ok, "child reads its parent's entry", table::get(parent).is_some_and(|e| e.env == parent));
    let shared = sys::map_with(ENV_SELF, SCRATCH, frame, mf::WRITE, CRED_SELF, table::cred());
    check(&mut ok, "writable with the read capability: refused", shared == Err(Error::NotPermitted));
    let own = sys::map_with(ENV_SELF, SCRATCH, frame, mf::WRITE, CRED_SELF, CRED_SELF);
    check(&mut ok, "writable with its own capability: refused", own == Err(Error::NotOwner));
    // Signals (interrupts; bit 0 carries none) need the tree's capability.
    let bare = sys::interrupt(parent as u64, 1, CRED_SELF);
    check(&mut ok, "interrupt without the capability: refused", bare == Err(Error::NotPermitted));
    check(&mut ok, "interrupt with it", sys::interrupt(parent as u64, 1, table::cred()).is_ok());
    table::update_mine(|e| e.sid = 77);
    check(&mut ok, "child writes its own entry", table::mine().sid == 77);
    u64::from(!ok)
}

fn main(_: u64) -> i32 {
    if let Err(e) = native::init(libos::linux::syscall) {
        println!("test_ptable: {e}");
        return 1;
    }
    let pid = linux(SYS_FORK, [0; 6]);
    if pid == 0 {
        linux(SYS_EXIT, [child(), 0, 0, 0, 0, 0]);
    }
    let mut ok = true;
    check(&mut ok, "fork", pid > 0);
    check(&mut ok, "this process is PID 1", linux(SYS_GETPID, [0; 6]) == 1);
    let env = proc::pid::env(pid as u32).unwrap_or(0);
    check(&mut ok, "parent writes its child's entry", table::write_child(env, |e| e.pgid = 55).is_ok());
    // Wait for the child's end without reaping it.
    while kinfo::env_by_id(env as u64).is_some_and(|e| e.state != abi::tables::env_state::EXITED) {
        sys::yield_now();
    }
    let entry = table::get(env);
    check(&mut ok, "zombie's entry still readable", entry.is_some_and(|e| e.pgid == 55 && e.sid == 77));
    let mut status = -1i32;
    let r = linux(SYS_WAIT4, [pid as u64, &raw mut status as u64, 0, 0, 0, 0]);
    check(&mut ok, "child's checks passed (exit status 0)", r == pid && status == 0);
    check(&mut ok, "reaped child's entry gone", table::get(env).is_none());
    if ok {
        println!("process table protection test passed");
        0
    } else {
        1
    }
}

user::entry!(main);
