//! Open files as objects with method tables (paper 000 §5.2.1: "each
//! resource is associated with a table of pointers to functions implementing
//! each operation ... ExOS allows applications to install their own
//! methods").
//!
//! An open file description (`File`) is shared: after fork parent and
//! child share it (and its offset). It lives in frames that only the
//! processes sharing it map: a pipe's (`pipemem`) or a page of
//! descriptions (`descpage`), not in the shared arena (but for sockets'
//! own, `new`). The method table
//! (`Ops`) is chosen per descriptor in the process's private fd table, so a
//! program may install its own methods for a descriptor (`fd::set_ops`)
//! without affecting any other process.

pub mod console;
pub mod descpage;
pub mod dnotify;
pub mod epoll;
pub mod eventfd;
pub mod fifo;
pub mod flags;
pub mod handle;
pub mod handover;
pub mod inbox;
pub mod inet;
pub mod inotify;
pub mod ldisc;
pub mod memdev;
pub mod netlink;
pub mod opath;
pub mod pidfd;
pub mod pipe;
pub mod pipemem;
pub mod pty;
pub mod regular;
pub mod signalfd;
pub mod timerfd;
pub mod unix;

use crate::errno::Errno;
use crate::errno::{EBADF, ENOTTY, ESPIPE};
use crate::fs::Ino;
use crate::fs::Stat;
use crate::shared;
use alloc::vec::Vec;
pub use handle::Handle;

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
    /// A process named by `pidfd_open` (`pidfd.rs`).
    PidFd,
    /// A route netlink socket (`netlink.rs`).
    Netlink,
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
    /// What the description is open on, beyond its inode; fixed once made.
    pub obj: Object,
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

/// A description, named by a descriptor, an epoll interest, a socket's
/// queue ...: the holder keeps a reference (`refs`), so it is live.
impl Handle<File> {
    /// Its kind, which never changes once made (read without the lock).
    #[inline]
    pub fn kind(self) -> Kind {
        // SAFETY: live (a reference is held); the field is read alone,
        // without a reference to the whole file, which other processes
        // may be changing.
        unsafe { (*self.as_ptr()).kind }
    }

    /// Its object, which never changes once made (read as `kind`).
    #[inline]
    pub fn obj(self) -> Object {
        // SAFETY: as in `kind`.
        unsafe { (*self.as_ptr()).obj }
    }
}

/// The object behind a description: a typed handle into the shared arena
/// (`handle.rs`), by kind. `Kind` stays beside it, as it says more than
/// the object: which end of a pipe, which device, file or directory, and
/// the kinds with no object at all.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Object {
    /// Files, directories, devices, the console, `O_PATH`: the inode (or
    /// nothing) is all.
    None,
    /// Either end of a pipe or FIFO: its ring.
    Pipe(Handle<pipe::Pipe>),
    Epoll(Handle<epoll::Epoll>),
    EventFd(Handle<eventfd::EventFd>),
    TimerFd(Handle<timerfd::Timer>),
    SignalFd(Handle<signalfd::SignalFd>),
    /// A Unix socket (`Kind::Socket`).
    Unix(Handle<unix::Socket>),
    Inet(Handle<inet::Inet>),
    Inotify(Handle<inotify::Inotify>),
    /// Either end of a pseudo-terminal: the pair.
    Pty(Handle<pty::Pair>),
    PidFd(Handle<pidfd::PidFd>),
    Netlink(Handle<netlink::Netlink>),
}

/// A type of object a description can hold: how it sits in `Object`.
pub trait Typed: Sized {
    fn wrap(h: Handle<Self>) -> Object;
    fn find(o: Object) -> Option<Handle<Self>>;
}

/// `Typed` for each object type, by its `Object` variant.
macro_rules! typed {
    ($($variant:ident: $ty:ty),* $(,)?) => {$(
        impl Typed for $ty {
            fn wrap(h: Handle<Self>) -> Object {
                Object::$variant(h)
            }
            fn find(o: Object) -> Option<Handle<Self>> {
                if let Object::$variant(h) = o {
                    Some(h)
                } else {
                    None
                }
            }
        }
    )*};
}

typed! {
    Pipe: pipe::Pipe,
    Epoll: epoll::Epoll,
    EventFd: eventfd::EventFd,
    TimerFd: timerfd::Timer,
    SignalFd: signalfd::SignalFd,
    Unix: unix::Socket,
    Inet: inet::Inet,
    Inotify: inotify::Inotify,
    Pty: pty::Pair,
    PidFd: pidfd::PidFd,
    Netlink: netlink::Netlink,
}

impl Object {
    /// The handle on the `T` this is. A description's kind fixes its
    /// object when it is made (`new_with`), and each kind's methods ask
    /// only for their own, so another answer is a bug in lxrt: it panics.
    #[inline]
    pub fn handle<T: Typed>(self) -> Handle<T> {
        T::find(self).unwrap_or_else(|| wrong_object(self))
    }

    /// The object's address, the same in every process (0 for none): a
    /// socket's inode number in `fstat`, for one.
    pub fn addr(self) -> u64 {
        match self {
            Object::None => 0,
            Object::Pipe(h) => h.addr(),
            Object::Epoll(h) => h.addr(),
            Object::EventFd(h) => h.addr(),
            Object::TimerFd(h) => h.addr(),
            Object::SignalFd(h) => h.addr(),
            Object::Unix(h) => h.addr(),
            Object::Inet(h) => h.addr(),
            Object::Inotify(h) => h.addr(),
            Object::Pty(h) => h.addr(),
            Object::PidFd(h) => h.addr(),
            Object::Netlink(h) => h.addr(),
        }
    }
}

#[cold]
#[inline(never)]
fn wrong_object(o: Object) -> ! {
    panic!("lxrt: a description's object is not its kind's: {o:?}")
}

/// The operations on an open file. A failure is a positive Linux error
/// number, as everywhere in lxrt (`LxResult`); it is negated only when it
/// goes back to the program (`linux::ret`).
pub struct Ops {
    /// Bytes read into the buffer.
    pub read: fn(&mut File, &mut [u8]) -> Result<usize, Errno>,
    /// Bytes taken from the buffer.
    pub write: fn(&mut File, &[u8]) -> Result<usize, Errno>,
    /// The new offset.
    pub seek: fn(&mut File, i64, u32) -> Result<u64, Errno>,
    pub stat: fn(&File, &mut Stat) -> Result<(), Errno>,
    /// The request's result (0 for most).
    pub ioctl: fn(&mut File, u64, u64) -> Result<usize, Errno>,
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
        Kind::PidFd => &pidfd::OPS,
        Kind::TimerFd => &timerfd::OPS,
        Kind::SignalFd => &signalfd::OPS,
        Kind::Socket => &unix::OPS,
        Kind::Path => &opath::OPS,
        Kind::Inet => &inet::OPS,
        Kind::PtyMaster | Kind::PtySlave => &pty::OPS,
        Kind::Inotify => &inotify::OPS,
        Kind::Netlink => &netlink::OPS,
    }
}

/// The default method table for open file `f`. A description in a pipe's
/// own frames is a pipe end, known without reading it: a passed end may
/// sit in frames this process no longer maps (`put` then drops it
/// unread).
pub fn ops_for_file(f: Handle<File>) -> &'static Ops {
    if pipemem::guarded(f.addr()) {
        return &pipe::OPS;
    }
    if pipemem::own(f.addr()) && !pipemem::mapped(f.addr()) {
        // A passed description in a page not mapped here: `put` drops it
        // unread, these methods are never called.
        return &opath::OPS;
    }
    ops_for(f.kind())
}

/// Whether `found` holds for the base of frames of their own (a pipe's,
/// a description page) that a descriptor of `f` needs mapped: its own
/// pipe's, for a pipe end; its description page, for any other; a
/// socketpair's rings, for a socket (`unix::any_ring`); its pair's, for a
/// pty end (`pty`: frames of a pipe's kind); for an epoll set, those of
/// the files it watches (its waits read them, its last close unlinks
/// from them). Allocates nothing.
fn any_pipe_of(f: Handle<File>, found: &mut impl FnMut(u64) -> bool) -> bool {
    if pipemem::guarded(f.addr()) {
        return found(pipemem::base(f.addr()));
    }
    if pipemem::in_descs(f.addr()) && found(pipemem::base(f.addr())) {
        return true;
    }
    match f.kind() {
        Kind::Epoll => epoll::any_watched_pipe(f, found),
        // SAFETY: a live description (the caller holds it), read only.
        Kind::Socket => unix::any_ring(unsafe { f.get() }, found),
        // The pair the end names (in frames of a pipe's kind).
        Kind::PtyMaster | Kind::PtySlave => {
            // SAFETY: a live description (the caller holds it), read only.
            let at = unsafe { f.get() }.obj.addr();
            pipemem::guarded(at) && found(pipemem::base(at))
        }
        _ => false,
    }
}

/// Whether file `f` can be used here: not a description in frames this
/// process does not map, nor a socket or a pty end whose frames it does
/// not map (a ticket that came with it was refused, `pipemem::take`).
pub fn usable(f: Handle<File>) -> bool {
    if pipemem::own(f.addr()) && !pipemem::mapped(f.addr()) {
        return false;
    }
    if pipemem::guarded(f.addr()) {
        return true;
    }
    !matches!(f.kind(), Kind::Socket | Kind::PtyMaster | Kind::PtySlave)
        || !any_pipe_of(f, &mut |b| !pipemem::mapped(b))
}

/// The bases of the pipe frames a descriptor of `f` needs mapped
/// (`any_pipe_of`).
pub fn pipes_of(f: Handle<File>) -> Vec<u64> {
    let mut bases = Vec::new();
    any_pipe_of(f, &mut |b| {
        bases.push(b);
        false
    });
    bases
}

/// The range ticket of the frames at `base` (mapped here: a pipe's or a
/// description page, `descpage::lend`), for a description passed over a
/// Unix socket to carry.
pub fn ticket(base: u64) -> Option<u64> {
    if pipemem::in_descs(base) {
        return Some(descpage::lend(base));
    }
    pipe::ticket(base)
}

/// Whether a descriptor of `f` needs the pipe frames at `base` mapped
/// (`any_pipe_of`): every close of a pipe end asks it of each descriptor.
pub fn needs_pipe(f: Handle<File>, base: u64) -> bool {
    any_pipe_of(f, &mut |b| b == base)
}

impl File {
    /// A description with one reference, not yet anywhere: only for
    /// writing into its place in a description page (`new`) or a pipe's
    /// frames, so that every `File` there is (`handle`).
    fn fresh(kind: Kind, flags: u32, ino: Ino) -> File {
        File { refs: 1, kind, flags, ino, off: 0, obj: Object::None, watch: core::ptr::null_mut() }
    }

    /// The handle on this description. Every `File` is made in a
    /// description page (`new`) or in a pipe's own frames
    /// (`pipe::create_guarded`), never anywhere else, so a reference to one
    /// is a place there.
    #[inline]
    pub fn handle(&self) -> Handle<File> {
        // SAFETY: live while referred to; in the arena, as above.
        unsafe { Handle::from_raw(self as *const File as *mut File) }
    }

    /// The object behind this description, a `T` (`Object::handle`).
    #[inline]
    pub fn object<T: Typed>(&self) -> Handle<T> {
        self.obj.handle()
    }
}

/// A new description with one reference: in this process's current
/// description page (`descpage`), or a socket's, or an end of a ring in
/// the arena (`bench_libos`'s only), in the shared arena (a connection's
/// is made by the connecting process for the accepting one, which has no
/// way yet to map the maker's page: docs/protection.md).
pub fn new(kind: Kind, flags: u32, ino: Ino) -> Result<Handle<File>, Errno> {
    let f = File::fresh(kind, flags, ino);
    match kind {
        Kind::Socket | Kind::Inet | Kind::Netlink | Kind::PipeRead | Kind::PipeWrite => Handle::alloc(f),
        _ => descpage::alloc(f),
    }
}

/// Allocates `v` in the shared arena (an object a description or another
/// object points at).
pub fn alloc_object<T>(v: T) -> Result<*mut T, Errno> {
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

/// A new description of `kind` whose object is `v`, allocated in the
/// shared arena (epoll sets, eventfds, timerfds, signalfds, sockets).
pub fn new_with<T: Typed>(kind: Kind, flags: u32, v: T) -> Result<Handle<File>, Errno> {
    let obj = Handle::alloc(v)?;
    match new(kind, flags, 0) {
        Ok(f) => {
            // SAFETY: just created, ours alone.
            unsafe { f.get_mut().obj = T::wrap(obj) };
            Ok(f)
        }
        Err(e) => {
            // SAFETY: made above, referred to by nobody.
            unsafe { obj.free() };
            Err(e)
        }
    }
}

/// Drops one reference; the last one closes and frees the description.
pub fn put(ops: &Ops, f: Handle<File>) {
    let pty = || matches!(f.kind(), Kind::PtyMaster | Kind::PtySlave);
    if (pipemem::own(f.addr()) || pty()) && !usable(f) {
        // A description, pipe or pty end passed over a socket to a process
        // that could not map its frames with their ticket: its reference
        // is lost
        // (docs/protection.md).
        return;
    }
    // SAFETY: `f` is a live description (we hold a reference); the count
    // is read and written through the pointer, as `epoll::forget` changes
    // the file through it too.
    let last = unsafe {
        (*f.as_ptr()).refs -= 1;
        (*f.as_ptr()).refs == 0
    };
    if last {
        epoll::forget(f);
        crate::locks::released_by_file(f.addr());
        // SAFETY: live until freed below; nobody else refers to it now.
        (ops.close)(unsafe { f.get_mut() });
        // A pipe's own description goes with its frames (`pipemem`).
        if pipemem::in_descs(f.addr()) {
            descpage::free(f);
        } else if !pipemem::guarded(f.addr()) {
            // SAFETY: allocated in the arena by `new`; nobody refers to it.
            unsafe { f.free() };
        }
    }
}

pub fn no_read(_: &mut File, _: &mut [u8]) -> Result<usize, Errno> {
    Err(EBADF)
}
pub fn no_write(_: &mut File, _: &[u8]) -> Result<usize, Errno> {
    Err(EBADF)
}
pub fn no_seek(_: &mut File, _: i64, _: u32) -> Result<u64, Errno> {
    Err(ESPIPE)
}
/// `fstat` of a socket of any family: a socket inode named by its object.
pub fn socket_stat(f: &File, st: &mut Stat) -> Result<(), Errno> {
    st.mode = crate::fs::S_IFSOCK | 0o777;
    st.ino = f.obj.addr() % 1_000_000_007;
    st.blksize = 4096;
    Ok(())
}

pub fn no_ioctl(_: &mut File, _: u64, _: u64) -> Result<usize, Errno> {
    Err(ENOTTY)
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
/// POLLIN/POLLOUT), or None if `look` cannot tell without the lock. A
/// pipe's end, select's and poll's usual case, is answered in line; the
/// other kinds' match is too large to inline and cost a pipe 15
/// instructions as a call (`select_a`).
#[inline]
pub fn file_events(f: Handle<File>, look: Look) -> Option<u16> {
    let kind = f.kind();
    let ev = match kind {
        Kind::PipeRead | Kind::PipeWrite => pipe::events(kind, f.obj().handle()),
        _ => other_events(f, kind, look)?,
    };
    Some(ev | if ev & POLLIN != 0 { POLLRDNORM } else { 0 } | if ev & POLLOUT != 0 { POLLWRNORM } else { 0 })
}

/// `file_events` for the kinds other than a pipe's ends (it answers those
/// too, so the match stays whole), without the NORM bits.
#[inline(never)]
fn other_events(f: Handle<File>, kind: Kind, look: Look) -> Option<u16> {
    let obj = f.obj();
    Some(match kind {
        Kind::PipeRead | Kind::PipeWrite => pipe::events(kind, obj.handle()),
        Kind::EventFd => eventfd::events(obj.handle()),
        Kind::Inotify => inotify::events(obj.handle()),
        Kind::PidFd => pidfd::events(obj.handle()),
        Kind::Console
        | Kind::Epoll
        | Kind::TimerFd
        | Kind::SignalFd
        | Kind::Socket
        | Kind::Inet
        | Kind::Netlink
        | Kind::PtyMaster
        | Kind::PtySlave
            if look == Look::LockFree =>
        {
            return None
        }
        Kind::Console => POLLOUT | if console::input_ready() { POLLIN } else { 0 },
        Kind::Epoll => epoll::ready(f),
        // SAFETY: the caller holds the file open; the lock is held.
        Kind::TimerFd => timerfd::events(unsafe { f.get() }),
        // SAFETY: the caller holds the file open; the lock is held.
        Kind::SignalFd => signalfd::events(unsafe { f.get() }),
        // SAFETY: the caller holds the file open; the lock is held.
        Kind::Socket => unix::events(unsafe { f.get() }),
        // SAFETY: as above.
        Kind::Inet => inet::events(unsafe { f.get() }),
        // SAFETY: as above.
        Kind::Netlink => netlink::events(unsafe { f.get() }),
        // SAFETY: as above.
        Kind::PtyMaster | Kind::PtySlave => pty::events(unsafe { f.get() }),
        Kind::Null | Kind::Zero | Kind::Full | Kind::Random | Kind::Regular | Kind::Dir => POLLIN | POLLOUT,
        // Not a descriptor poll or epoll accept (`fd::get`).
        Kind::Path => POLLNVAL,
    })
}

/// `FIONREAD`: how many bytes a read would find now, as an `int` at the
/// argument (pipes, stream sockets, regular files answer it).
pub const FIONREAD: u64 = 0x541b;

/// Answers `FIONREAD` with `n` at `arg`.
pub fn put_readable(arg: u64, n: u64) -> Result<usize, Errno> {
    crate::uaccess::put(arg, n.min(i32::MAX as u64) as i32).map(|_| 0)
}
