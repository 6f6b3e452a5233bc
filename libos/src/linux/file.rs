//! File-descriptor and file-system calls.

use super::stat;
use crate::errno::{
    LxResult, EEXIST, EINVAL, EISDIR, ELOOP, ENOENT, ENOTDIR, ENOTEMPTY, ENXIO, EPERM, ERANGE, ESPIPE,
};
use crate::fd::{self, Fd};
use crate::fs::Stat;
use crate::fs::{
    devfs, dir, disk, node, path, procfs, Ino, S_IFCHR, S_IFDIR, S_IFIFO, S_IFLNK, S_IFMT, S_IFREG,
};
use crate::obj::{self, flags, Kind};
use crate::proc;
use crate::uaccess;
use alloc::vec::Vec;

/// The `dirfd` that means the working directory.
pub const AT_FDCWD: i64 = -100;
pub const AT_SYMLINK_NOFOLLOW: u64 = 0x100;
pub const AT_REMOVEDIR: u64 = 0x200;
const AT_EMPTY_PATH: u64 = 0x1000;

pub const O_ACCMODE: u64 = flags::ACCMODE as u64;
pub const O_WRONLY: u64 = flags::WRONLY as u64;
pub const O_CREAT: u64 = 0o100;
const O_EXCL: u64 = 0o200;
pub const O_TRUNC: u64 = 0o1000;
const O_APPEND: u64 = flags::APPEND as u64;
const O_NONBLOCK: u64 = flags::NONBLOCK as u64;
const O_DIRECTORY: u64 = 0o200000;
const O_NOFOLLOW: u64 = 0o400000;
const O_CLOEXEC: u64 = 0o2000000;

pub(super) fn call(r: i64) -> LxResult {
    if r < 0 {
        Err(-r)
    } else {
        Ok(r)
    }
}

/// The directory a `*at` call's relative path starts from.
pub(super) fn base(dirfd: i64) -> Result<Ino, i64> {
    if dirfd == AT_FDCWD {
        return Ok(proc::cwd());
    }
    // SAFETY: the descriptor keeps the file live; no other reference to it here.
    let f = unsafe { fd::file(&fd::get(dirfd)?) };
    if f.kind != Kind::Dir {
        return Err(ENOTDIR);
    }
    Ok(f.ino)
}

pub fn read(fdn: i64, buf: u64, len: u64) -> LxResult {
    let d = fd::get(fdn)?;
    uaccess::with_bytes_mut(buf, len, |b| crate::io::read(&d, b).map(|n| n as i64))?
}

pub fn write(fdn: i64, buf: u64, len: u64) -> LxResult {
    let d = fd::get(fdn)?;
    let b = uaccess::bytes(buf, len)?;
    crate::io::write(&d, b).map(|n| n as i64)
}

/// `struct iovec` arrays for readv/writev (`linux/vector.rs` too): at most
/// 1024, each length a `ssize_t` that is not negative.
pub(super) fn iovecs(iov: u64, cnt: u64) -> Result<Vec<(u64, u64)>, i64> {
    if cnt > 1024 {
        return Err(EINVAL);
    }
    let v: Vec<(u64, u64)> = (0..cnt)
        .map(|i| uaccess::get::<[u64; 2]>(iov + 16 * i).map(|v| (v[0], v[1])))
        .collect::<Result<_, _>>()?;
    if v.iter().any(|&(_, len)| len as i64 <= -1) {
        return Err(EINVAL);
    }
    Ok(v)
}

pub fn readv(fdn: i64, iov: u64, cnt: u64) -> LxResult {
    let mut total = 0;
    for (p, l) in iovecs(iov, cnt)? {
        let n = read(fdn, p, l)?;
        total += n;
        if (n as u64) < l {
            break;
        }
    }
    Ok(total)
}

pub fn writev(fdn: i64, iov: u64, cnt: u64) -> LxResult {
    let mut total = 0;
    for (p, l) in iovecs(iov, cnt)? {
        match write(fdn, p, l) {
            Ok(n) => total += n,
            Err(e) if total == 0 => return Err(e),
            Err(_) => break,
        }
    }
    Ok(total)
}

pub fn pread(fdn: i64, buf: u64, len: u64, off: u64, write_it: bool) -> LxResult {
    let d = fd::get(fdn)?;
    // SAFETY: the descriptor keeps the file live; no other reference to it here.
    let f = unsafe { fd::file(&d) };
    if f.kind != Kind::Regular {
        return Err(ESPIPE);
    }
    let saved = f.off;
    f.off = off;
    let r = if write_it { write(fdn, buf, len) } else { read(fdn, buf, len) };
    f.off = saved;
    r
}

pub fn lseek(fdn: i64, off: i64, whence: u64) -> LxResult {
    let d = fd::get(fdn)?;
    // SAFETY: the descriptor keeps the file live; no other reference to it here.
    call((d.ops.seek)(unsafe { fd::file(&d) }, off, whence as u32))
}

pub fn close(fdn: i64) -> LxResult {
    fd::close(fdn)
}

pub fn openat(dirfd: i64, pathp: u64, flags: u64, mode: u64) -> LxResult {
    let p = uaccess::path(pathp)?;
    let cloexec = flags & O_CLOEXEC != 0;
    let status = (flags & (O_ACCMODE | O_APPEND | O_NONBLOCK)) as u32;
    let cwd = base(dirfd)?;
    if let Some(n) = procfs::fd_alias(cwd, p, flags & O_NOFOLLOW == 0)? {
        return fd::dup(fd::get(n)?, 0, cloexec);
    }
    let ino = match path::resolve(cwd, p, flags & O_NOFOLLOW == 0) {
        Ok(i) => {
            if flags & O_CREAT != 0 && flags & O_EXCL != 0 {
                return Err(EEXIST);
            }
            i
        }
        Err(ENOENT) if flags & O_CREAT != 0 => {
            let (d, name) = path::parent(cwd, p)?;
            let i = node::alloc(S_IFREG | (mode as u32 & 0o7777 & !proc::UMASK.get()))?;
            if let Err(e) = dir::add(d, &name, i) {
                node::release(i);
                return Err(e);
            }
            crate::fs::node::inherit_group(d, i);
            created(d, &name, i)?;
            i
        }
        Err(e) => return Err(e),
    };
    let n = node::get(ino);
    let kind = match n.mode & S_IFMT {
        S_IFDIR => Kind::Dir,
        S_IFLNK => return Err(ELOOP),
        S_IFCHR | S_IFIFO if flags & O_DIRECTORY != 0 => return Err(ENOTDIR),
        S_IFIFO => return fd::open(crate::io::open_fifo(ino, status)?, cloexec),
        // Sockets are reached by connect, not open.
        crate::fs::S_IFSOCK => return Err(ENXIO),
        // A device node: an open file of the device's kind.
        S_IFCHR => return fd::open(obj::new(devfs::kind(n.rdev).ok_or(ENXIO)?, status, ino)?, cloexec),
        _ => Kind::Regular,
    };
    if kind == Kind::Dir && flags & O_ACCMODE != 0 {
        return Err(EISDIR);
    }
    if kind != Kind::Dir && flags & O_DIRECTORY != 0 {
        return Err(ENOTDIR);
    }
    if kind == Kind::Regular && flags & O_TRUNC != 0 && flags & O_ACCMODE != 0 {
        node::update(ino, |n| node::truncate(n, 0))?;
    }
    node::update(ino, |n| n.opens += 1);
    match obj::new(kind, status, ino) {
        Ok(f) => fd::open(f, cloexec),
        Err(e) => {
            node::update(ino, |n| n.opens -= 1);
            Err(e)
        }
    }
}

pub fn fstat(fdn: i64, buf: u64) -> LxResult {
    let d = fd::get(fdn)?;
    let mut st = Stat::default();
    // SAFETY: the descriptor keeps the file live; no other reference to it here.
    call((d.ops.stat)(unsafe { fd::file(&d) }, &mut st))?;
    uaccess::put(buf, stat::linux(&st))
}

fn stat_path(dirfd: i64, pathp: u64, flags: u64) -> Result<Stat, i64> {
    let p = uaccess::path(pathp)?;
    if p.is_empty() && flags & AT_EMPTY_PATH != 0 {
        let d = fd::get(dirfd)?;
        let mut st = Stat::default();
        // SAFETY: the descriptor keeps the file live; no other reference to it here.
        call((d.ops.stat)(unsafe { fd::file(&d) }, &mut st))?;
        return Ok(st);
    }
    let cwd = base(dirfd)?;
    if let Some(n) = procfs::fd_alias(cwd, p, flags & AT_SYMLINK_NOFOLLOW == 0)? {
        let d = fd::get(n)?;
        let mut st = Stat::default();
        // SAFETY: the descriptor keeps the file live; no other reference to it here.
        call((d.ops.stat)(unsafe { fd::file(&d) }, &mut st))?;
        return Ok(st);
    }
    let ino = path::resolve(cwd, p, flags & AT_SYMLINK_NOFOLLOW == 0)?;
    Ok(crate::fs::stat::of(ino))
}

pub fn fstatat(dirfd: i64, pathp: u64, buf: u64, flags: u64) -> LxResult {
    let st = stat_path(dirfd, pathp, flags)?;
    uaccess::put(buf, stat::linux(&st))
}

pub fn statx(dirfd: i64, pathp: u64, flags: u64, buf: u64) -> LxResult {
    let st = stat_path(dirfd, pathp, flags)?;
    uaccess::put(buf, stat::statx(&st))
}

pub fn getdents64(fdn: i64, buf: u64, len: u64) -> LxResult {
    let d = fd::get(fdn)?;
    // SAFETY: the descriptor keeps the file live; no other reference to it here.
    let f = unsafe { fd::file(&d) };
    if f.kind != Kind::Dir {
        return Err(ENOTDIR);
    }
    uaccess::with_bytes_mut(buf, len, |out| {
        let mut at = 0usize;
        loop {
            let i = f.off as usize;
            let e;
            let (ino, name, typ): (Ino, &[u8], u8) = match i {
                0 => (f.ino, b".", 4),
                1 => (node::get(f.ino).parent, b"..", 4),
                _ => match dir::entry(f.ino, i - 2) {
                    Some(found) => {
                        e = found;
                        (e.ino, e.name(), dtype(e.ino))
                    }
                    None => break,
                },
            };
            let reclen = (19 + name.len() + 1).next_multiple_of(8);
            if at + reclen > out.len() {
                if at == 0 {
                    return Err(EINVAL);
                }
                break;
            }
            let r = &mut out[at..at + reclen];
            r.fill(0);
            r[0..8].copy_from_slice(&(ino as u64).to_le_bytes());
            r[8..16].copy_from_slice(&((i + 1) as u64).to_le_bytes());
            r[16..18].copy_from_slice(&(reclen as u16).to_le_bytes());
            r[18] = typ;
            r[19..19 + name.len()].copy_from_slice(name);
            at += reclen;
            f.off += 1;
        }
        Ok(at as i64)
    })?
}

fn dtype(ino: Ino) -> u8 {
    match node::get(ino).mode & S_IFMT {
        S_IFDIR => 4,
        S_IFLNK => 10,
        S_IFREG => 8,
        S_IFCHR => 2,
        S_IFIFO => 1,
        crate::fs::S_IFSOCK => 12,
        _ => 0,
    }
}

pub fn faccessat(dirfd: i64, pathp: u64, _mode: u64) -> LxResult {
    let p = uaccess::path(pathp)?;
    let cwd = base(dirfd)?;
    if procfs::fd_alias(cwd, p, true)?.is_some() {
        return Ok(0);
    }
    path::resolve(cwd, p, true).map(|_| 0)
}

pub fn readlinkat(dirfd: i64, pathp: u64, buf: u64, len: u64) -> LxResult {
    let p = uaccess::path(pathp)?;
    let target: Vec<u8> = if p == b"/proc/self/exe" {
        proc::exe()
    } else {
        let ino = path::resolve(base(dirfd)?, p, false)?;
        let n = node::get(ino);
        if n.mode & S_IFMT != S_IFLNK {
            return Err(EINVAL);
        }
        node::bytes(&n).to_vec()
    };
    let k = target.len().min(len as usize);
    uaccess::write(buf, &target[..k])?;
    Ok(k as i64)
}

pub fn getcwd(buf: u64, len: u64) -> LxResult {
    let mut p = path::absolute(proc::cwd());
    p.push(0);
    if p.len() as u64 > len {
        return Err(ERANGE);
    }
    uaccess::write(buf, &p)?;
    Ok(p.len() as i64)
}

pub fn chdir(pathp: u64) -> LxResult {
    let p = uaccess::path(pathp)?;
    let ino = path::resolve(proc::cwd(), p, true)?;
    if !node::is_dir(ino) {
        return Err(ENOTDIR);
    }
    proc::CWD.set(ino);
    Ok(0)
}

pub fn fchdir(fdn: i64) -> LxResult {
    let ino = base(fdn)?;
    proc::CWD.set(ino);
    Ok(0)
}

const F_DUPFD: u64 = 0;
const F_GETFD: u64 = 1;
const F_SETFD: u64 = 2;
const F_GETFL: u64 = 3;
const F_SETFL: u64 = 4;
const F_DUPFD_CLOEXEC: u64 = 1030;
const F_SETOWN: u64 = 8;
const F_GETOWN: u64 = 9;

pub fn fcntl(fdn: i64, cmd: u64, arg: u64) -> LxResult {
    let d: Fd = fd::get(fdn)?;
    match cmd {
        F_DUPFD => fd::dup(d, arg as usize, false),
        F_DUPFD_CLOEXEC => fd::dup(d, arg as usize, true),
        F_GETFD => Ok(d.cloexec as i64),
        F_SETFD => fd::set_cloexec(fdn, arg & 1 != 0).map(|_| 0),
        // SAFETY: the descriptor keeps the file live; no other reference to it here.
        F_GETFL => Ok(unsafe { fd::file(&d) }.flags as i64),
        F_SETFL => {
            // SAFETY: the descriptor keeps the file live; no other reference to it here.
            let f = unsafe { fd::file(&d) };
            let keep = flags::APPEND | flags::NONBLOCK | flags::ASYNC;
            f.flags = (f.flags & !keep) | (arg as u32 & keep);
            Ok(0)
        }
        // The owner of SIGIO: taken, but no SIGIO is ever sent (`ASYNC`).
        F_SETOWN => Ok(0),
        F_GETOWN => Ok(0),
        super::flock::F_GETLK
        | super::flock::F_SETLK
        | super::flock::F_SETLKW
        | super::flock::F_OFD_GETLK
        | super::flock::F_OFD_SETLK
        | super::flock::F_OFD_SETLKW => super::flock::fcntl(fdn, cmd, arg),
        _ => Err(EINVAL),
    }
}

pub fn dup(fdn: i64) -> LxResult {
    fd::dup(fd::get(fdn)?, 0, false)
}

pub fn dup3(old: i64, new: i64, flags: u64) -> LxResult {
    let d = fd::get(old)?;
    if old == new {
        return if flags == u64::MAX { Ok(new) } else { Err(EINVAL) };
    }
    fd::dup_to(d, new as usize, flags != u64::MAX && flags & O_CLOEXEC != 0)
}

pub fn pipe2(fds: u64, flags: u64) -> LxResult {
    uaccess::writable(fds, 8)?;
    let (r, w) = obj::pipe::create(flags as u32)?;
    let cloexec = flags & O_CLOEXEC != 0;
    let a = fd::open(r, cloexec)?;
    let b = match fd::open(w, cloexec) {
        Ok(b) => b,
        Err(e) => {
            let _ = fd::close(a);
            return Err(e);
        }
    };
    uaccess::put(fds, [a as i32, b as i32])
}

pub fn unlinkat(dirfd: i64, pathp: u64, flags: u64) -> LxResult {
    let (d, name) = path::parent(base(dirfd)?, uaccess::path(pathp)?)?;
    let ino = dir::lookup(d, &name).ok_or(ENOENT)?;
    if name == b"." || name == b".." {
        return Err(EINVAL);
    }
    if flags & AT_REMOVEDIR != 0 {
        if !node::is_dir(ino) {
            return Err(ENOTDIR);
        }
        if !dir::with_entries(ino, <[_]>::is_empty) {
            return Err(ENOTEMPTY);
        }
    } else if node::is_dir(ino) {
        return Err(EISDIR);
    }
    disk::removing(d, &name, node::is_dir(ino))?;
    dir::remove(d, &name);
    node::release(ino);
    Ok(0)
}

/// `ino`, just linked into `d` as `name`, made on the disk too when `d`
/// is there (`/data`); if the disk refuses, the name goes again.
fn created(d: Ino, name: &[u8], ino: Ino) -> LxResult {
    disk::created(d, name, ino).map(|_| 0).inspect_err(|_| {
        dir::remove(d, name);
        node::release(ino);
    })
}

pub fn mkdirat(dirfd: i64, pathp: u64, mode: u64) -> LxResult {
    let (d, name) = path::parent(base(dirfd)?, uaccess::path(pathp)?)?;
    if dir::lookup(d, &name).is_some() {
        return Err(EEXIST);
    }
    let ino = node::alloc(S_IFDIR | (mode as u32 & 0o7777 & !proc::UMASK.get()))?;
    dir::add(d, &name, ino).inspect_err(|_| node::release(ino))?;
    crate::fs::node::inherit_group(d, ino);
    created(d, &name, ino)
}

pub fn symlinkat(target: u64, dirfd: i64, linkp: u64) -> LxResult {
    let t = uaccess::path(target)?;
    let (d, name) = path::parent(base(dirfd)?, uaccess::path(linkp)?)?;
    if dir::lookup(d, &name).is_some() {
        return Err(EEXIST);
    }
    let ino = node::alloc(S_IFLNK | 0o777)?;
    node::update(ino, |n| node::write_at(n, 0, t))?;
    dir::add(d, &name, ino).inspect_err(|_| node::release(ino))?;
    crate::fs::node::inherit_group(d, ino);
    created(d, &name, ino)
}

pub fn linkat(olddir: i64, oldp: u64, newdir: i64, newp: u64) -> LxResult {
    let ino = path::resolve(base(olddir)?, uaccess::path(oldp)?, false)?;
    if node::is_dir(ino) {
        return Err(EPERM);
    }
    let (d, name) = path::parent(base(newdir)?, uaccess::path(newp)?)?;
    if dir::lookup(d, &name).is_some() {
        return Err(EEXIST);
    }
    disk::linking(ino, d, &name)?;
    dir::add(d, &name, ino).map(|_| 0)
}

/// Whether directory `a` is `b` or inside it.
fn within(mut a: Ino, b: Ino) -> bool {
    loop {
        if a == b {
            return true;
        }
        if a == crate::fs::ROOT {
            return false;
        }
        a = node::get(a).parent;
    }
}

pub fn renameat(olddir: i64, oldp: u64, newdir: i64, newp: u64) -> LxResult {
    let (od, oname) = path::parent(base(olddir)?, uaccess::path(oldp)?)?;
    let (nd, nname) = path::parent(base(newdir)?, uaccess::path(newp)?)?;
    let ino = dir::lookup(od, &oname).ok_or(ENOENT)?;
    if node::is_dir(ino) && within(nd, ino) {
        return Err(EINVAL);
    }
    if let Some(old) = dir::lookup(nd, &nname) {
        if old == ino {
            return Ok(0);
        }
        if node::is_dir(old) {
            if !node::is_dir(ino) {
                return Err(EISDIR);
            }
            if !dir::with_entries(old, <[_]>::is_empty) {
                return Err(ENOTEMPTY);
            }
        } else if node::is_dir(ino) {
            return Err(ENOTDIR);
        }
    }
    disk::renaming(od, &oname, nd, &nname)?;
    if let Some(old) = dir::lookup(nd, &nname) {
        dir::remove(nd, &nname);
        node::release(old);
    }
    // Link first so the inode never drops to zero links.
    dir::add(nd, &nname, ino)?;
    dir::remove(od, &oname);
    Ok(0)
}

pub fn fchmodat(dirfd: i64, pathp: u64, mode: u64) -> LxResult {
    let ino = path::resolve(base(dirfd)?, uaccess::path(pathp)?, true)?;
    chmod(ino, mode)
}

/// Sets `ino`'s permission bits (root keeps the set-group-ID bit whatever
/// the group); the change time is now.
fn chmod(ino: Ino, mode: u64) -> LxResult {
    node::update(ino, |n| {
        n.mode = (n.mode & S_IFMT) | (mode as u32 & 0o7777);
        n.ctime_ns = crate::time::wall_ns();
    });
    disk::chmoded(ino).map(|_| 0)
}

pub fn fchmod(fdn: i64, mode: u64) -> LxResult {
    // SAFETY: the descriptor keeps the file live; no other reference to it here.
    let f = unsafe { fd::file(&fd::get(fdn)?) };
    if f.ino == 0 {
        return Ok(0);
    }
    chmod(f.ino, mode)
}

pub fn truncate(pathp: u64, len: u64) -> LxResult {
    if (len as i64) < 0 {
        return Err(EINVAL);
    }
    let ino = path::resolve(proc::cwd(), uaccess::path(pathp)?, true)?;
    if node::is_dir(ino) {
        return Err(EISDIR);
    }
    node::update(ino, |n| node::truncate(n, len)).map(|_| 0)
}

pub fn ftruncate(fdn: i64, len: u64) -> LxResult {
    if (len as i64) < 0 {
        return Err(EINVAL);
    }
    // SAFETY: the descriptor keeps the file live; no other reference to it here.
    let f = unsafe { fd::file(&fd::get(fdn)?) };
    if f.kind != Kind::Regular || f.flags & flags::ACCMODE == flags::RDONLY {
        return Err(EINVAL);
    }
    node::update(f.ino, |n| node::truncate(n, len)).map(|_| 0)
}

/// Requests every descriptor answers, whatever its kind: set or clear
/// nonblocking mode (`int *arg`), close-on-exec on and off.
const FIONBIO: u64 = 0x5421;
const FIOASYNC: u64 = 0x5452;
const FIONCLEX: u64 = 0x5450;
const FIOCLEX: u64 = 0x5451;

pub fn ioctl(fdn: i64, req: u64, arg: u64) -> LxResult {
    let d = fd::get(fdn)?;
    // SAFETY: the descriptor keeps the file live; no other reference to it here.
    let f = unsafe { fd::file(&d) };
    match req & 0xffff_ffff {
        FIONBIO => {
            let on: i32 = uaccess::get(arg)?;
            f.flags = if on != 0 { f.flags | flags::NONBLOCK } else { f.flags & !flags::NONBLOCK };
            Ok(0)
        }
        FIOCLEX | FIONCLEX => fd::set_cloexec(fdn, req & 0xffff_ffff == FIOCLEX).map(|_| 0),
        // Recorded as `O_ASYNC` (nginx sets it on its channels); no SIGIO
        // is sent.
        FIOASYNC => {
            let on: i32 = uaccess::get(arg)?;
            f.flags = if on != 0 { f.flags | flags::ASYNC } else { f.flags & !flags::ASYNC };
            Ok(0)
        }
        _ => call((d.ops.ioctl)(f, req, arg)),
    }
}
