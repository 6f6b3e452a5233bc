//! UNIX processes built in the library (paper 000 §5.2.1): each Linux
//! process is one Veneer environment running lxrt and the program. This
//! module names it; `state` holds its private state, `table` the process table
//! (readable by all, each entry writable by its owner), `fork`, `exit` and
//! `signal` the rest. Inside the library a process is named by its
//! environment's id; Linux programs see its pid (`pid`), which maps to and
//! from it.

pub mod deliver;
pub mod exit;
pub mod fork;
pub mod kill;
pub mod kit;
pub mod limits;
pub mod pid;
pub mod reap;
pub mod signal;
pub mod state;
pub mod table;
pub mod thread;
pub mod vfork;

use crate::fs::{Ino, ROOT};
use crate::word::Word;
use alloc::vec::Vec;

pub use state::{with_process, Process};

/// The working directory, and the mode bits new files leave out.
pub static CWD: Word<Ino> = Word::new(ROOT);
pub static UMASK: Word<u32> = Word::new(0o022);

/// This process's environment id.
#[inline]
pub fn env() -> u32 {
    crate::env::id()
}

/// The working directory.
pub fn cwd() -> Ino {
    CWD.get()
}

/// The path of the running executable.
pub fn exe() -> Vec<u8> {
    with_process(|p| p.exe.clone())
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

/// The CPU time of this process's live threads (`CLOCK_PROCESS_CPUTIME_ID`),
/// in nanoseconds; threads already reaped are not counted.
pub fn process_cpu_ns() -> u64 {
    thread::envs().into_iter().fold(cpu_ns(env()), |t, e| t + cpu_ns(e))
}

/// Everyone is root: uid = gid = 0.
pub fn creds() -> u32 {
    0
}

/// The first process: its ids (it is PID 1) and process-table entry.
pub fn init_first() -> Result<(), abi::Error> {
    let env = user::sys::self_id() as u32;
    crate::env::set(env);
    pid::set_first(env);
    table::init_first()
}
