//! Resource limits: each process has its own soft and hard value of each
//! of Linux's 16 resources, inherited at fork and kept across exec (they
//! are lxrt's per-process state), as on Linux. The personality's calls
//! (`linux::rlimit`: `getrlimit`, `setrlimit`, `prlimit64`) read their
//! arguments and reach the values here; this module keeps the values and
//! the rules every setting obeys.
//!
//! Every process is root, so a hard limit may be raised; a soft one may
//! not pass its hard one. Enforced:
//! - `RLIMIT_NPROC` (`ulimit -u`): a process may not make a process or a
//!   thread while the tasks its user has number its soft limit or more
//!   (Linux's `copy_process`: EAGAIN). Every process on Veneer is root's,
//!   so its user's tasks are every environment in use, which the kernel
//!   counts (`KernelInfo::envs_used`: no scan); Linux exempts root, but
//!   root is nominal here, and a limit no program can escape is what
//!   bounds a fork bomb (`ulimit -u 300; f() { f | f & }; f` stops at 300
//!   tasks and leaves the rest of the machine's 4,096 to others). The
//!   default is the whole table, the machine's `threads-max`.
//! - `RLIMIT_NOFILE` bounds the descriptor table (`fd::limit`) and cannot
//!   be raised past it (EPERM, as past Linux's `nr_open`).
//!
//! The others are kept and reported as set, for programs that size
//! themselves by them.

use crate::errno::Errno;
use crate::errno::{EAGAIN, EINVAL, EPERM};
use crate::fd;
use user::kinfo;

/// Linux's number of limits (`RLIM_NLIMITS`).
pub const RLIM_NLIMITS: usize = 16;
const RLIMIT_STACK: usize = 3;
const RLIMIT_CORE: usize = 4;
const RLIMIT_NPROC: usize = 6;
const RLIMIT_NOFILE: usize = 7;
const RLIMIT_MEMLOCK: usize = 8;
const RLIMIT_SIGPENDING: usize = 11;
const RLIMIT_MSGQUEUE: usize = 12;
const RLIMIT_NICE: usize = 13;
const RLIMIT_RTPRIO: usize = 14;
const RLIM_INFINITY: u64 = u64::MAX;

/// Soft and hard value of each limit (`proc::Process::limits`).
pub struct Limits([[u64; 2]; RLIM_NLIMITS]);

impl Limits {
    /// Linux's defaults for a process started by init (the stack: lxrt's;
    /// processes: the environment table).
    pub const INITIAL: Limits = {
        let mut l = [[RLIM_INFINITY; 2]; RLIM_NLIMITS];
        l[RLIMIT_STACK] = [crate::layout::STACK_MAX, RLIM_INFINITY];
        l[RLIMIT_CORE] = [0, RLIM_INFINITY];
        l[RLIMIT_NPROC] = [abi::tables::ENV_SLOTS as u64; 2];
        l[RLIMIT_NOFILE] = [fd::MAX_FDS as u64; 2];
        l[RLIMIT_MEMLOCK] = [8 << 20; 2];
        l[RLIMIT_SIGPENDING] = [crate::fs::procstatus::SIGPENDING; 2];
        l[RLIMIT_MSGQUEUE] = [819_200; 2];
        l[RLIMIT_NICE] = [0; 2];
        l[RLIMIT_RTPRIO] = [0; 2];
        Limits(l)
    };
}

/// Soft and hard value of limit `res` (below `RLIM_NLIMITS`).
pub fn get(res: usize) -> [u64; 2] {
    super::with_process(|p| p.limits.0[res])
}

/// Whether `[soft, hard]` may be set as limit `res`: EINVAL if the soft
/// value passes the hard one, EPERM for descriptors past the table.
pub fn check(res: usize, [soft, hard]: [u64; 2]) -> Result<(), Errno> {
    if soft > hard {
        return Err(EINVAL);
    }
    if res == RLIMIT_NOFILE && hard > fd::MAX_FDS as u64 {
        return Err(EPERM);
    }
    Ok(())
}

/// Sets limit `res` to a value `check` allowed.
pub fn set(res: usize, v: [u64; 2]) {
    super::with_process(|p| p.limits.0[res] = v);
    if res == RLIMIT_NOFILE {
        fd::set_limit(v[0] as usize);
    }
}

/// EAGAIN if this process may not make another process or thread now.
pub fn may_create() -> Result<(), Errno> {
    if kinfo::kernel().envs_used >= get(RLIMIT_NPROC)[0] {
        return Err(EAGAIN);
    }
    Ok(())
}
