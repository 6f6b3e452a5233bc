//! `mknod` and `mknodat`: FIFOs (`obj::fifo`), empty regular files and
//! socket names. Device nodes are refused with EPERM, as Linux refuses a
//! process without `CAP_MKNOD` (lxrt's devices are the ones `fs::devfs`
//! makes); a directory type gets EPERM and an unknown one EINVAL before
//! the path is looked at, as on Linux.

use crate::errno::LxResult;
use crate::errno::{EEXIST, EINVAL, EPERM};
use crate::fs::{dir, node, S_IFDIR, S_IFIFO, S_IFMT, S_IFREG, S_IFSOCK};

const S_IFCHR: u32 = crate::fs::S_IFCHR;
const S_IFBLK: u32 = 0o060000;

pub fn mknodat(dirfd: i64, pathp: u64, mode: u64, _dev: u64) -> LxResult {
    let mode = mode as u32;
    let kind = match mode & S_IFMT {
        0 => S_IFREG,
        k @ (S_IFREG | S_IFIFO | S_IFSOCK | S_IFCHR | S_IFBLK) => k,
        S_IFDIR => return Err(EPERM),
        _ => return Err(EINVAL),
    };
    let (d, name) = super::file::parent_at(dirfd, pathp)?;
    if dir::lookup(d, &name).is_some() {
        return Err(EEXIST);
    }
    if matches!(kind, S_IFCHR | S_IFBLK) {
        return Err(EPERM);
    }
    let ino = node::alloc(kind | (mode & 0o7777 & !crate::proc::UMASK.get()))?;
    dir::add(d, &name, ino).inspect_err(|_| node::release(ino))?;
    crate::fs::perm::own_new(d, ino);
    crate::obj::inotify::created(d, &name, ino);
    Ok(0)
}
