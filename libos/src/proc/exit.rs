//! Ending a process (waiting for children is `reap.rs`).
//!
//! A process's exit status is its environment's exit code in the kernel's
//! table (a Linux wait status), so nobody can forge it; an environment
//! ended by the kernel (a fault with no handler) or destroyed from outside
//! reads as killed by SIGKILL. A zombie is an exited environment its parent
//! has not destroyed yet.
//!
//! The kernel destroys an environment's whole subtree when it is reaped,
//! but a UNIX child may outlive its parent. So a process that exits while
//! its environment still has live children closes its files and gives back
//! its memory, leaves its status in its table entry for its parent's
//! `wait4` (as a zombie's), then only waits, yielding, for its child
//! environments to end, reaping them, before it calls the kernel's `exit`. Orphans get no
//! new parent (`getppid` says 1). Children are named by environment id
//! here; `wait` answers with Linux pids.

use super::table;
use crate::word::Word;
use crate::{fd, lock, vm};
use abi::tables::{env_state, EnvInfo};
use alloc::vec::Vec;
use user::{kinfo, sys};

/// A process this one created (fork), which may still exist (the kernel's
/// environment table says which do, without scanning it all), with the
/// stops and continues of it `wait4` has reported.
#[derive(Clone, Copy)]
pub(super) struct Child {
    pub(super) env: u32,
    pub(super) stops: u32,
    pub(super) conts: u32,
    /// Its status was taken by `wait4` while its environment still waited
    /// for children of its own: it is no longer ours to wait for, only to
    /// reap when it ends.
    pub(super) waited: bool,
}

/// The environments this process forked and has not reaped
/// (`proc::Process::children`).
pub struct Children(Vec<Child>);

impl Children {
    pub const NONE: Children = Children(Vec::new());
}

/// Runs `f` on this process's list of children.
pub(super) fn with_children<R>(f: impl FnOnce(&mut Vec<Child>) -> R) -> R {
    super::with_process(|p| f(&mut p.children.0))
}

/// A copy of the list (to walk while calling code that borrows the
/// process state).
pub(super) fn children() -> Vec<Child> {
    with_children(|c| c.clone())
}

/// Fork made environment `env`.
pub fn add_child(env: u32) {
    with_children(|c| c.push(Child { env, stops: 0, conts: 0, waited: false }));
}

/// A forked child's copy of the list names its siblings, not its
/// children; it is the only thread of its process.
pub fn forked_child() {
    with_children(|c| c.clear());
    FIRST_EXITED.set(false);
    super::signal::WORDS.group_exit.set(None);
}

/// Whether environment `env` is a child of this process, live or a zombie.
pub fn is_child(env: u32) -> bool {
    with_children(|c| c.iter().any(|c| c.env == env))
        && kinfo::env_by_id(env as u64).is_some_and(|e| e.parent == super::env())
}

/// A dead child's Linux wait status, from the kernel's table.
pub(super) fn status_of(e: &EnvInfo) -> i32 {
    if e.exit_code >= 0 {
        e.exit_code
    } else {
        super::signal::SIGKILL as i32
    }
}

/// Destroys a reaped child's environment and forgets it.
/// Returns the CPU time it used and its reaped children used, in
/// nanoseconds, now counted among ours (`times`' children's time).
pub(super) fn reap(env: u32) -> u64 {
    let ns = super::cpu_ns(env) + table::get(env).map_or(0, |e| e.children_ns);
    table::update_mine(|e| e.children_ns += ns);
    let _ = sys::env_destroy(env as u64);
    table::forget(env);
    with_children(|c| c.retain(|c| c.env != env));
    // Pages it shared with us copy-on-write are unmapped now.
    vm::sweep();
    ns
}

/// Ends this process with Linux wait status `status`.
pub fn exit(status: i32) -> ! {
    if !super::thread::is_first() {
        exit_group(status)
    }
    lock::acquire();
    super::thread::end_others();
    fd::close_all();
    vm::remove(0, u64::MAX);
    crate::log::flush();
    // A parent held for us (vfork) goes on now, as on Linux, not when our
    // own children have ended (busybox `timeout`'s middle process exits
    // leaving its watcher running: its parent stayed held until the
    // watcher killed it).
    super::vfork::release();
    // Children that have not ended keep this environment alive: nobody
    // will wait for them any more, so reap each as it ends, asleep between
    // their SIGCHLDs (spinning here would take the CPU from them). Our
    // parent may take our status meanwhile, as a zombie's (busybox
    // `timeout` waits for a middle process that leaves its watcher
    // running), and is told now, once.
    let told = !with_children(|c| c.is_empty());
    if told {
        table::update_mine(|e| (e.ended, e.status) = (1, status));
        let parent = table::mine().parent;
        let _ = sys::interrupt(parent as u64, 1 << super::signal::SIGCHLD, table::cred());
    }
    let mut yielded = false;
    loop {
        for c in children().iter().map(|c| c.env) {
            match kinfo::env_by_id(c as u64) {
                Some(e) if e.parent == super::env() && e.state != env_state::EXITED => {}
                _ => {
                    reap(c);
                }
            }
        }
        if with_children(|c| c.is_empty()) {
            break;
        }
        if yielded {
            // Signals mean nothing to a process that has exited; taking
            // them lets the sleep last until the next SIGCHLD.
            sys::interrupts_take();
            crate::sleep::pause(None);
        } else {
            yielded = true;
            lock::wait();
        }
    }
    lock::release();
    let first = kinfo::env_by_id(sys::self_id()).is_some_and(|e| e.parent == 0);
    // The first process's code powers the machine off: 0 means success.
    let code = if !first {
        status
    } else if status & 0x7f == 0 {
        (status >> 8) & 0xff
    } else {
        128 + (status & 0x7f)
    };
    // The parent gets SIGCHLD once this environment has ended; if it was
    // told above, only a wake-up (no second signal), which its waits and
    // its own exit's wait for us need to look again.
    let wake = if told { super::signal::CONSOLE_INPUT } else { 1 << super::signal::SIGCHLD };
    sys::exit_telling_parent(code, wake, table::cred())
}

/// Whether the first thread has called `exit` (it waits for the others;
/// the status it then ends the process with is `signal::Words::group_exit`).
static FIRST_EXITED: Word<bool> = Word::new(false);

/// `exit` of one thread. The last one (the first, waiting, or another)
/// ends the process with `status`.
pub fn exit_thread(status: i32) -> ! {
    lock::acquire();
    super::thread::exiting(lock::my_id() as u32);
    clear_tid();
    if super::thread::is_first() {
        // The process lives while other threads do: wait for them.
        FIRST_EXITED.set(true);
        while crate::lock::OTHER_THREADS.get() > 0 && super::signal::WORDS.group_exit.get().is_none() {
            reap_count();
            if crate::lock::OTHER_THREADS.get() == 0 {
                break;
            }
            lock::release();
            crate::sleep::pause(None);
            lock::acquire();
        }
        exit(super::signal::WORDS.group_exit.get().unwrap_or(status))
    }
    let left = crate::lock::OTHER_THREADS.get().saturating_sub(1);
    crate::lock::OTHER_THREADS.set(left);
    if left == 0 && FIRST_EXITED.get() {
        // The first thread waits for this: end the process with our status.
        ask_first(status);
    }
    end_self()
}

/// Counts live threads again (ended ones reaped).
fn reap_count() {
    super::thread::reap();
    crate::lock::OTHER_THREADS.set(super::thread::count());
}

/// `exit_group` (and a fatal signal) from any thread: the whole process
/// ends with `status`.
pub fn exit_group(status: i32) -> ! {
    if super::thread::is_first() {
        exit(status)
    }
    lock::acquire();
    ask_first(status);
    end_self()
}

/// Has the first thread end the process with `status` (it looks at
/// `group_exit` whenever it looks for signals).
fn ask_first(status: i32) {
    if super::signal::WORDS.group_exit.get().is_none() {
        super::signal::WORDS.group_exit.set(Some(status));
    }
    let _ = sys::interrupt(super::env() as u64, super::signal::CONSOLE_INPUT, super::table::cred());
}

/// Ends the running thread (not the first): its environment exits, the
/// process reaps it later.
fn end_self() -> ! {
    lock::release();
    sys::exit(0)
}

/// Clears the thread's id word and wakes one waiter on it, as Linux does
/// when a thread ends (`pthread_join`); first, the locks on its robust list
/// it still holds are marked owner-died (`futex::release_robust`).
fn clear_tid() {
    let (robust, at) = super::thread::take_exit_words();
    if robust != 0 {
        crate::futex::release_robust(robust, super::thread::tid());
    }
    if at != 0 && crate::uaccess::put(at, 0u32).is_ok() {
        crate::futex::wake(crate::futex::Key::private(at), 1, crate::futex::ALL);
    }
}
