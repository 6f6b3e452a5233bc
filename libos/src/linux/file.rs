//! File-descriptor and file-system calls.

use super::stat;
use crate::errno::Errno;
use crate::errno::{
    LxResult, EBADF, EBUSY, EEXIST, EINVAL, EISDIR, ELOOP, ENOENT, ENOTDIR, ENOTEMPTY, ENXIO, EPERM, ERANGE,
    ESPIPE,
};
use crate::fd::{self, Fd};
use crate::fs::Stat;
use crate::fs::{
    devfs, dir, disk, node, path, perm, procfs, Ino, S_IFCHR, S_IFDIR, S_IFIFO, S_IFLNK, S_IFMT, S_IFREG,
};
use crate::obj::{self, flags, pipe, Kind};
use crate::proc;
use crate::uaccess;
use abi::ident::{EFFECTIVE, REAL};
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
pub const O_NONBLOCK: u64 = flags::NONBLOCK as u64;
const O_DIRECTORY: u64 = 0o200000;
const O_NOFOLLOW: u64 = 0o400000;
pub const O_CLOEXEC: u64 = 0o2000000;
const O_NOCTTY: u64 = 0o400;
const O_PATH: u64 = flags::PATH as u64;

/// The directory a `*at` call's path `p` starts from: the root for an
/// absolute path (whatever `dirfd` is), else `dirfd`'s directory.
pub(super) fn base(dirfd: i64, p: &[u8]) -> Result<Ino, Errno> {
    if p.first() == Some(&b'/') {
        return Ok(crate::fs::ROOT);
    }
    dir_of(dirfd)
}

/// The directory `dirfd` names (`AT_FDCWD`: the working directory).
fn dir_of(dirfd: i64) -> Result<Ino, Errno> {
    if dirfd == AT_FDCWD {
        return Ok(proc::cwd());
    }
    // SAFETY: the descriptor keeps the file live; no other reference to it here.
    let f = unsafe { fd::file(&fd::get_raw(dirfd)?) };
    if f.kind != Kind::Dir && !(f.kind == Kind::Path && node::is_dir(f.ino)) {
        return Err(ENOTDIR);
    }
    Ok(f.ino)
}

/// The directory and last name of the path at `pathp`, from `dirfd`.
pub(super) fn parent_at(dirfd: i64, pathp: u64) -> Result<(Ino, Vec<u8>), Errno> {
    let p = uaccess::path(pathp)?;
    path::parent(base(dirfd, p)?, p)
}

/// The inode the path at `pathp` names, from `dirfd`.
fn resolve_at(dirfd: i64, pathp: u64, follow: bool) -> Result<Ino, Errno> {
    let p = uaccess::path(pathp)?;
    path::resolve(base(dirfd, p)?, p, follow)
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
pub(super) fn iovecs(iov: u64, cnt: u64) -> Result<Vec<(u64, u64)>, Errno> {
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

/// Vectors up to this many bytes in all are moved by one read or write
/// through a buffer, so that a datagram is one message, a pipe write of
/// `PIPE_BUF` bytes or less is atomic and a short transfer ends the call;
/// longer ones go a vector at a time, ending at the first short one.
const GATHER: u64 = 64 * 1024;

fn total(v: &[(u64, u64)]) -> u64 {
    v.iter().fold(0u64, |t, &(_, l)| t.saturating_add(l))
}

pub fn readv(fdn: i64, iov: u64, cnt: u64) -> LxResult {
    let v = iovecs(iov, cnt)?;
    if total(&v) <= GATHER {
        let d = fd::get(fdn)?;
        let mut buf = alloc::vec![0u8; total(&v) as usize];
        // (Through `io`, which waits and ends the wait on a signal.)
        let n = crate::io::read(&d, &mut buf)?;
        let mut at = 0;
        for (p, l) in v {
            let k = (l as usize).min(n - at);
            if k > 0 {
                if let Err(e) = uaccess::write(p, &buf[at..at + k]) {
                    return if at == 0 { Err(e) } else { Ok(at as i64) };
                }
            }
            at += k;
        }
        return Ok(n as i64);
    }
    let mut total = 0;
    for (p, l) in v {
        let n = read(fdn, p, l)?;
        total += n;
        if (n as u64) < l {
            break;
        }
    }
    Ok(total)
}

pub fn writev(fdn: i64, iov: u64, cnt: u64) -> LxResult {
    let v = iovecs(iov, cnt)?;
    if total(&v) <= GATHER {
        let d = fd::get(fdn)?;
        // What the vectors hold up to the first one that cannot be read.
        let mut buf = Vec::with_capacity(total(&v) as usize);
        for &(p, l) in &v {
            match uaccess::bytes(p, l) {
                Ok(b) => buf.extend_from_slice(b),
                Err(e) if buf.is_empty() => return Err(e),
                Err(_) => break,
            }
        }
        return crate::io::write(&d, &buf).map(|n| n as i64);
    }
    let mut total = 0;
    for (p, l) in v {
        match write(fdn, p, l) {
            Ok(n) => {
                total += n;
                if (n as u64) < l {
                    break;
                }
            }
            Err(e) if total == 0 => return Err(e),
            Err(_) => break,
        }
    }
    Ok(total)
}

/// `pread64`/`pwrite64`: files, directories (EISDIR then) and the memory
/// devices take a position; pipes, sockets and the terminal do not.
pub fn pread(fdn: i64, buf: u64, len: u64, off: u64, write_it: bool) -> LxResult {
    if (off as i64) < 0 {
        return Err(EINVAL);
    }
    let d = fd::get(fdn)?;
    // SAFETY: the descriptor keeps the file live; no other reference to it here.
    let f = unsafe { fd::file(&d) };
    if !matches!(f.kind, Kind::Regular | Kind::Dir | Kind::Null | Kind::Zero | Kind::Full | Kind::Random) {
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
    (d.ops.seek)(unsafe { fd::file(&d) }, off, whence as u32).map(|n| n as i64)
}

pub fn close(fdn: i64) -> LxResult {
    fd::close(fdn)
}

/// What opening with `flags` needs of the file (a new file's creator
/// needs nothing: Linux opens it even if its mode says read-only).
fn access_wanted(flags: u64) -> u32 {
    let mode = match flags & O_ACCMODE {
        0 => perm::MAY_READ,
        1 => perm::MAY_WRITE,
        _ => perm::MAY_READ | perm::MAY_WRITE,
    };
    if flags & O_TRUNC != 0 {
        mode | perm::MAY_WRITE
    } else {
        mode
    }
}

pub fn openat(dirfd: i64, pathp: u64, flags: u64, mode: u64) -> LxResult {
    let p = uaccess::path(pathp)?;
    let cloexec = flags & O_CLOEXEC != 0;
    let status = (flags & (O_ACCMODE | O_APPEND | O_NONBLOCK)) as u32
        | (flags as u32 & (crate::obj::flags::SYNC | crate::obj::flags::DSYNC));
    let cwd = base(dirfd, p)?;
    let follow = flags & O_NOFOLLOW == 0;
    // `/proc/self/fd/N`, `/dev/stdin`: a file of the file system is opened
    // anew (a description and offset of its own), anything else (a pipe,
    // the terminal, a socket) is shared, as Linux does.
    let aliased = match procfs::fd_alias(cwd, p, follow)? {
        Some(n) => {
            let d = fd::get_raw(n)?;
            // SAFETY: the descriptor keeps the file live; no other reference to it here.
            let f = unsafe { fd::file(&d) };
            if !matches!(f.kind, Kind::Regular | Kind::Dir | Kind::Path) {
                return fd::dup(d, 0, cloexec);
            }
            Some(f.ino)
        }
        None => None,
    };
    // O_PATH names the file and ignores every flag but these three.
    if flags & O_PATH != 0 {
        let ino = match aliased {
            Some(i) => i,
            None => path::resolve(cwd, p, follow)?,
        };
        if flags & O_DIRECTORY != 0 && !node::is_dir(ino) {
            return Err(ENOTDIR);
        }
        return open_ino(Kind::Path, flags::PATH, ino, cloexec);
    }
    let mut made = false;
    let ino = match aliased.ok_or(ENOENT).or_else(|_| path::resolve(cwd, p, follow)) {
        Ok(i) => {
            if flags & O_CREAT != 0 && flags & O_EXCL != 0 {
                return Err(EEXIST);
            }
            i
        }
        Err(ENOENT) if flags & O_CREAT != 0 => {
            let (d, name) = path::parent(cwd, p)?;
            // "name/" names a directory: open does not make one.
            if p.ends_with(b"/") {
                return Err(EISDIR);
            }
            perm::may_change_dir(d, None)?;
            let i = node::alloc(S_IFREG | (mode as u32 & 0o7777 & !proc::UMASK.get()))?;
            if let Err(e) = dir::add(d, &name, i) {
                node::release(i);
                return Err(e);
            }
            perm::own_new(d, i);
            created(d, &name, i)?;
            made = true;
            i
        }
        Err(e) => return Err(e),
    };
    if !made {
        perm::check(ino, access_wanted(flags))?;
    }
    let n = node::get(ino);
    let kind = match n.mode & S_IFMT {
        S_IFDIR => Kind::Dir,
        S_IFLNK => return Err(ELOOP),
        S_IFCHR | S_IFIFO if flags & O_DIRECTORY != 0 => return Err(ENOTDIR),
        S_IFIFO => return fd::open(crate::io::open_fifo(ino, status)?, cloexec),
        // Sockets are reached by connect, not open.
        crate::fs::S_IFSOCK => return Err(ENXIO),
        // A device node: an open file of the device's kind.
        // `/dev/tty` is the controlling terminal: none unless the console
        // is a terminal (`lxrt -t`).
        // (A session whose controlling terminal is a pty's slave opens it.)
        S_IFCHR if n.rdev == devfs::TTY => {
            if let Some(f) = obj::pty::open_controlling(status) {
                return fd::open(f?, cloexec);
            }
            if !crate::obj::console::is_tty() {
                return Err(ENXIO);
            }
            return fd::open(obj::new(Kind::Console, status, ino)?, cloexec);
        }
        S_IFCHR if obj::pty::is_pty(n.rdev) => {
            return fd::open(obj::pty::open(n.rdev, ino, status, flags & O_NOCTTY != 0)?, cloexec)
        }
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
        crate::fs::content::truncate(ino, 0)?;
    }
    open_ino(kind, status, ino, cloexec)
}

/// A new descriptor for a new description of `kind` on inode `ino`, which
/// it holds open.
fn open_ino(kind: Kind, status: u32, ino: Ino, cloexec: bool) -> LxResult {
    node::update(ino, |n| n.opens += 1);
    match obj::new(kind, status, ino) {
        Ok(f) => {
            crate::obj::inotify::changed(ino, crate::obj::inotify::IN_OPEN);
            fd::open(f, cloexec)
        }
        Err(e) => {
            node::update(ino, |n| n.opens -= 1);
            Err(e)
        }
    }
}

pub fn fstat(fdn: i64, buf: u64) -> LxResult {
    let d = fd::get_raw(fdn)?;
    let mut st = Stat::default();
    // SAFETY: the descriptor keeps the file live; no other reference to it here.
    (d.ops.stat)(unsafe { fd::file(&d) }, &mut st)?;
    uaccess::put(buf, stat::linux(&st))
}

fn stat_path(dirfd: i64, pathp: u64, flags: u64) -> Result<Stat, Errno> {
    let p = uaccess::path(pathp)?;
    if p.is_empty() && flags & AT_EMPTY_PATH != 0 {
        let d = fd::get_raw(dirfd)?;
        let mut st = Stat::default();
        // SAFETY: the descriptor keeps the file live; no other reference to it here.
        (d.ops.stat)(unsafe { fd::file(&d) }, &mut st)?;
        return Ok(st);
    }
    let cwd = base(dirfd, p)?;
    if let Some(n) = procfs::fd_alias(cwd, p, flags & AT_SYMLINK_NOFOLLOW == 0)? {
        let d = fd::get_raw(n)?;
        let mut st = Stat::default();
        // SAFETY: the descriptor keeps the file live; no other reference to it here.
        (d.ops.stat)(unsafe { fd::file(&d) }, &mut st)?;
        return Ok(st);
    }
    let ino = path::resolve(cwd, p, flags & AT_SYMLINK_NOFOLLOW == 0)?;
    Ok(crate::fs::stat::of(ino))
}

/// `fstatat`'s flags, and `statx`'s sync modes (all the same here).
const AT_NO_AUTOMOUNT: u64 = 0x800;
const AT_STATX_SYNC_TYPE: u64 = 0x6000;

pub fn fstatat(dirfd: i64, pathp: u64, buf: u64, flags: u64) -> LxResult {
    if flags & !(AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | AT_EMPTY_PATH) != 0 {
        return Err(EINVAL);
    }
    let st = stat_path(dirfd, pathp, flags)?;
    uaccess::put(buf, stat::linux(&st))
}

pub fn statx(dirfd: i64, pathp: u64, flags: u64, buf: u64) -> LxResult {
    let known = AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | AT_EMPTY_PATH | AT_STATX_SYNC_TYPE;
    if flags & !known != 0 || flags & AT_STATX_SYNC_TYPE == AT_STATX_SYNC_TYPE {
        return Err(EINVAL);
    }
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

/// `faccessat2`'s flags (`faccessat` has none): check with the effective
/// ids (not the real ones), do not follow a last link, the descriptor itself.
const AT_EACCESS: u64 = 0x200;

/// `faccessat2(dirfd, path, mode, flags)`: whether the file exists and
/// this process may access it as `mode` asks (with its real ids, as
/// `access` does, unless `AT_EACCESS`).
pub fn faccessat(dirfd: i64, pathp: u64, mode: u64, flags: u64) -> LxResult {
    if mode & !7 != 0 || flags & !(AT_EACCESS | AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH) != 0 {
        return Err(EINVAL);
    }
    let p = uaccess::path(pathp)?;
    if p.is_empty() && flags & AT_EMPTY_PATH != 0 {
        return fd::get_raw(dirfd).map(|_| 0);
    }
    let cwd = base(dirfd, p)?;
    let follow = flags & AT_SYMLINK_NOFOLLOW == 0;
    if procfs::fd_alias(cwd, p, follow)?.is_some() {
        return Ok(0);
    }
    let which = if flags & AT_EACCESS != 0 { EFFECTIVE } else { REAL };
    let ino = path::resolve_as(cwd, p, follow, which)?;
    perm::may(&perm::me(), which, ino, mode as u32).map(|_| 0)
}

/// `readlinkat(dirfd, path, buf, len)`; an empty path reads the link an
/// `O_PATH|O_NOFOLLOW` descriptor names.
pub fn readlinkat(dirfd: i64, pathp: u64, buf: u64, len: u64) -> LxResult {
    if len as i32 <= 0 {
        return Err(EINVAL);
    }
    let p = uaccess::path(pathp)?;
    let target: Vec<u8> = if p == b"/proc/self/exe" {
        proc::exe()
    } else {
        let ino = if p.is_empty() {
            // SAFETY: the descriptor keeps the file live; no other reference to it here.
            let f = unsafe { fd::file(&fd::get_raw(dirfd)?) };
            if f.kind != Kind::Path {
                return Err(ENOENT);
            }
            f.ino
        } else {
            path::resolve(base(dirfd, p)?, p, false)?
        };
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
    perm::check(ino, perm::MAY_EXEC)?;
    proc::CWD.set(ino);
    Ok(0)
}

pub fn fchdir(fdn: i64) -> LxResult {
    let ino = dir_of(fdn)?;
    perm::check(ino, perm::MAY_EXEC)?;
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
const F_NOTIFY: u64 = 1026;
const F_SETPIPE_SZ: u64 = 1031;
const F_GETPIPE_SZ: u64 = 1032;

pub fn fcntl(fdn: i64, cmd: u64, arg: u64) -> LxResult {
    let d: Fd = fd::get_raw(fdn)?;
    // An O_PATH descriptor answers only about itself.
    // SAFETY: the descriptor keeps the file live; no other reference to it here.
    if unsafe { fd::file(&d) }.kind == Kind::Path
        && !matches!(cmd, F_DUPFD | F_DUPFD_CLOEXEC | F_GETFD | F_SETFD | F_GETFL)
    {
        return Err(EBADF);
    }
    match cmd {
        F_DUPFD | F_DUPFD_CLOEXEC if arg as i32 as i64 as u64 >= fd::limit() as u64 => Err(EINVAL),
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
        F_GETPIPE_SZ | F_SETPIPE_SZ => {
            // SAFETY: the descriptor keeps the file live; no other reference to it here.
            let f = unsafe { fd::file(&d) };
            if !matches!(f.kind, Kind::PipeRead | Kind::PipeWrite) {
                return Err(EBADF);
            }
            let size = if cmd == F_GETPIPE_SZ { pipe::size(f) } else { pipe::set_size(f, arg as u32)? };
            Ok(size as i64)
        }
        F_NOTIFY => {
            // SAFETY: the descriptor keeps the file live; no other reference to it here.
            let f = unsafe { fd::file(&d) };
            // Asking for nothing drops the mark, on any file; a mark needs
            // a directory.
            if arg as u32 & !crate::obj::dnotify::DN_MULTISHOT != 0 && f.kind != Kind::Dir {
                return Err(ENOTDIR);
            }
            crate::obj::dnotify::mark(f, f.ino, arg as u32).map(|()| 0)
        }
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
    fd::dup(fd::get_raw(fdn)?, 0, false)
}

/// `dup3` (`flags` u64::MAX: `dup2`, which allows `old == new`).
pub fn dup3(old: i64, new: i64, flags: u64) -> LxResult {
    if flags != u64::MAX && (flags & !O_CLOEXEC != 0 || old == new) {
        return Err(EINVAL);
    }
    let d = fd::get_raw(old)?;
    if old == new {
        return Ok(new);
    }
    fd::dup_to(d, new as usize, flags != u64::MAX && flags & O_CLOEXEC != 0)
}

pub fn pipe2(fds: u64, flags: u64) -> LxResult {
    // O_DIRECT (packet mode) is taken and changes nothing.
    if flags & !(O_CLOEXEC | O_NONBLOCK | 0o40000) != 0 {
        return Err(EINVAL);
    }
    uaccess::writable(fds, 8)?;
    let (r, w) = obj::pipe::create_guarded(flags as u32)?;
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
    if flags & !AT_REMOVEDIR != 0 {
        return Err(EINVAL);
    }
    let (d, name) = parent_at(dirfd, pathp)?;
    let ino = dir::lookup(d, &name).ok_or(ENOENT)?;
    // `/` (no last name), `.` and `..`, as Linux's rmdir and unlink answer.
    let rmdir = flags & AT_REMOVEDIR != 0;
    match &name[..] {
        b"" if rmdir => return Err(EBUSY),
        b"." if rmdir => return Err(EINVAL),
        b".." if rmdir => return Err(ENOTEMPTY),
        b"" | b"." | b".." => return Err(EISDIR),
        _ => {}
    }
    perm::may_change_dir(d, Some(ino))?;
    if rmdir {
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
    crate::obj::inotify::removed(d, &name, ino);
    node::release(ino);
    Ok(0)
}

/// `ino`, just linked into `d` as `name`, made on the disk too when `d`
/// is there (`/data`); if the disk refuses, the name goes again.
fn created(d: Ino, name: &[u8], ino: Ino) -> LxResult {
    disk::created(d, name, ino)
        .map(|_| {
            crate::obj::inotify::created(d, name, ino);
            0
        })
        .inspect_err(|_| {
            dir::remove(d, name);
            node::release(ino);
        })
}

pub fn mkdirat(dirfd: i64, pathp: u64, mode: u64) -> LxResult {
    let (d, name) = parent_at(dirfd, pathp)?;
    if dir::lookup(d, &name).is_some() {
        return Err(EEXIST);
    }
    perm::may_change_dir(d, None)?;
    let ino = node::alloc(S_IFDIR | (mode as u32 & 0o7777 & !proc::UMASK.get()))?;
    dir::add(d, &name, ino).inspect_err(|_| node::release(ino))?;
    perm::own_new(d, ino);
    created(d, &name, ino)
}

pub fn symlinkat(target: u64, dirfd: i64, linkp: u64) -> LxResult {
    let t = uaccess::path(target)?;
    if t.is_empty() {
        return Err(ENOENT);
    }
    let (d, name) = parent_at(dirfd, linkp)?;
    if dir::lookup(d, &name).is_some() {
        return Err(EEXIST);
    }
    perm::may_change_dir(d, None)?;
    let ino = node::alloc(S_IFLNK | 0o777)?;
    node::update(ino, |n| node::write_at(n, 0, t))?;
    dir::add(d, &name, ino).inspect_err(|_| node::release(ino))?;
    perm::own_new(d, ino);
    created(d, &name, ino)
}

pub fn linkat(olddir: i64, oldp: u64, newdir: i64, newp: u64) -> LxResult {
    let ino = resolve_at(olddir, oldp, false)?;
    if node::is_dir(ino) {
        return Err(EPERM);
    }
    let (d, name) = parent_at(newdir, newp)?;
    perm::may_change_dir(d, None)?;
    if dir::lookup(d, &name).is_some() {
        return Err(EEXIST);
    }
    disk::linking(ino, d, &name)?;
    dir::add(d, &name, ino)?;
    // Linux: the new name in its directory, and the link count.
    crate::obj::inotify::created(d, &name, ino);
    crate::obj::inotify::changed(ino, crate::obj::inotify::IN_ATTRIB);
    Ok(0)
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

/// `renameat2`'s flags: fail if the new name exists; swap the two.
const RENAME_NOREPLACE: u64 = 1;
const RENAME_EXCHANGE: u64 = 2;

/// `renameat2(olddir, old, newdir, new, flags)` (`rename`, `renameat`:
/// flags 0). `RENAME_WHITEOUT` (for overlay file systems) is refused.
pub fn renameat(olddir: i64, oldp: u64, newdir: i64, newp: u64, flags: u64) -> LxResult {
    if flags & !(RENAME_NOREPLACE | RENAME_EXCHANGE) != 0 || flags == RENAME_NOREPLACE | RENAME_EXCHANGE {
        return Err(EINVAL);
    }
    let (od, oname) = parent_at(olddir, oldp)?;
    let (nd, nname) = parent_at(newdir, newp)?;
    let ino = dir::lookup(od, &oname).ok_or(ENOENT)?;
    if [&oname, &nname].iter().any(|n| matches!(&n[..], b"" | b"." | b"..")) {
        return Err(EBUSY);
    }
    perm::may_change_dir(od, Some(ino))?;
    perm::may_change_dir(nd, dir::lookup(nd, &nname))?;
    if node::is_dir(ino) && within(nd, ino) {
        return Err(EINVAL);
    }
    let target = dir::lookup(nd, &nname);
    if flags & RENAME_EXCHANGE != 0 {
        let other = target.ok_or(ENOENT)?;
        if node::is_dir(other) && within(od, other) {
            return Err(EINVAL);
        }
        dir::relink(od, &oname, other);
        dir::relink(nd, &nname, ino);
        return Ok(0);
    }
    if target.is_some() && flags & RENAME_NOREPLACE != 0 {
        return Err(EEXIST);
    }
    if let Some(old) = target {
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
        crate::obj::inotify::replaced(old);
        node::release(old);
    }
    // Link first so the inode never drops to zero links.
    dir::add(nd, &nname, ino)?;
    dir::remove(od, &oname);
    crate::obj::inotify::moved(od, &oname, nd, &nname, ino);
    Ok(0)
}

pub fn fchmodat(dirfd: i64, pathp: u64, mode: u64) -> LxResult {
    let ino = resolve_at(dirfd, pathp, true)?;
    chmod(ino, mode)
}

/// Sets `ino`'s permission bits (root keeps the set-group-ID bit whatever
/// the group); the change time is now.
fn chmod(ino: Ino, mode: u64) -> LxResult {
    perm::owner(ino)?;
    node::update(ino, |n| {
        n.mode = (n.mode & S_IFMT) | (mode as u32 & 0o7777);
        n.ctime_ns = crate::time::wall_ns();
    });
    crate::obj::fifo::bits_changed(ino);
    crate::obj::inotify::changed(ino, crate::obj::inotify::IN_ATTRIB);
    disk::attributes(ino).map(|_| 0)
}

pub fn fchmod(fdn: i64, mode: u64) -> LxResult {
    // SAFETY: the descriptor keeps the file live; no other reference to it here.
    let f = unsafe { fd::file(&fd::get(fdn)?) };
    if f.ino == 0 {
        return Ok(0);
    }
    chmod(f.ino, mode)
}

/// Sets file `ino`'s size; this process's mappings of it lose the pages
/// now past the end (`filemap`).
fn resize(ino: Ino, len: u64) -> LxResult {
    crate::fs::content::truncate(ino, len)?;
    crate::filemap::shrunk(ino, len);
    crate::obj::inotify::changed(ino, crate::obj::inotify::IN_MODIFY);
    Ok(0)
}

pub fn truncate(pathp: u64, len: u64) -> LxResult {
    if (len as i64) < 0 {
        return Err(EINVAL);
    }
    let ino = path::resolve(proc::cwd(), uaccess::path(pathp)?, true)?;
    if node::is_dir(ino) {
        return Err(EISDIR);
    }
    perm::check(ino, perm::MAY_WRITE)?;
    resize(ino, len)
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
    resize(f.ino, len)
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
        _ => (d.ops.ioctl)(f, req, arg).map(|n| n as i64),
    }
}
