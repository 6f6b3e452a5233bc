//! UNIX processes built in the library (paper 000 §5.2.1): each Linux
//! process is one Veneer environment running lxrt and the program. This
//! module holds the process's private state; `table` is the shared process
//! table, `fork`, `exit` and `signal` the rest.

pub mod exit;
pub mod fork;
pub mod kit;
pub mod signal;
pub mod table;

use crate::fs::{Ino, ROOT};
use alloc::vec::Vec;

/// One process's private state (copied by fork, kept by exec).
pub struct Me {
    pub pid: u32,
    pub cwd: Ino,
    pub umask: u32,
    pub brk_start: u64,
    pub brk: u64,
    pub mmap_next: u64,
    /// Path of the running executable (for /proc/self/exe).
    pub exe: Vec<u8>,
}

static mut ME: Me = Me {
    pid: 1,
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

pub fn pid() -> u32 {
    me().pid
}

/// Everyone is root: uid = gid = 0.
pub fn creds() -> u32 {
    0
}

/// The first process's slot (pid 1).
pub fn init_first() {
    let s = table::alloc(0, user::sys::self_id() as u32, 0).expect("empty process table");
    me().pid = s.pid;
}
