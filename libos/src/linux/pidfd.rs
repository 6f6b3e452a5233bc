//! The pidfd calls (`obj/pidfd.rs`): `pidfd_open`, `pidfd_send_signal`
//! (to a pidfd or, as Linux allows, a `/proc/PID` directory's
//! descriptor), and the pidfd `waitid(P_PIDFD)` names.

use crate::errno::{Errno, LxResult, EBADF, EINVAL, ESRCH};
use crate::fd;
use crate::obj::{flags::NONBLOCK, pidfd, Kind};
use crate::proc::{kill, table};

/// `pidfd_open(pid, flags)`: a descriptor (close-on-exec, as Linux makes
/// it) naming process `pid`; flags may be only `PIDFD_NONBLOCK`.
pub fn open(pid: u64, flags: u64) -> LxResult {
    if flags & !(NONBLOCK as u64) != 0 || pid as i32 <= 0 || pid >> 32 != 0 {
        return Err(EINVAL);
    }
    let e = table::by_pid(pid as u32).ok_or(ESRCH)?;
    let f = pidfd::create(e.env, pid as u32, flags as u32)?;
    fd::open(f, true)
}

/// The pid descriptor `n` names: a pidfd's, or a `/proc/PID` directory's
/// (`for_signal`: only `pidfd_send_signal` takes those). EBADF if it is not
/// open or names no process, as Linux.
fn pid_of(n: i64, for_signal: bool) -> Result<(u32, Option<u32>), Errno> {
    let d = fd::get_raw(n)?;
    if d.file.kind() == Kind::PidFd {
        let (env, pid) = pidfd::target(d.file);
        return Ok((pid, Some(env)));
    }
    if !for_signal || d.file.kind() != Kind::Dir {
        return Err(EBADF);
    }
    // SAFETY: the descriptor keeps the file live; read only.
    let ino = unsafe { fd::file(&d) }.ino;
    crate::fs::procfs::pid_of_dir(ino).map(|pid| (pid, None)).ok_or(EBADF)
}

/// `pidfd_send_signal(pidfd, sig, info, flags)`: `kill` of the process it
/// names. No flags are defined; a `siginfo_t` of the caller's (`info`) is
/// not taken (EINVAL): the signal goes as `kill` sends it.
pub fn send_signal(n: i64, sig: u64, info: u64, flags: u64) -> LxResult {
    if flags != 0 {
        return Err(EINVAL);
    }
    let (pid, env) = pid_of(n, true)?;
    let sig = u32::try_from(sig).ok().filter(|&s| s < 64).ok_or(EINVAL)?;
    if info != 0 {
        return Err(EINVAL);
    }
    // The process it named has ended (its pid may be another's by now).
    if env.is_some_and(pidfd::ended) {
        return Err(ESRCH);
    }
    kill::process(pid, sig)?;
    Ok(0)
}

/// The pid `waitid(P_PIDFD, n, ..)` waits for.
pub fn waited(n: i64) -> Result<i64, Errno> {
    pid_of(n, false).map(|(pid, _)| pid as i64)
}
