//! Sending signals to other processes: to one by pid, to a process group,
//! to everyone. Signal `sig` is below 64 (0 only checks that a target
//! exists); a signal for this process itself is raised here, last.
//!
//! A SIGKILL to a group or to everyone has taken effect when `kill`
//! returns, as on Linux, where a killed task never runs user code again
//! (to one process it is only sent: a shell's `kill -9 $P; wait $P`
//! then hears of the end in its `wait`, as on Linux, not before it and
//! with a "Killed" line more): the sender gives each target
//! the CPU (a directed yield, the lock dropped) until it has ended. Queued
//! only, a target that owns no time slice of its own would die when its
//! turn came, and `kill -9 -1` against a fork bomb left hundreds alive
//! (and forking) when it returned. A target cannot fork meanwhile: the
//! walk below holds the lock, and a call started after it sees its
//! SIGKILL first.

use super::{deliver, env, pid, signal, table};
use crate::errno::Errno;
use crate::errno::{EPERM, ESRCH};
use abi::tables::env_state;
use alloc::vec::Vec;
use user::{kinfo, sys};

/// How long a sender waits for its SIGKILL's targets while none of them
/// ends (one that cannot, its lxrt wedged, must not hold the sender for
/// ever; a thousand that each take a while to end must all be waited for).
const KILL_WAIT_NS: u64 = 5_000_000_000;

/// Signal `sig` for the process of environment `target`, unchecked (the
/// library's own notices: dnotify's SIGIO); one that has ended takes none.
pub fn to_env(target: u32, sig: u32) {
    if target == env() {
        deliver::raise_self(sig);
    } else {
        let _ = signal::send(target, sig);
    }
}

/// Signal `sig` for the process with Linux pid `p`; ESRCH if it is gone
/// (a zombie is found, but takes no signal).
pub fn process(p: u32, sig: u32) -> Result<(), Errno> {
    let target = table::by_pid(p).ok_or(ESRCH)?.env;
    if sig != 0 && target == env() {
        deliver::raise_self(sig);
        return Ok(());
    }
    match send_checked(target, sig) {
        Err(EPERM) => Err(EPERM),
        // One that exits meanwhile takes no signal.
        _ => Ok(()),
    }
}

/// Sends `sig` to another process, if this one's user may signal it
/// (Linux's rule, `Ident::may_signal`): the kernel refuses the interrupt
/// otherwise, whatever this library believes. Signal 0 sends nothing, so
/// the same rule is asked of the kernel's identities here.
fn send_checked(target: u32, sig: u32) -> Result<(), Errno> {
    if sig == 0 {
        let them = sys::ident_get(target as u64).map_err(|_| ESRCH)?;
        return if crate::fs::perm::me().may_signal(&them) { Ok(()) } else { Err(EPERM) };
    }
    match signal::send(target, sig) {
        Err(abi::Error::NotPermitted) => Err(EPERM),
        r => r.map_err(|_| ESRCH),
    }
}

/// Signal `sig` for every member of process group `pgid` (the terminal's
/// Ctrl-C, `kill` of a negative pid).
pub fn group(pgid: u32, sig: u32) -> Result<(), Errno> {
    matching(sig, |e| e.pgid == pgid)
}

/// Signal `sig` for everyone but init and the caller.
pub fn all_but_init(sig: u32) -> Result<(), Errno> {
    let me = env();
    matching(sig, |e| pid::of(e.env) != 1 && e.env != me)
}

/// Signal `sig` for every live process whose entry `member` accepts;
/// ESRCH if there is none.
fn matching(sig: u32, member: impl Fn(&table::Entry) -> bool) -> Result<(), Errno> {
    let me = env();
    let (mut found, mut self_too, mut refused, mut reached) = (false, false, 0, 0);
    let mut sent = Vec::new();
    for (info, e) in table::all() {
        if !member(e) || info.state == env_state::EXITED {
            continue;
        }
        found = true;
        if e.env == me {
            self_too = true;
            reached += 1;
            continue;
        }
        // One that exits meanwhile takes no signal.
        match send_checked(e.env, sig) {
            Err(EPERM) => refused += 1,
            Ok(()) if sig != 0 && pid::of(e.env) != 1 => {
                sent.push(e.env);
                reached += 1;
            }
            _ => reached += 1,
        }
    }
    if !found {
        return Err(ESRCH);
    }
    // As Linux: an error only if the signal reached none of them.
    if refused > 0 && reached == 0 {
        return Err(EPERM);
    }
    if sig == signal::SIGKILL {
        until_ended(&sent);
    }
    if self_too && sig != 0 {
        deliver::raise_self(sig);
    }
    Ok(())
}

/// Gives each of `targets` (sent SIGKILL) the CPU until all have ended
/// (or `KILL_WAIT_NS` has passed without one ending).
fn until_ended(targets: &[u32]) {
    let alive = |t: u32| kinfo::env_by_id(t as u64).is_some_and(|e| e.state != env_state::EXITED);
    let mut left: Vec<u32> = targets.iter().copied().filter(|&t| alive(t)).collect();
    let mut deadline = kinfo::now_ns() + KILL_WAIT_NS;
    while !left.is_empty() && kinfo::now_ns() < deadline {
        for &t in &left {
            crate::lock::wait_for(t as u64);
        }
        let before = left.len();
        left.retain(|&t| alive(t));
        if left.len() < before {
            deadline = kinfo::now_ns() + KILL_WAIT_NS;
        }
    }
}

/// A read of the terminal from outside its foreground process group: as
/// on Linux, SIGTTIN for the reader's group, which stops it until it is
/// continued (in the foreground, after `fg`); EIO if the reader ignores or
/// blocks SIGTTIN, EINTR if it handles it.
pub fn await_foreground() -> Result<(), Errno> {
    use super::{signal, table};
    use crate::obj::console;
    loop {
        let (fg, mine) = (console::foreground(), table::mine().pgid);
        if !console::is_tty() || fg == 0 || fg == mine {
            return Ok(());
        }
        if signal::ignored_or_blocked(signal::SIGTTIN) {
            return Err(crate::errno::EIO);
        }
        let _ = group(mine, signal::SIGTTIN);
        if deliver::pending() {
            return Err(crate::errno::EINTR);
        }
    }
}

/// The terminals' job control (`obj::ldisc::Jobs`): control characters
/// signal the foreground group, or everyone but init without one.
pub static JOBS: crate::obj::ldisc::Jobs = crate::obj::ldisc::Jobs {
    signal_group: |pgrp, sig| {
        let _ = if pgrp != 0 { group(pgrp, sig) } else { all_but_init(sig) };
    },
    signal_others: |pgrp, sig| {
        let me = env();
        let _ = matching(sig, |e| e.pgid == pgrp && e.env != me);
    },
    own_group: || super::table::mine().pgid,
    session: || {
        let me = super::table::mine();
        (super::pid(), me.sid)
    },
};
