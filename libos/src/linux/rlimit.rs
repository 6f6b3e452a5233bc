//! Resource limits (`getrlimit`, `setrlimit`, `prlimit64`): a soft and a
//! hard limit per resource, kept by each process, inherited by its
//! children and across exec. Every process is root, so a hard limit may be
//! raised; a soft one may not pass its hard one. `RLIMIT_NOFILE` is
//! enforced (the descriptor table's `fd::limit`, at most `fd::MAX_FDS`, as
//! Linux's `nr_open`); the others are kept and reported for programs that
//! size themselves by them, but not enforced.

use crate::errno::{LxResult, EFAULT, EINVAL, EPERM, ESRCH};
use crate::scoped::Scoped;
use crate::{fd, uaccess};

/// Linux's resources, 0 (`RLIMIT_CPU`) to 15 (`RLIMIT_RTTIME`).
const RLIM_NLIMITS: usize = 16;
const RLIMIT_STACK: usize = 3;
const RLIMIT_CORE: usize = 4;
const RLIMIT_NOFILE: usize = 7;
const RLIMIT_MEMLOCK: usize = 8;
const RLIMIT_SIGPENDING: usize = 11;
const RLIMIT_MSGQUEUE: usize = 12;
const RLIMIT_NICE: usize = 13;
const RLIMIT_RTPRIO: usize = 14;
const INF: u64 = u64::MAX;

/// Linux's defaults for a process started by init (the stack: lxrt's).
const DEFAULTS: [[u64; 2]; RLIM_NLIMITS] = {
    let mut l = [[INF; 2]; RLIM_NLIMITS];
    l[RLIMIT_STACK] = [crate::layout::STACK_MAX, INF];
    l[RLIMIT_CORE] = [0, INF];
    l[RLIMIT_NOFILE] = [fd::MAX_FDS as u64; 2];
    l[RLIMIT_MEMLOCK] = [8 << 20; 2];
    l[RLIMIT_SIGPENDING] = [crate::fs::procstatus::SIGPENDING; 2];
    l[RLIMIT_MSGQUEUE] = [819_200; 2];
    l[RLIMIT_NICE] = [0; 2];
    l[RLIMIT_RTPRIO] = [0; 2];
    l
};

/// This process's limits (lxrt's statics: a fork copies them, exec keeps them).
static LIMITS: Scoped<[[u64; 2]; RLIM_NLIMITS]> = Scoped::new("resource limits", DEFAULTS);

/// `getrlimit(resource, old)`: `old` is not optional.
pub fn getrlimit(res: u64, old: u64) -> LxResult {
    if res < RLIM_NLIMITS as u64 && old == 0 {
        return Err(EFAULT);
    }
    prlimit(0, res, 0, old)
}

/// `setrlimit(resource, new)`: `new` is not optional.
pub fn setrlimit(res: u64, new: u64) -> LxResult {
    if res < RLIM_NLIMITS as u64 && new == 0 {
        return Err(EFAULT);
    }
    prlimit(0, res, new, 0)
}

/// `prlimit64(pid, resource, new, old)` (`getrlimit`: no `new`;
/// `setrlimit`: no `old`): Linux's checks in its order.
pub fn prlimit(pid: u64, res: u64, new: u64, old: u64) -> LxResult {
    let res = usize::try_from(res).ok().filter(|&r| r < RLIM_NLIMITS).ok_or(EINVAL)?;
    let new: Option<[u64; 2]> = if new != 0 { Some(uaccess::get(new)?) } else { None };
    if let Some([cur, max]) = new {
        if cur > max {
            return Err(EINVAL);
        }
        if res == RLIMIT_NOFILE && max > fd::MAX_FDS as u64 {
            return Err(EPERM);
        }
    }
    // Another process's limits are in its own memory.
    if pid as i32 != 0 && pid as u32 != crate::proc::pid() {
        return Err(ESRCH);
    }
    let was = LIMITS.with(|l| l[res]);
    if old != 0 {
        uaccess::put(old, was)?;
    }
    if let Some(v) = new {
        LIMITS.with(|l| l[res] = v);
        if res == RLIMIT_NOFILE {
            fd::set_limit(v[0] as usize);
        }
    }
    Ok(0)
}
