//! Credentials. Every process is root (uid and gid 0), and the calls that
//! change them answer as they do for root, changing nothing Veneer
//! enforces; what they check they check as Linux does (bad pointers, too
//! many groups). The supplementary groups a process sets are kept (none
//! at first, as init's on Linux), inherited by its children and across
//! exec, and reported.

use crate::errno::{LxResult, EINVAL};
use crate::scoped::Scoped;
use crate::uaccess;
use alloc::vec::Vec;

/// This process's supplementary groups (lxrt's private memory: a fork
/// copies them, exec keeps them).
static GROUPS: Scoped<Vec<u32>> = Scoped::new("supplementary groups", Vec::new());

/// Linux's `NGROUPS_MAX`.
const NGROUPS_MAX: u64 = 65536;

/// `getresuid`, `getresgid`: real, effective and saved ids, all 0.
pub fn getres(r: u64, e: u64, s: u64) -> LxResult {
    for p in [r, e, s] {
        uaccess::put(p, 0u32)?;
    }
    Ok(0)
}

/// `getgroups(size, list)`: how many groups there are (size 0), or the
/// groups, EINVAL if they do not fit.
pub fn getgroups(size: u64, list: u64) -> LxResult {
    let size = size as i32;
    if size < 0 {
        return Err(EINVAL);
    }
    let groups = GROUPS.with(|g| g.clone());
    if size == 0 {
        return Ok(groups.len() as i64);
    }
    if (size as usize) < groups.len() {
        return Err(EINVAL);
    }
    let bytes: Vec<u8> = groups.iter().flat_map(|g| g.to_ne_bytes()).collect();
    uaccess::write(list, &bytes)?;
    Ok(groups.len() as i64)
}

/// `setgroups(size, list)`: root may set any list of at most
/// `NGROUPS_MAX`; a list that cannot be read changes nothing (EFAULT).
pub fn setgroups(size: u64, list: u64) -> LxResult {
    if size as i32 as i64 > NGROUPS_MAX as i64 || (size as i32) < 0 {
        return Err(EINVAL);
    }
    let bytes = if size > 0 { uaccess::bytes(list, size * 4)? } else { &[][..] };
    let groups: Vec<u32> =
        bytes.chunks_exact(4).map(|c| u32::from_ne_bytes([c[0], c[1], c[2], c[3]])).collect();
    GROUPS.with(|g| *g = groups);
    Ok(0)
}
