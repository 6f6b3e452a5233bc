//! UNIX processes built in the library (paper 000 §5.2.1): each Linux
//! process is one Veneer environment running lxrt and the program. This
//! module holds the process's private state; `table` is the process table
//! (readable by all, each entry writable by its owner), `fork`, `exit` and
//! `signal` the rest. Inside the library a process is named by its
//! environment's id; Linux programs see its pid (`pid`), which maps to and
//! from it.

pub mod exit;
pub mod fork;
pub mod kit;
pub mod pid;
pub mod signal;
pub mod table;

use crate::fs::{Ino, ROOT};
use alloc::vec::Vec;

/// One process's private state (copied by fork, kept by exec).
pub struct Me {
    /// This process's environment id.
    pub env: u32,
    pub cwd: Ino,
    pub umask: u32,
    pub brk_start: u64,
    pub brk: u64,
    pub mmap_next: u64,
    /// Path of the running executable (for /proc/self/exe).
    pub exe: Vec<u8>,
}

static mut ME: Me = Me {
    env: 0,
    cwd: ROOT,
    umask: 0o022,
    brk_start: 0,
    brk: 0,
    mmap_next: crate::layout::MMAP_BASE,
    exe: Vec::new(),
};

pub fn me() -> &'static mut Me {
    // SAFETY: private to this process; one thread.
    unsafe { &mut (*(&raw mut ME)) }
}

/// This process's environment id.
pub fn env() -> u32 {
    me().env
}

/// This process's Linux pid.
pub fn pid() -> u32 {
    pid::of(env())
}

/// Whether this process is init, Linux's PID 1: the first process.
pub fn is_init() -> bool {
    pid() == 1
}

/// The CPU time environment `env` has used, in nanoseconds: the kernel
/// counts the timer ticks that found it running.
pub fn cpu_ns(env: u32) -> u64 {
    user::kinfo::env_by_id(env as u64).map_or(0, |e| e.ticks) * user::kinfo::clock().tick_ns
}

/// Everyone is root: uid = gid = 0.
pub fn creds() -> u32 {
    0
}

/// The first process: its ids (it is PID 1) and process-table entry.
pub fn init_first() -> Result<(), abi::Error> {
    me().env = user::sys::self_id() as u32;
    pid::set_first(me().env);
    table::init_first()
}
