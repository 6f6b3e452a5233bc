//! Permission bits: who may read, write or search a file of the shared
//! file system, judged by the identity the kernel holds for this process
//! (`abi::ident`, read from the kernel at each check, never kept here).
//!
//! The library enforces these bits itself: the inodes live in the shared
//! arena, which every process maps writable until software regions land
//! (docs/protection.md), so they stop a program that uses system calls,
//! not one that writes the arena's memory.

use super::{node, Ino, S_IFDIR, S_IFMT};
use crate::errno::Errno;
use crate::errno::{EACCES, EPERM};
use abi::ident::{Ident, EFFECTIVE};
use user::sys;

pub const MAY_READ: u32 = 4;
pub const MAY_WRITE: u32 = 2;
pub const MAY_EXEC: u32 = 1;

/// The sticky bit: in such a directory only an entry's owner (or the
/// directory's, or root) may remove or rename it.
const S_ISVTX: u32 = 0o1000;

/// This process's identity, from the kernel.
pub fn me() -> Ident {
    // Only a bad pointer could fail, and ours is not.
    sys::ident_get(0).unwrap_or(Ident { uid: [u32::MAX; 3], gid: [u32::MAX; 3], ..Ident::ROOT })
}

/// May `id`, acting by its real or effective ids (`which`), do `want`
/// (`MAY_*` bits) to `ino`? Root may do anything but execute a file no
/// one may execute; anyone else gets the owner's, the group's or
/// everyone's bits, the first class it is in.
pub fn may(id: &Ident, which: usize, ino: Ino, want: u32) -> Result<(), Errno> {
    let n = node::get(ino);
    let (uid, gid) = (id.uid[which], id.gid[which]);
    let allowed = if uid == 0 {
        let anyone_exec = n.mode & S_IFMT == S_IFDIR || n.mode & 0o111 != 0;
        if want & MAY_EXEC == 0 || anyone_exec {
            want
        } else {
            0
        }
    } else if n.uid == uid {
        n.mode >> 6 & 7
    } else if n.gid == gid || id.groups().contains(&n.gid) {
        n.mode >> 3 & 7
    } else {
        n.mode & 7
    };
    if allowed & want == want {
        Ok(())
    } else {
        Err(EACCES)
    }
}

/// `may` by this process's effective ids.
pub fn check(ino: Ino, want: u32) -> Result<(), Errno> {
    may(&me(), EFFECTIVE, ino, want)
}

/// May this process, by its real or effective ids (`which`), look a name
/// up in directory `dir`, of mode `mode` (search, the x bit of its
/// class)? A path's walk asks at each directory it passes through; the
/// identity is asked of the kernel once a walk (`id`), and only for a
/// directory some class may not search.
pub fn search(dir: Ino, mode: u32, which: usize, id: &mut Option<Ident>) -> Result<(), Errno> {
    if mode & 0o111 == 0o111 {
        return Ok(());
    }
    may(id.get_or_insert_with(me), which, dir, MAY_EXEC)
}

/// May this process add or remove entries of directory `dir` (write and
/// search), and remove `victim` from it (the sticky bit)?
pub fn may_change_dir(dir: Ino, victim: Option<Ino>) -> Result<(), Errno> {
    let id = me();
    may(&id, EFFECTIVE, dir, MAY_WRITE | MAY_EXEC)?;
    let uid = id.uid[EFFECTIVE];
    match victim {
        Some(v) if node::get(dir).mode & S_ISVTX != 0 && uid != 0 => {
            if node::get(v).uid == uid || node::get(dir).uid == uid {
                Ok(())
            } else {
                Err(EPERM)
            }
        }
        _ => Ok(()),
    }
}

/// May this process change `ino`'s mode or times (its owner or root)?
pub fn owner(ino: Ino) -> Result<(), Errno> {
    let uid = me().uid[EFFECTIVE];
    if uid == 0 || node::get(ino).uid == uid {
        Ok(())
    } else {
        Err(EPERM)
    }
}

/// A file just made in `dir` belongs to this process's effective user and
/// group (or the directory's group, and its file system: `node::inherit`).
pub fn own_new(dir: Ino, ino: Ino) {
    let id = me();
    node::update(ino, |n| (n.uid, n.gid) = (id.uid[EFFECTIVE], id.gid[EFFECTIVE]));
    node::inherit(dir, ino);
}

/// May this process give `ino` user `uid` and group `gid` (`u32::MAX`:
/// unchanged)? Root may; its owner only keeps the user and picks a group
/// it belongs to (Linux's `chown` rule).
pub fn may_chown(ino: Ino, uid: u32, gid: u32) -> Result<(), Errno> {
    let id = me();
    let n = node::get(ino);
    let me = id.uid[EFFECTIVE];
    let user_ok = uid == u32::MAX || uid == n.uid;
    let group_ok = gid == u32::MAX || gid == n.gid || gid == id.gid[EFFECTIVE] || id.groups().contains(&gid);
    if me == 0 || n.uid == me && user_ok && group_ok {
        Ok(())
    } else {
        Err(EPERM)
    }
}
