//! `vfork` and `clone(CLONE_VM)` without `CLONE_THREAD` (what glibc's and
//! musl's `posix_spawn` do): a child process that runs over its parent's
//! memory, on the stack the caller gave, while the parent is held until
//! the child execs or ends (`CLONE_VFORK`).
//!
//! The child is a process of its own (its pid, descriptors, signal
//! handlers, process-table entry), so it is built as fork builds one
//! (`fork.rs`) except that the program's writable pages are mapped into
//! it writable, the same frames, instead of copy-on-write: its writes are
//! the parent's (glibc's child reports a failed exec in a word of its
//! parent's stack). lxrt's own memory, its statics and private heap, is
//! still copied, so the child's lxrt state (its descriptor table, its
//! signal dispositions, its lock) never tramples the parent's. The child
//! loses the shared pages when its exec unmaps the old program or when it
//! ends; only then does the parent go on.
//!
//! What is shared is what the parent had mapped at the call: pages it
//! maps later, or that either side first touches afterwards, are each
//! side's own, as are pages shared copy-on-write with an earlier child at
//! the time (the child's first write copies them). Between `vfork` and
//! exec a program only writes what it already has, so this covers it.

use super::table;
use crate::lock;
use abi::tables::env_state;
use user::kinfo;

/// In the parent: waits while child `env` is alive and has not exec'd.
pub fn hold(env: u32) {
    let mut yielded = false;
    while held(env) {
        // As `reap::wait`: let the child run once, then sleep until an
        // interrupt (its `release`, its SIGCHLD) comes.
        if yielded {
            crate::sleep::pause(None);
        } else {
            yielded = true;
            lock::wait();
        }
    }
}

fn held(env: u32) -> bool {
    let alive = kinfo::env_by_id(env as u64)
        .is_some_and(|e| e.parent == super::env() && e.state != env_state::EXITED);
    alive && table::get(env).is_some_and(|e| e.vfork != 0)
}

/// In a child whose parent is held: its exec has left the parent's memory,
/// so the parent goes on.
pub fn release() {
    let me = table::mine();
    if me.vfork == 0 {
        return;
    }
    table::update_mine(|e| e.vfork = 0);
    let _ = super::signal::interrupt(me.parent, super::signal::CONSOLE_INPUT);
}
