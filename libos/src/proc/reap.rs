//! `wait4` and `waitid`: waiting for a child to end, stop or continue,
//! reaping it (`exit::reap`), answering with its Linux pid.

use super::exit::{adopt, children, is_listed, reap, status_of, with_children, Child};
use super::table;
use crate::errno::Errno;
use crate::errno::{ECHILD, EINTR};
use crate::lock;
use abi::tables::env_state;
use user::kinfo;

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
pub fn wait(pid: i64, options: u64) -> Result<(i64, i32, u64), Errno> {
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
            crate::sleep::pause(None);
        } else {
            yielded = true;
            lock::wait();
        }
        crate::obj::console::poll_interrupt();
        if super::deliver::pending_except(1 << super::signal::SIGCHLD) {
            return Err(EINTR);
        }
    }
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
