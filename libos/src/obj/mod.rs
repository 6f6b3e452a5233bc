//! Open files as objects with method tables (paper 000 §5.2.1: "each
//! resource is associated with a table of pointers to functions implementing
//! each operation ... ExOS allows applications to install their own
//! methods").
//!
//! An open file description (`File`) lives in the shared arena, because
//! after fork parent and child share it (and its offset). The method table
//! (`Ops`) is chosen per descriptor in the process's private fd table, so a
//! program may install its own methods for a descriptor (`fd::set_ops`)
//! without affecting any other process.

pub mod console;
pub mod epoll;
pub mod eventfd;
pub mod fifo;
pub mod flags;
pub mod inet;
pub mod inotify;
pub mod ldisc;
pub mod memdev;
pub mod opath;
pub mod pipe;
pub mod pipemem;
pub mod pty;
pub mod regular;
pub mod signalfd;
pub mod timerfd;
pub mod unix;

use crate::errno::{EBADF, EINVAL, ENOTTY, ESPIPE};
use crate::fs::Ino;
use crate::fs::Stat;
use crate::shared;

/// What a `File` is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
pub enum Kind {
    Console,
    Null,
    Zero,
    Full,
    Random,
    Regular,
    Dir,
    PipeRead,
    PipeWrite,
    Epoll,
    EventFd,
    TimerFd,
    /// A signalfd (`signalfd`).
    SignalFd,
    Socket,
    /// An `O_PATH` descriptor's file (`opath.rs`).
    Path,
    /// An Internet socket (`inet`).
    Inet,
    /// A pseudo-terminal's master and slave (`pty`).
    PtyMaster,
    PtySlave,
    /// An inotify instance (`inotify`).
    Inotify,
}

/// An open file description, shared between the processes holding it.
#[repr(C)]
pub struct File {
    pub refs: u32,
    pub kind: Kind,
    /// Status flags (`flags`: access mode, append, nonblock).
    pub flags: u32,
    pub ino: Ino,
    pub off: u64,
    pub pipe: *mut pipe::Pipe,
    /// The object behind an epoll set, eventfd or timerfd (its module's
    /// type); null for the other kinds.
    pub data: *mut u8,
    /// The epoll interests watching this description (`epoll::Interest`,
    /// linked through `next_on_file`): they go when it closes.
    pub watch: *mut epoll::Interest,
}

impl File {
    /// The key a file lock names this file by (`locks`): its inode, or the
    /// description itself for a file without one.
    pub fn lock_key(&self) -> u64 {
        if self.ino != 0 {
            self.ino as u64
        } else {
            self as *const File as u64
        }
    }
}

/// The operations on an open file. Each returns a Linux result (negative
/// errno on failure).
pub struct Ops {
    pub read: fn(&mut File, &mut [u8]) -> i64,
    pub write: fn(&mut File, &[u8]) -> i64,
    pub seek: fn(&mut File, i64, u32) -> i64,
    pub stat: fn(&File, &mut Stat) -> i64,
    pub ioctl: fn(&mut File, u64, u64) -> i64,
    /// The last descriptor for this description has gone.
    pub close: fn(&mut File),
}

/// The default method table for a kind of file.
pub fn ops_for(kind: Kind) -> &'static Ops {
    match kind {
        Kind::Console => &console::OPS,
        Kind::Null | Kind::Zero | Kind::Full | Kind::Random => &memdev::OPS,
        Kind::Regular | Kind::Dir => &regular::OPS,
        Kind::PipeRead | Kind::PipeWrite => &pipe::OPS,
        Kind::Epoll => &epoll::OPS,
        Kind::EventFd => &eventfd::OPS,
        Kind::TimerFd => &timerfd::OPS,
        Kind::SignalFd => &signalfd::OPS,
        Kind::Socket => &unix::OPS,
        Kind::Path => &opath::OPS,
        Kind::Inet => &inet::OPS,
        Kind::PtyMaster | Kind::PtySlave => &pty::OPS,
        Kind::Inotify => &inotify::OPS,
    }
}

/// The default method table for open file `f`.
// The pointer is a live shared `File` by construction (a descriptor's or
// a passed one's), never a program's value.
#[allow(clippy::not_unsafe_ptr_arg_deref)]
pub fn ops_for_file(f: *mut File) -> &'static Ops {
    // SAFETY: `f` is live; its kind never changes.
    ops_for(unsafe { (*f).kind })
}

impl File {
    /// A description with one reference, not yet anywhere.
    pub fn fresh(kind: Kind, flags: u32, ino: Ino) -> File {
        File {
            refs: 1,
            kind,
            flags,
            ino,
            off: 0,
            pipe: core::ptr::null_mut(),
            data: core::ptr::null_mut(),
            watch: core::ptr::null_mut(),
        }
    }
}

/// Process `env` holds `delta` more (or fewer) descriptors of `f`, opened
/// with `ops` (every descriptor made or closed, under the big lock): the
/// ledgers of a pipe with frames of its own (`pipe::held`) and of a Unix
/// socket (`unix::held`: who is given a pipe passed over it) follow.
pub fn held(ops: &Ops, f: *mut File, env: u32, delta: i16) {
    pipe::held(f, env, delta);
    if core::ptr::eq(ops, &unix::OPS) {
        unix::held(f, env, delta);
    }
}

/// A new description with one reference, in the shared arena.
pub fn new(kind: Kind, flags: u32, ino: Ino) -> Result<*mut File, i64> {
    let p = shared::alloc(size_of::<File>(), 8) as *mut File;
    if p.is_null() {
        return Err(crate::errno::ENOMEM);
    }
    // SAFETY: a fresh block big enough for a File.
    unsafe { p.write(File::fresh(kind, flags, ino)) };
    Ok(p)
}

/// Allocates `v` in the shared arena (an object a description or another
/// object points at).
pub fn alloc_object<T>(v: T) -> Result<*mut T, i64> {
    let p = shared::alloc(size_of::<T>(), align_of::<T>()) as *mut T;
    if p.is_null() {
        return Err(crate::errno::ENOMEM);
    }
    // SAFETY: a fresh block big enough for a T.
    unsafe { p.write(v) };
    Ok(p)
}

/// Frees what `alloc_object` made.
///
/// # Safety
/// `p` came from `alloc_object::<T>` and nobody refers to it any more.
pub unsafe fn free_object<T>(p: *mut T) {
    // SAFETY: passed on from the caller.
    unsafe { shared::free(p as *mut u8, size_of::<T>(), align_of::<T>()) };
}

/// A new description of `kind` whose object (`data`) is `v`, allocated in
/// the shared arena (epoll sets, eventfds, timerfds, sockets).
pub fn new_with<T>(kind: Kind, flags: u32, v: T) -> Result<*mut File, i64> {
    let obj = alloc_object(v)?;
    match new(kind, flags, 0) {
        Ok(f) => {
            // SAFETY: just created.
            unsafe { (*f).data = obj as *mut u8 };
            Ok(f)
        }
        Err(e) => {
            // SAFETY: made above, referred to by nobody.
            unsafe { free_object(obj) };
            Err(e)
        }
    }
}

/// Drops one reference; the last one closes and frees the description.
// The pointer is a live shared `File` by construction (every caller got
// it from `obj::new` or a descriptor), never a program's value.
#[allow(clippy::not_unsafe_ptr_arg_deref)]
pub fn put(ops: &Ops, f: *mut File) {
    if pipemem::guarded(f as u64) && !pipemem::mapped(f as u64) {
        // A pipe end passed over a socket to a process that holds no end
        // of the pipe: its reference is lost (docs/protection.md).
        return;
    }
    // SAFETY: `f` is a live description (we hold a reference); the count
    // is read and written through the pointer, as `epoll::forget` changes
    // the file through it too.
    let last = unsafe {
        (*f).refs -= 1;
        (*f).refs == 0
    };
    if last {
        epoll::forget(f);
        crate::locks::released_by_file(f as u64);
        // SAFETY: live until freed below; nobody else refers to it now.
        (ops.close)(unsafe { &mut *f });
        // A pipe's own description goes with its frames (`pipemem`).
        if !pipemem::guarded(f as u64) {
            // SAFETY: allocated by `new` with this size; nobody refers to it.
            unsafe { shared::free(f as *mut u8, size_of::<File>(), 8) };
        }
    }
}

pub fn no_read(_: &mut File, _: &mut [u8]) -> i64 {
    -EBADF
}
pub fn no_write(_: &mut File, _: &[u8]) -> i64 {
    -EBADF
}
pub fn no_seek(_: &mut File, _: i64, _: u32) -> i64 {
    -ESPIPE
}
pub fn no_ioctl(_: &mut File, _: u64, _: u64) -> i64 {
    -ENOTTY
}

/// Poll events (`struct pollfd`'s bits).
pub const POLLIN: u16 = 0x1;
pub const POLLPRI: u16 = 0x2;
pub const POLLOUT: u16 = 0x4;
pub const POLLERR: u16 = 0x8;
pub const POLLHUP: u16 = 0x10;
pub const POLLNVAL: u16 = 0x20;
pub const POLLRDNORM: u16 = 0x40;
pub const POLLWRNORM: u16 = 0x100;

/// How a look may read shared state.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Look {
    /// With the big lock held: everything.
    Locked,
    /// Without it: pipes (their headers' atomics) and what is always
    /// ready, but not the console (its input is taken in under the lock).
    LockFree,
}

/// What open file `f` is ready for now (POLLRDNORM/POLLWRNORM come with
/// POLLIN/POLLOUT), or None if `look` cannot tell without the lock.
#[inline]
// The pointer is a live shared `File` by construction (a descriptor's or
// an interest's), never a program's value.
#[allow(clippy::not_unsafe_ptr_arg_deref)]
pub fn file_events(f: *mut File, look: Look) -> Option<u16> {
    // SAFETY: the caller holds a reference, so the file is live; its kind
    // and object never change once it is made, and they are read through
    // the pointer without forming a reference to the whole file (other
    // processes may be updating its other fields).
    let (kind, ring, data) = unsafe { ((*f).kind, (*f).pipe, (*f).data) };
    let ev = match kind {
        // SAFETY: `ring` is the ring of the pipe end this descriptor holds.
        Kind::PipeRead | Kind::PipeWrite => unsafe { pipe::events(kind, ring) },
        // SAFETY: `data` is the counter of the eventfd the caller holds.
        Kind::EventFd => unsafe { eventfd::events(data) },
        // SAFETY: `data` is the instance of the inotify the caller holds.
        Kind::Inotify => unsafe { inotify::events(data) },
        Kind::Console
        | Kind::Epoll
        | Kind::TimerFd
        | Kind::SignalFd
        | Kind::Socket
        | Kind::Inet
        | Kind::PtyMaster
        | Kind::PtySlave
            if look == Look::LockFree =>
        {
            return None
        }
        Kind::Console => POLLOUT | if console::input_ready() { POLLIN } else { 0 },
        Kind::Epoll => epoll::ready(f),
        // SAFETY: the caller holds the file open; the lock is held.
        Kind::TimerFd => timerfd::events(unsafe { &*f }),
        // SAFETY: the caller holds the file open; the lock is held.
        Kind::SignalFd => signalfd::events(unsafe { &*f }),
        // SAFETY: the caller holds the file open; the lock is held.
        Kind::Socket => unix::events(unsafe { &*f }),
        // SAFETY: as above.
        Kind::Inet => inet::events(unsafe { &*f }),
        // SAFETY: as above.
        Kind::PtyMaster | Kind::PtySlave => pty::events(unsafe { &*f }),
        Kind::Null | Kind::Zero | Kind::Full | Kind::Random | Kind::Regular | Kind::Dir => POLLIN | POLLOUT,
        // Not a descriptor poll or epoll accept (`fd::get`).
        Kind::Path => POLLNVAL,
    };
    Some(ev | if ev & POLLIN != 0 { POLLRDNORM } else { 0 } | if ev & POLLOUT != 0 { POLLWRNORM } else { 0 })
}

/// `FIONREAD`: how many bytes a read would find now, as an `int` at the
/// argument (pipes, stream sockets, regular files answer it).
pub const FIONREAD: u64 = 0x541b;

/// Answers `FIONREAD` with `n` at `arg`.
pub fn put_readable(arg: u64, n: u64) -> i64 {
    match crate::uaccess::put(arg, n.min(i32::MAX as u64) as i32) {
        Ok(_) => 0,
        Err(e) => -e,
    }
}
pub fn bad_whence() -> i64 {
    -EINVAL
}
