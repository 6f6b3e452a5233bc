//! Ending a process and waiting for children.
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
use crate::errno::{ECHILD, EINTR};
use crate::{fd, lock, vm};
use abi::tables::{env_state, EnvInfo};
use alloc::vec::Vec;
use user::{kinfo, sys};

/// A process this one created (fork), which may still exist (the kernel's
/// environment table says which do, without scanning it all), with the
/// stops and continues of it `wait4` has reported.
#[derive(Clone, Copy)]
struct Child {
    env: u32,
    stops: u32,
    conts: u32,
    /// Handed to init by a process that ended before it (`adopt`).
    adopted: bool,
}

/// The environments this process forked and has not reaped
/// (`proc::Process::children`), and, in init, the count of processes
/// handed to it (`shared::handed`) when it last looked for them.
pub struct Children(Vec<Child>, u32);

impl Children {
    pub const NONE: Children = Children(Vec::new(), 0);
}

/// Runs `f` on this process's list of children.
fn with_children<R>(f: impl FnOnce(&mut Vec<Child>) -> R) -> R {
    super::with_process(|p| f(&mut p.children.0))
}

/// A copy of the list (to walk while calling code that borrows the
/// process state).
fn children() -> Vec<Child> {
    with_children(|c| c.clone())
}

/// Fork made environment `env`.
pub fn add_child(env: u32) {
    with_children(|c| c.push(Child { env, stops: 0, conts: 0, adopted: false }));
}

/// A forked child's copy of the list names its siblings, not its children.
pub fn forked_child() {
    with_children(|c| c.clear());
}

/// Whether environment `env` is a child of this process, live or a zombie.
pub fn is_child(env: u32) -> bool {
    is_listed(env) && kinfo::env_by_id(env as u64).is_some_and(|e| e.parent == super::env())
}

/// A dead child's Linux wait status, from the kernel's table.
fn status_of(e: &EnvInfo) -> i32 {
    if e.exit_code >= 0 {
        e.exit_code
    } else {
        super::signal::SIGKILL as i32
    }
}

/// Destroys a reaped child's environment and forgets it.
/// Returns the CPU time it used and its reaped children used, in
/// nanoseconds, now counted among ours (`times`' children's time).
fn reap(env: u32) -> u64 {
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
        super::thread::exit_group(status)
    }
    lock::acquire();
    super::thread::end_others();
    fd::close_all();
    vm::remove(0, u64::MAX);
    crate::log::flush();
    // Live children go to init; zombies are reaped here.
    if !super::is_init() {
        for c in children().iter().map(|c| c.env) {
            let live = kinfo::env_by_id(c as u64)
                .is_some_and(|e| e.parent == super::env() && e.state != env_state::EXITED);
            if !live {
                reap(c);
            } else if sys::env_move(c as u64, super::vars().first.get() as u64).is_ok() {
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
            crate::wait::pause(None);
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

pub const WNOHANG: u64 = 1;
/// `WSTOPPED` for `waitid`.
pub const WUNTRACED: u64 = 2;
pub const WEXITED: u64 = 4;
pub const WCONTINUED: u64 = 8;
pub const WNOWAIT: u64 = 0x0100_0000;
/// Linux's thread-group flags, accepted and meaning nothing here (every
/// child is a process).
pub const WTHREAD_FLAGS: u64 = 0xe000_0000;

/// `wait4` and `waitid`: waits for a child matching `pid` (-1 any, > 0
/// that one, 0 or < -1 a process group) to end (`WEXITED`) — or, with
/// `WUNTRACED` / `WCONTINUED`, to stop or continue; returns its pid,
/// status and, if it ended, the CPU time it and its children used
/// (nanoseconds). With `WNOWAIT` the child is left as it was, to be
/// waited for again.
pub fn wait(pid: i64, options: u64) -> Result<(i64, i32, u64), i64> {
    let my_pgid = table::mine().pgid;
    let matches = |c: u32| match pid {
        -1 => true,
        p if p > 0 => super::pid::of(c) as i64 == p,
        p => {
            let group = if p == 0 { my_pgid } else { -p as u32 };
            table::get(c).is_some_and(|e| e.pgid == group)
        }
    };
    let mut yielded = false;
    loop {
        if super::is_init() {
            adopt();
        }
        let mut any = false;
        for c in children() {
            // (One init reaped meanwhile, `reap_adopted`, is gone.)
            if !matches(c.env) || !is_listed(c.env) {
                continue;
            }
            any = true;
            let pid = super::pid::of(c.env) as i64;
            let status = match kinfo::env_by_id(c.env as u64) {
                Some(e) if e.state == env_state::EXITED => status_of(&e),
                Some(_) => match job_change(c, options) {
                    Some((s, seen)) => {
                        if options & WNOWAIT == 0 {
                            with_children(|cs| {
                                cs.iter_mut().filter(|x| x.env == c.env).for_each(|x| *x = seen)
                            });
                        }
                        return Ok((pid, s, 0));
                    }
                    None => continue,
                },
                // Destroyed from outside.
                None => super::signal::SIGKILL as i32,
            };
            if options & WEXITED == 0 {
                continue;
            }
            let ns = if options & WNOWAIT == 0 { reap(c.env) } else { 0 };
            return Ok((pid, status, ns));
        }
        if !any {
            return Err(ECHILD);
        }
        if options & WNOHANG != 0 {
            return Ok((0, 0, 0));
        }
        // Let the children run once; then sleep until a signal (a child's
        // SIGCHLD) comes, so that waiting costs the CPU nothing: children
        // that own no time slice run only in time nobody else uses.
        if yielded {
            crate::wait::pause(None);
        } else {
            yielded = true;
            lock::wait();
        }
        crate::obj::console::poll_interrupt();
        if super::signal::pending_except(1 << super::signal::SIGCHLD) {
            return Err(EINTR);
        }
    }
}

/// Init takes as its own the processes other processes handed it as they
/// ended (`exit`): children in the kernel's table it did not fork. It
/// looks (a scan of the table) only when more have been handed to it.
fn adopt() {
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
    (0..abi::tables::ENV_SLOTS).map(kinfo::env).filter(move |e| {
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

fn is_listed(env: u32) -> bool {
    with_children(|c| c.iter().any(|c| c.env == env))
}

/// A stop (`WUNTRACED`) or continue (`WCONTINUED`) of live child `c` not
/// reported yet, as a wait status, and `c` with it recorded as reported.
fn job_change(mut c: Child, options: u64) -> Option<(i32, Child)> {
    let e = table::get(c.env)?;
    if options & WUNTRACED != 0 && e.stopped != 0 && e.stops != c.stops {
        c.stops = e.stops;
        return Some(((e.stop_sig as i32) << 8 | 0x7f, c));
    }
    if options & WCONTINUED != 0 && e.conts != c.conts {
        c.conts = e.conts;
        return Some((0xffff, c));
    }
    None
}
