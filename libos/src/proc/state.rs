//! This process's state that is more than single words, in one value.
//! Fork copies it (the child corrects its copy in `fork::child_start`);
//! exec keeps it, resetting what Linux resets.
//!
//! `Process` holds what the process modules keep: the executable's path,
//! signal dispositions, children, kits, the process-table window, the
//! threads. It is reached only through the scoped borrow
//! `with_process(|p| ...)`, which panics if it is re-entered (`scoped.rs`),
//! so two `&mut` to it never exist. What the modules below keep of a
//! process is theirs, each behind a borrow of its own (`fd::Table`,
//! `vm::Space`, `predicate::Cache`, `log::Notes`, the terminal's settings),
//! and so are the words each reads and writes by value (`word::Word`) and
//! the words each keeps per thread (`entry::Local`).
//!
//! It relies on lxrt's code running for one thread of a process at a time
//! (each Linux call and fault takes the big lock, `lock.rs`, and drops it
//! only where it waits), its handler never re-entered.

use super::{exit, kit, signal, table};
use crate::scoped::Scoped;
use alloc::vec::Vec;

/// A process's state that is not single words.
pub struct Process {
    /// Path of the running executable (for /proc/self/exe).
    pub exe: Vec<u8>,
    pub signals: signal::Dispositions,
    pub children: exit::Children,
    pub kits: kit::Kits,
    pub ptable: table::View,
    /// Threads other than the first (`thread.rs`).
    pub threads: super::thread::List,
    /// Its resource limits (`getrlimit`).
    pub limits: super::limits::Limits,
}

static PROCESS: Scoped<Process> = Scoped::new(
    "the process state",
    Process {
        exe: Vec::new(),
        signals: signal::Dispositions::INITIAL,
        children: exit::Children::NONE,
        kits: kit::Kits::NONE,
        ptable: table::View::INITIAL,
        threads: super::thread::List::NONE,
        limits: super::limits::Limits::INITIAL,
    },
);

/// Runs `f` on this process's state; panics if it is borrowed already.
#[inline]
pub fn with_process<R>(f: impl FnOnce(&mut Process) -> R) -> R {
    PROCESS.with(f)
}
