//! Resource limits (`getrlimit`, `setrlimit`, `prlimit64`): each process
//! has its own soft and hard value of each, inherited at fork and kept
//! across exec (they are lxrt's per-process state), as on Linux.
//!
//! `RLIMIT_NPROC` (`ulimit -u`) is enforced: a process may not make a
//! process or a thread while the tasks its user has number its soft limit
//! or more (Linux's `copy_process`: EAGAIN). Every process on Veneer is
//! root's, so its user's tasks are every environment in use, which the
//! kernel counts (`KernelInfo::envs_used`: no scan); Linux exempts root,
//! but root is nominal here, and a limit no program can escape is what
//! bounds a fork bomb (`ulimit -u 300; f() { f | f & }; f` stops at 300
//! tasks and leaves the rest of the machine's 4,096 to others). The
//! default is the whole table, the machine's `threads-max`. The other
//! limits are kept and reported as set; `RLIMIT_NOFILE` cannot be raised
//! past the descriptor table (EPERM, as past Linux's `nr_open`).

use crate::errno::{LxResult, EAGAIN, EINVAL, EPERM, ESRCH};
use crate::uaccess;
use user::kinfo;

const RLIMIT_STACK: u64 = 3;
const RLIMIT_NPROC: u64 = 6;
const RLIMIT_NOFILE: u64 = 7;
/// Linux's number of limits (`RLIM_NLIMITS`).
const RLIM_NLIMITS: usize = 16;
const RLIM_INFINITY: u64 = u64::MAX;

/// Soft and hard value of each limit (`proc::Process::limits`).
pub struct Limits([[u64; 2]; RLIM_NLIMITS]);

impl Limits {
    pub const INITIAL: Limits = {
        let mut l = [[RLIM_INFINITY; 2]; RLIM_NLIMITS];
        l[RLIMIT_STACK as usize] = [crate::layout::STACK_MAX; 2];
        l[RLIMIT_NOFILE as usize] = [crate::fd::MAX_FDS as u64; 2];
        l[RLIMIT_NPROC as usize] = [abi::tables::ENV_SLOTS as u64; 2];
        Limits(l)
    };
}

fn get(res: usize) -> [u64; 2] {
    super::with_process(|p| p.limits.0[res])
}

/// EAGAIN if this process may not make another process or thread now.
pub fn may_create() -> Result<(), i64> {
    if kinfo::kernel().envs_used >= get(RLIMIT_NPROC as usize)[0] {
        return Err(EAGAIN);
    }
    Ok(())
}

/// `prlimit64` (and `getrlimit`, `setrlimit`): reads limit `res` into
/// `old` and sets it from `new` (either address 0: not asked), all checks
/// first. Another process's limits cannot be reached here (ESRCH).
pub fn prlimit(pid: u64, res: u64, new: u64, old: u64) -> LxResult {
    if pid != 0 && pid != super::pid() as u64 {
        return Err(ESRCH);
    }
    let i = usize::try_from(res).ok().filter(|&i| i < RLIM_NLIMITS).ok_or(EINVAL)?;
    let set = if new != 0 { Some(uaccess::get::<[u64; 2]>(new)?) } else { None };
    if let Some([soft, hard]) = set {
        if soft > hard {
            return Err(EINVAL);
        }
        if i == RLIMIT_NOFILE as usize && hard > crate::fd::MAX_FDS as u64 {
            return Err(EPERM);
        }
    }
    if old != 0 {
        uaccess::put(old, get(i))?;
    }
    if let Some(v) = set {
        super::with_process(|p| p.limits.0[i] = v);
    }
    Ok(0)
}
