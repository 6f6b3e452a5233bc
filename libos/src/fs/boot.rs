//! Building the initial tree from the boot archive's `root/` members
//! (packed from `libos/root/` plus busybox and its applet links by xtask).
//! File data is not copied: inodes point into the archive until written.

use super::node::{self, Ino};
use super::{dir, path, ROOT, S_IFDIR, S_IFMT};
use crate::errno::Errno;

const PREFIX: &str = "root/";

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
    for e in binfmt::cpio::entries(user::bootfs::archive()).map_while(Result::ok) {
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
