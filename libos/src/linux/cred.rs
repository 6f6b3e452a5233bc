//! Credentials. Every process is root (uid and gid 0, no supplementary
//! groups, as init's are on Linux), and the calls that change them answer
//! as they do for root, changing nothing Veneer enforces; what they check
//! they check as Linux does (bad pointers, too many groups).

use crate::errno::{LxResult, EINVAL};
use crate::uaccess;

/// Linux's `NGROUPS_MAX`.
const NGROUPS_MAX: u64 = 65536;

/// `getresuid`, `getresgid`: real, effective and saved ids, all 0.
pub fn getres(r: u64, e: u64, s: u64) -> LxResult {
    for p in [r, e, s] {
        uaccess::put(p, 0u32)?;
    }
    Ok(0)
}

/// `getgroups`: none (a size too small for none cannot happen).
pub fn getgroups(size: u64) -> LxResult {
    if (size as i32) < 0 {
        return Err(EINVAL);
    }
    Ok(0)
}

/// `setgroups`: root may set any list of at most `NGROUPS_MAX`; it is
/// read (EFAULT if it cannot be) and not kept.
pub fn setgroups(size: u64, list: u64) -> LxResult {
    if size > NGROUPS_MAX {
        return Err(EINVAL);
    }
    if size > 0 {
        uaccess::bytes(list, size * 4)?;
    }
    Ok(0)
}
