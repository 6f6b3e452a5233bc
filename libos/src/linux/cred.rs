//! Credentials: Linux's id calls over the identity the kernel holds for
//! this process (`abi::ident`, docs/protection.md). Nothing is kept here:
//! every call reads the kernel's, and a change is the kernel's
//! `ident_set`, which applies the same rules again, so a library (or a
//! program writing its memory) that skips these checks gains nothing.

use crate::errno::{LxResult, EFAULT, EINVAL, EPERM};
use crate::uaccess;
use abi::ident::{Ident, EFFECTIVE, NGROUPS, REAL, SAVED};
use abi::Error;
use user::sys;

/// "Leave this id as it is" (`-1` as a `u32`).
const KEEP: u32 = u32::MAX;

fn ident() -> Ident {
    crate::fs::perm::me()
}

/// Asks the kernel for `new`.
fn set(new: &Ident) -> LxResult {
    match sys::ident_set(new) {
        Ok(_) => Ok(0),
        Err(Error::BadLength) => Err(EINVAL),
        Err(Error::BadAddress) => Err(EFAULT),
        Err(_) => Err(EPERM),
    }
}

/// Which of the two id triples a call names.
#[derive(Clone, Copy)]
pub enum Ids {
    User,
    Group,
}

fn ids(id: &mut Ident, which: Ids) -> &mut [u32; 3] {
    match which {
        Ids::User => &mut id.uid,
        Ids::Group => &mut id.gid,
    }
}

/// `getuid`, `geteuid`, `getgid`, `getegid`: one id.
pub fn get(which: Ids, i: usize) -> LxResult {
    Ok(ids(&mut ident(), which)[i] as i64)
}

/// `getresuid`, `getresgid`: real, effective and saved.
pub fn getres(which: Ids, r: u64, e: u64, s: u64) -> LxResult {
    let v = *ids(&mut ident(), which);
    for (p, id) in [r, e, s].into_iter().zip(v) {
        uaccess::put(p, id)?;
    }
    Ok(0)
}

/// Root: the capability to set any id (Linux's `CAP_SETUID`/`CAP_SETGID`,
/// which only uid 0 holds on Veneer).
fn privileged(id: &Ident) -> bool {
    id.uid[EFFECTIVE] == 0
}

/// `setuid`, `setgid`: root sets all three; anyone else only the
/// effective id, to its real or saved one.
pub fn set_one(which: Ids, v: u64) -> LxResult {
    let v = u32::try_from(v).ok().filter(|&v| v != KEEP).ok_or(EINVAL)?;
    let mut id = ident();
    let root = privileged(&id);
    let t = ids(&mut id, which);
    if root {
        *t = [v; 3];
    } else if v == t[REAL] || v == t[SAVED] {
        t[EFFECTIVE] = v;
    } else {
        return Err(EPERM);
    }
    set(&id)
}

/// `setreuid`, `setregid` (-1 keeps an id): the saved id becomes the new
/// effective one when the real one is set or the effective one set to
/// something other than the old real one.
pub fn setre(which: Ids, r: u64, e: u64) -> LxResult {
    let (r, e) = (r as u32, e as u32);
    let mut id = ident();
    let root = privileged(&id);
    let t = ids(&mut id, which);
    let old = *t;
    if !root && (r != KEEP && r != old[REAL] && r != old[EFFECTIVE] || e != KEEP && !old.contains(&e)) {
        return Err(EPERM);
    }
    if r != KEEP {
        t[REAL] = r;
    }
    if e != KEEP {
        t[EFFECTIVE] = e;
    }
    if r != KEEP || e != KEEP && e != old[REAL] {
        t[SAVED] = t[EFFECTIVE];
    }
    set(&id)
}

/// `setresuid`, `setresgid` (-1 keeps an id): the kernel's own rule.
pub fn setres(which: Ids, r: u64, e: u64, s: u64) -> LxResult {
    let mut id = ident();
    let t = ids(&mut id, which);
    for (i, v) in [r, e, s].into_iter().enumerate() {
        if v as u32 != KEEP {
            t[i] = v as u32;
        }
    }
    set(&id)
}

/// `setfsuid`, `setfsgid`: Veneer checks files by the effective ids, so
/// the file-system id is the effective one; the call answers it and
/// changes nothing.
pub fn setfs(which: Ids) -> LxResult {
    get(which, EFFECTIVE)
}

/// `getgroups(size, list)`: how many groups there are (size 0), or the
/// groups, EINVAL if they do not fit.
pub fn getgroups(size: u64, list: u64) -> LxResult {
    let size = size as i32;
    if size < 0 {
        return Err(EINVAL);
    }
    let id = ident();
    let g = id.groups();
    if size == 0 {
        return Ok(g.len() as i64);
    }
    if (size as usize) < g.len() {
        return Err(EINVAL);
    }
    for (i, v) in g.iter().enumerate() {
        uaccess::put(list + 4 * i as u64, *v)?;
    }
    Ok(g.len() as i64)
}

/// `setgroups(size, list)`: root only; at most `NGROUPS` (Veneer's limit,
/// below Linux's 65,536); a list that cannot be read changes nothing.
pub fn setgroups(size: u64, list: u64) -> LxResult {
    if size as i32 as i64 > NGROUPS as i64 || (size as i32) < 0 {
        return Err(EINVAL);
    }
    let mut id = ident();
    for i in 0..size as usize {
        id.groups[i] = uaccess::get(list + 4 * i as u64)?;
    }
    id.ngroups = size as u32;
    set(&id)
}
