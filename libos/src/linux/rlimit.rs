//! `getrlimit`, `setrlimit` and `prlimit64`: their arguments read and
//! checked in Linux's order, the values kept by `proc::limits`. A failed
//! call changes nothing (the old value is written before a new one is set;
//! Linux sets first).

use crate::errno::Errno;
use crate::errno::{LxResult, EINVAL, ESRCH};
use crate::proc::limits::{self, RLIM_NLIMITS};
use crate::uaccess;

/// The limit a `resource` argument (an `unsigned int`) names.
fn index(res: u64) -> Result<usize, Errno> {
    Some(res as u32 as usize).filter(|&r| r < RLIM_NLIMITS).ok_or(EINVAL)
}

/// `getrlimit(resource, old)`: `old` is not optional.
pub fn getrlimit(res: u64, old: u64) -> LxResult {
    uaccess::put(old, limits::get(index(res)?))
}

/// `setrlimit(resource, new)`: `new` is read first (EFAULT before EINVAL).
pub fn setrlimit(res: u64, new: u64) -> LxResult {
    let v = uaccess::get::<[u64; 2]>(new)?;
    let res = index(res)?;
    limits::check(res, v)?;
    limits::set(res, v);
    Ok(0)
}

/// `prlimit64(pid, resource, new, old)`, either address 0: not asked.
/// Another process's limits are in its own memory: ESRCH.
pub fn prlimit(pid: u64, res: u64, new: u64, old: u64) -> LxResult {
    let set = if new != 0 { Some(uaccess::get::<[u64; 2]>(new)?) } else { None };
    if pid as i32 != 0 && pid as i32 != crate::proc::pid() as i32 {
        return Err(ESRCH);
    }
    let res = index(res)?;
    if let Some(v) = set {
        limits::check(res, v)?;
    }
    if old != 0 {
        uaccess::put(old, limits::get(res))?;
    }
    if let Some(v) = set {
        limits::set(res, v);
    }
    Ok(0)
}
