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
//! it still has live children hands them to init (`sys::env_move`: the
//! kernel moves each subtree under the first process, an ancestor of us
//! all) and ends at once, as on Linux; init reaps them like its own
//! children (`adopted`). Init itself, whose end powers the machine off,
//! waits for its children instead (as does a process whose children
//! cannot be moved: a limit or an interposer between). Children are named
//! by environment id here; `wait` answers with Linux pids.

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
    /// Handed to init by a process that ended before it (`adopt`).
    pub(super) adopted: bool,
}

/// The environments this process forked and has not reaped
/// (`proc::Process::children`), and, in init, the count of processes
/// handed to it (`shared::handed`) when it last looked for them.
pub struct Children(Vec<Child>, u32);

impl Children {
    pub const NONE: Children = Children(Vec::new(), 0);
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
    with_children(|c| c.push(Child { env, stops: 0, conts: 0, adopted: false }));
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
    is_listed(env) && kinfo::env_by_id(env as u64).is_some_and(|e| e.parent == super::env())
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
    crate::obj::pty::session_ended();
    vm::leave();
    crate::log::flush();
    // A parent held for us (vfork) goes on now, as on Linux, not when our
    // own children have ended (busybox `timeout`'s middle process exits
    // leaving its watcher running: its parent stayed held until the
    // watcher killed it).
    super::vfork::release();
    // Live children go to init; zombies are reaped here.
    if !super::is_init() {
        for c in children().iter().map(|c| c.env) {
            let live = kinfo::env_by_id(c as u64)
                .is_some_and(|e| e.parent == super::env() && e.state != env_state::EXITED);
            if !live {
                reap(c);
            } else if sys::env_move(c as u64, crate::env::first() as u64).is_ok() {
                crate::shared::handed().fetch_add(1, core::sync::atomic::Ordering::Relaxed);
                // Init's now (a child that ends before the move stays ours,
                // and is reaped below: its SIGCHLD came here).
                table::forget(c);
                with_children(|cs| cs.retain(|x| x.env != c));
            }
        }
    }
    // Children that have not ended keep this environment alive: nobody
    // will wait for them any more, so reap each as it ends, asleep between
    // their SIGCHLDs (spinning here would take the CPU from them).
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
    // The parent gets SIGCHLD once this environment has ended.
    sys::exit_telling_parent(code, 1 << super::signal::SIGCHLD, table::cred())
}

/// Init takes as its own the processes other processes handed it as they
/// ended (`exit`): children in the kernel's table it did not fork. It
/// looks (a scan of the table) only when more have been handed to it.
pub(super) fn adopt() {
    let handed = crate::shared::handed().load(core::sync::atomic::Ordering::Relaxed);
    if super::with_process(|p| core::mem::replace(&mut p.children.1, handed)) == handed {
        return;
    }
    for e in handed_to_init() {
        if !is_listed(e.id) {
            with_children(|c| c.push(Child { env: e.id, stops: 0, conts: 0, adopted: true }));
        }
    }
}

/// The processes in the kernel's table that are init's (the caller's)
/// children without being its threads.
fn handed_to_init() -> impl Iterator<Item = EnvInfo> {
    let me = super::env();
    let threads = super::thread::envs();
    kinfo::envs().filter(move |e| {
        e.id != 0 && e.parent == me && e.state != env_state::FREE && !threads.contains(&e.id)
    })
}

/// Init reaps the processes handed to it that have ended, as soon as
/// their SIGCHLD comes, as Linux's init programs do in their handler for
/// it: a program that never waits (a shell running a script as PID 1)
/// otherwise kept them, and their environments, until it did. Those it
/// forked itself wait for its own `wait`.
pub fn reap_adopted() {
    adopt();
    for c in children().into_iter().filter(|c| c.adopted) {
        if kinfo::env_by_id(c.env as u64)
            .is_none_or(|e| e.parent != super::env() || e.state == env_state::EXITED)
        {
            reap(c.env);
        }
    }
}

pub(super) fn is_listed(env: u32) -> bool {
    with_children(|c| c.iter().any(|c| c.env == env))
}

/// Whether the first thread has called `exit` (it waits for the others;
/// the status it then ends the process with is `signal::Words::group_exit`).
static FIRST_EXITED: Word<bool> = Word::new(false);

/// `exit` of one thread. The last one (the first, waiting, or another)
/// ends the process with `status`.
pub fn exit_thread(status: i32) -> ! {
    lock::acquire();
    super::thread::exiting(lock::my_id() as u32);
    super::thread::end_as_linux_self();
    if super::thread::is_first() {
        // The process lives while other threads do: wait for them.
        FIRST_EXITED.set(true);
        while crate::lock::OTHER_THREADS.get() > 0 && super::signal::WORDS.group_exit.get().is_none() {
            reap_count();
            if crate::lock::OTHER_THREADS.get() == 0 {
                break;
            }
            // With the lock: the sleep drops it only around the kernel's
            // sleep, after taking its predicate from the cache, which
            // another thread's sleep may be using meanwhile (lx_threads:
            // "the predicate cache borrowed twice").
            crate::sleep::pause(None);
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
    let _ = super::signal::interrupt(super::env(), super::signal::CONSOLE_INPUT);
}

/// Ends the running thread (not the first): its environment exits, the
/// process reaps it later.
fn end_self() -> ! {
    lock::release();
    sys::exit(0)
}
