//! Building the initial tree from the boot archive's `root/` members
//! (packed from `libos/root/` plus busybox and its applet links by xtask).
//! File data is not copied: inodes point into the archive until written.
//! When the disk is the root (`root_on_disk`, lxrt's `-r`), the archive's
//! tree is left out: `/` is the disk's (`disk::mount`), and only the
//! memory trees mounted over it are made here (`/dev`, `/sys`, `/proc`,
//! and `/tmp`, a tmpfs as most Linux systems have it).

use super::node::{self, Ino};
use super::{dir, path, ROOT, S_IFDIR, S_IFMT};
use crate::errno::Errno;
use crate::word::Word;

const PREFIX: &str = "root/";

/// Whether `/` is the disk's C-FFS rather than the boot archive's tree.
static FROM_DISK: Word<bool> = Word::new(false);

/// `/` is to be the disk's (before `native::init` builds the tree).
pub fn root_on_disk() {
    FROM_DISK.set(true);
}

/// Whether `/` is the disk's (`root_on_disk`).
pub fn root_is_disk() -> bool {
    FROM_DISK.get()
}

/// Makes `/` and everything under `root/` in the archive.
pub fn populate() -> Result<(), Errno> {
    if !node::init_table() {
        return Err(crate::errno::ENOSPC);
    }
    // Inode 1 was left off the free list for the root.
    let root = node::Inode {
        mode: S_IFDIR | 0o755,
        nlink: 1,
        opens: 0,
        parent: ROOT,
        size: 0,
        cap: 0,
        data: core::ptr::null_mut(),
        ticket: 0,
        maps: 0,
        paged: false,
        stale: false,
        borrowed: false,
        fs: node::FS_ROOT,
        mtime_ns: 0,
        atime_ns: 0,
        ctime_ns: 0,
        uid: 0,
        gid: 0,
        rdev: 0,
        disk: 0,
        disk_at: 0,
        dirty: false,
        copied: false,
    };
    node::update(ROOT, |n| *n = root);
    if root_is_disk() {
        let tmp = node::alloc(S_IFDIR | 0o1777)?;
        dir::add(ROOT, b"tmp", tmp)?;
        let proc = node::alloc_on(S_IFDIR | 0o555, node::FS_PROC)?;
        dir::add(ROOT, b"proc", proc)?;
    }
    let tree = binfmt::cpio::entries(user::bootfs::archive()).filter(|_| !root_is_disk());
    for e in tree.map_while(Result::ok) {
        let Some(rel) = e.name.strip_prefix(PREFIX) else {
            continue;
        };
        let (parent, name) = path::parent(ROOT, rel.as_bytes())?;
        if dir::lookup(parent, &name).is_some() {
            continue;
        }
        let ino: Ino = node::alloc(e.mode)?;
        node::update(ino, |n| (n.uid, n.gid) = (e.uid, e.gid));
        if e.mode & S_IFMT != S_IFDIR {
            node::update(ino, |n| {
                n.data = e.data.as_ptr() as *mut u8;
                n.size = e.data.len() as u64;
                n.borrowed = true;
            });
        }
        dir::add(parent, &name, ino)?;
    }
    super::devfs::populate()?;
    super::sysfs::populate()
}
