//! Pipes as rings in shared memory (paper 000 §5.2.1, paper 001 §5.1).
//! A read of an empty ring or a write to a full one fails with EAGAIN; on
//! a blocking end it first marks the end as waiting, and the caller
//! (`io.rs`) waits: it gives the rest of its time slice to the environment
//! that last used the other end (a directed yield, paper 001 §5.1: the
//! process that can make progress runs next, `wait_info`), then sleeps on
//! the ring, and tries again. The other side, once it has made progress,
//! hands the CPU straight to a waiting reader or writer when its call ends
//! (`lock::hand_off`). A write with no reader left fails with EPIPE; the
//! caller raises SIGPIPE, as Linux does.

use super::flags::{ACCMODE, NONBLOCK, RDWR, WRONLY};
use super::{no_ioctl, no_seek, File, Handle, Kind, Object, Ops};
use crate::errno::Errno;

/// `FIONREAD` on either end: the bytes in the ring.
fn ioctl(f: &mut File, req: u64, arg: u64) -> Result<usize, Errno> {
    if req != super::FIONREAD {
        return no_ioctl(f, req, arg);
    }
    let (tail, head) = positions(f);
    super::put_readable(arg, head - tail)
}
use crate::errno::{EAGAIN, EBADF, EBUSY, EINVAL, ENFILE, ENOMEM, EPERM, EPIPE, ETOOMANYREFS};
use crate::fs::{Ino, Stat};
use crate::shared;
use abi::syscall::frame_range::OWNER_SELF;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use user::sys;

/// The ring's size, and the writes never interleaved with others; the
/// header's layout is the one a wakeup predicate reads (`predicate`).
pub use crate::predicate::{CAPACITY, PIPE_BUF};
use crate::predicate::{HEADER, HEAD_AT, READERS_AT, ROOM_AT, TAIL_AT, WRITERS_AT};

/// The ring's header comes first and the ring is 64-byte aligned, so the
/// header (`readers` … `tail`, `HEADER` bytes) never straddles a page: a
/// wakeup predicate reads it as one region (`crate::wait`). The header's
/// words are atomics because `select` and `poll` read them without the
/// big lock (`events`); they change only with the lock held.
#[repr(C, align(64))]
pub struct Pipe {
    readers: AtomicU32,
    writers: AtomicU32,
    /// Total bytes ever written / read; their difference is the fill.
    head: AtomicU64,
    tail: AtomicU64,
    /// `size - PIPE_BUF`, for the predicate (`ROOM_AT`).
    room_mark: AtomicU64,
    /// The ring's size: a power of two from a page to `MAX_SIZE`
    /// (`CAPACITY` unless `F_SETPIPE_SZ` changed it); past `CAPACITY` the
    /// bytes are in `big`, else at the start of `buf`.
    size: usize,
    big: *mut u8,
    id: u64,
    /// The environments that last read and wrote (directed-yield targets).
    reader_env: u64,
    writer_env: u64,
    /// A reader whose read found the ring empty and opened its hand-over
    /// record (`handover`): a writer gives it the next bytes directly.
    posted: u64,
    /// A reader found the ring empty (a writer full) and is waiting: the
    /// other side hands it the CPU as soon as it has made progress.
    reader_waits: bool,
    writer_waits: bool,
    /// Read and write ends ever opened (a FIFO's opener waits for them).
    opened: [u64; 2],
    buf: [u8; CAPACITY],
    /// The tickets in flight to the Unix socket receiving on this ring
    /// (`park`), the oldest batch's first: in the ring's frames, where
    /// only the holders of its sockets read them.
    parked: usize,
    tickets: [Ticket; PARKED],
}

/// A pipe with frames of its own (its ring's base address) and its
/// range's ticket (`FRAME_RANGE`), which an end passed over a Unix socket
/// carries for the receiver to map them with (`pipemem::take`).
#[derive(Clone, Copy)]
pub struct Ticket {
    pub base: u64,
    pub ticket: u64,
}

/// Tickets a ring keeps in flight (they fit, with a pipe's descriptions
/// and ledger, in the page the ring ends in).
pub const PARKED: usize = 21;

const _: () = {
    assert!(core::mem::offset_of!(Pipe, readers) == READERS_AT as usize);
    assert!(core::mem::offset_of!(Pipe, writers) == WRITERS_AT as usize);
    assert!(core::mem::offset_of!(Pipe, head) == HEAD_AT as usize);
    assert!(core::mem::offset_of!(Pipe, tail) == TAIL_AT as usize);
    assert!(core::mem::offset_of!(Pipe, room_mark) == ROOM_AT as usize);
    assert!(HEADER as usize <= align_of::<Pipe>());
};

pub static OPS: Ops = Ops { read, write, seek: no_seek, stat, ioctl, close };

/// A new pipe: (read end, write end).
pub fn create(flags: u32) -> Result<(Handle<File>, Handle<File>), Errno> {
    let p = ring()?;
    let r = match open_end(p, Kind::PipeRead, flags & NONBLOCK, 0) {
        Ok(r) => r,
        Err(e) => {
            // SAFETY: made above; no end refers to it.
            unsafe { p.free() };
            return Err(e);
        }
    };
    match open_end(p, Kind::PipeWrite, flags & NONBLOCK, 0) {
        Ok(w) => Ok((r, w)),
        Err(e) => {
            super::put(&OPS, r);
            Err(e)
        }
    }
}

/// A pipe made by `pipe(2)`, or a FIFO's open ring (`fifo`): its ring and
/// header and its open file descriptions, in frames of its own
/// (`pipemem`).
#[repr(C)]
struct Guarded {
    pipe: Pipe,
    /// A pipe's read and write end; a FIFO's opens, each in a free entry
    /// (no references).
    ends: [File; ENDS],
    /// Which processes hold a pipe's ends, and how many descriptors of
    /// each: a holder the kernel ended (`env_destroy`, the abort protocol)
    /// never ran its exit path, so the others take its descriptors out
    /// (`reap_dead`) when they would otherwise wait for it for good. (Not
    /// kept for a FIFO.)
    holders: [Holder; HOLDERS],
    /// The frames' range (`FRAME_RANGE`): what an end passed over a Unix
    /// socket carries, for the receiver to map them (`pipemem::take`), and
    /// a FIFO's opener finds beside the name.
    ticket: u64,
    /// The FIFO whose ring this is; 0 for a pipe.
    ino: Ino,
}

/// Open descriptions a FIFO may have at once (`open` past them: ENFILE);
/// they fit, with the ledger, in the page the ring ends in.
const ENDS: usize = 64;

/// Processes a pipe keeps count of; more hold it uncounted (never taken
/// out for them).
const HOLDERS: usize = 64;

/// A process holding descriptors of a pipe.
#[derive(Clone, Copy)]
#[repr(C)]
struct Holder {
    /// The process's environment id; 0: a free entry.
    env: u32,
    /// Its descriptors of the read and the write end.
    ends: [u16; 2],
}

impl Holder {
    const NONE: Holder = Holder { env: 0, ends: [0, 0] };
}

/// Process `env` holds `delta` more (or fewer) descriptors of end `end`
/// of the object whose ledger is `hs` (a full ledger leaves a newcomer
/// uncounted).
fn count(hs: &mut [Holder], env: u32, end: usize, delta: i16) {
    let at = hs.iter().position(|h| h.env == env);
    let Some(i) = at.or_else(|| (delta > 0).then(|| hs.iter().position(|h| h.env == 0)).flatten()) else {
        return;
    };
    let h = &mut hs[i];
    h.env = env;
    h.ends[end] = h.ends[end].saturating_add_signed(delta);
    if h.ends == [0, 0] {
        h.env = 0;
    }
}

/// The pipe frames and the end (0 read, 1 write) behind description `f`,
/// if it is an end of a pipe with frames of its own (not a FIFO's).
fn guarded_end(f: Handle<File>) -> Option<(*mut Guarded, usize)> {
    if !super::pipemem::guarded(f.addr()) {
        return None;
    }
    let g = super::pipemem::base(f.addr()) as *mut Guarded;
    // SAFETY: the pipe frames holding `f`, mapped while it is held here.
    let (ends, ino) = unsafe { (&raw mut (*g).ends as *mut File, (*g).ino) };
    (ino == 0).then(|| (g, usize::from(f.as_ptr() != ends)))
}

/// Process `env` holds `delta` more (or fewer) descriptors of
/// description `f` (nothing unless `f` is an end of a pipe with frames of
/// its own). Called with the big lock held, for every descriptor made or
/// closed (`fd`).
pub fn held(f: Handle<File>, env: u32, delta: i16) {
    let Some((g, end)) = guarded_end(f) else { return };
    // SAFETY: the frames are mapped (a descriptor here names them); the
    // ledger is changed only under the big lock.
    count(unsafe { &mut (*g).holders }, env, end, delta);
}

/// Whether environment `env` has not ended (the kernel's table says).
fn alive(env: u32) -> bool {
    user::kinfo::env_by_id(env as u64).is_some_and(|e| e.state != abi::tables::env_state::EXITED)
}

/// Takes out the descriptors of the holders of `f`'s pipe that have
/// ended without closing them; whether there were any.
fn reap_dead(f: &File) -> bool {
    let Some((g, _)) = guarded_end(f.handle()) else { return false };
    let mut any = false;
    for i in 0..HOLDERS {
        // SAFETY: as in `held`; each entry is read by value.
        let h = unsafe { (*g).holders[i] };
        if h.env == 0 || alive(h.env) {
            continue;
        }
        // SAFETY: as in `held`.
        unsafe { (*g).holders[i] = Holder::NONE };
        for (end, &n) in h.ends.iter().enumerate() {
            // SAFETY: the pipe's own descriptions, live while counted.
            let d = unsafe { Handle::from_raw((&raw mut (*g).ends as *mut File).add(end)) };
            for _ in 0..n {
                super::put(&OPS, d);
            }
        }
        any = true;
    }
    any
}

/// The range ticket of the pipe whose frames hold `addr` (mapped here),
/// if it has frames of its own.
pub fn ticket(addr: u64) -> Option<u64> {
    if !super::pipemem::guarded(addr) {
        return None;
    }
    let g = super::pipemem::base(addr) as *const Guarded;
    // SAFETY: the pipe frames holding `addr`, mapped while it is held here.
    Some(unsafe { (*g).ticket })
}

/// Pages of a pipe's own frames.
pub const GUARDED_PAGES: u64 = size_of::<Guarded>().div_ceil(PAGE) as u64;

const _: () = assert!(GUARDED_PAGES * PAGE as u64 <= crate::layout::PIPE_SLOT);
const _: () = assert!(GUARDED_PAGES == size_of::<Pipe>().div_ceil(PAGE) as u64);

/// Bytes at the start of frames of their own (`own_frames`) that an
/// object other than a ring may take: a pseudo-terminal pair (`pty`).
pub const OWN_ROOM: usize = core::mem::offset_of!(Guarded, ends);

/// New zeroed frames of their own (`pipemem`, `GUARDED_PAGES`), made a
/// range with the rule (`owner`, `mode`: `FRAME_RANGE`'s `MAKE`) whose
/// ticket they keep where `ticket` reads it: a pipe's or FIFO's ring
/// (`make_guarded`), or a pseudo-terminal pair in their first `OWN_ROOM`
/// bytes (`pty`). Their address; ENFILE when the kernel keeps no more
/// ranges (for this user).
pub fn own_frames(owner: u64, mode: u64) -> Result<u64, Errno> {
    let g = super::pipemem::alloc(GUARDED_PAGES).ok_or(ENOMEM)? as *mut Guarded;
    let Ok(ticket) = sys::range_make(g as u64, GUARDED_PAGES, owner, mode) else {
        super::pipemem::release(g as u64, GUARDED_PAGES);
        return Err(ENFILE);
    };
    // SAFETY: fresh zeroed frames mapped for a `Guarded`, ours alone.
    unsafe { (*g).ticket = ticket };
    Ok(g as u64)
}

/// New frames of a pipe's own holding a fresh ring (`own_frames`); `ino`
/// is the FIFO it is for, 0 for `pipe(2)`.
fn make_guarded(owner: u64, mode: u64, ino: Ino) -> Result<*mut Guarded, Errno> {
    let g = own_frames(owner, mode)? as *mut Guarded;
    // SAFETY: fresh zeroed frames mapped for a `Guarded`, ours alone.
    unsafe {
        (*g).ino = ino;
        init(&raw mut (*g).pipe);
    }
    Ok(g)
}

/// `pipe(2)`: a new pipe in frames of its own, mapped only into this
/// process (and, by fork, its children that inherit an end): (read end,
/// write end).
pub fn create_guarded(flags: u32) -> Result<(Handle<File>, Handle<File>), Errno> {
    // Claimable unheld by its maker's user only; an end travels held.
    create_ruled(flags, OWNER_SELF, 0o600)
}

/// A new pipe in frames of its own, as `create_guarded`, whose range has
/// the rule (`owner`, `mode`: `FRAME_RANGE`'s `MAKE`): a bound datagram
/// socket's inbox, which senders claim by its file's bits (`inbox`), a
/// listener's queue, which connectors claim by them (`unix`).
pub fn create_ruled(flags: u32, owner: u64, mode: u64) -> Result<(Handle<File>, Handle<File>), Errno> {
    let g = make_guarded(owner, mode, 0)?;
    // SAFETY: fresh frames for a `Guarded`, ours alone.
    unsafe {
        let p = &raw mut (*g).pipe;
        let ends = &raw mut (*g).ends as *mut File;
        for (i, (kind, access)) in [(Kind::PipeRead, 0), (Kind::PipeWrite, WRONLY)].into_iter().enumerate() {
            let mut f = File::fresh(kind, (flags & NONBLOCK) | access, 0);
            f.obj = Object::Pipe(Handle::from_raw(p));
            ends.add(i).write(f);
            count_end(&mut *p, kind, false);
        }
        Ok((Handle::from_raw(ends), Handle::from_raw(ends.add(1))))
    }
}

/// FIFO `ino`'s ring, new, with no ends yet (`open_end` adds them), in
/// frames of its own made a range with the rule (`owner`, `mode`); its
/// address and the range's ticket, which the inode keeps for the next
/// opener (`fifo_at`).
pub fn make_fifo(ino: Ino, owner: u64, mode: u64) -> Result<(Handle<Pipe>, u64), Errno> {
    let g = make_guarded(owner, mode, ino)?;
    // SAFETY: just made, mapped here.
    unsafe { Ok((Handle::from_raw(&raw mut (*g).pipe), (*g).ticket)) }
}

/// The ring at `at` (an inode's word, so anything), if it is FIFO `ino`'s
/// and this process maps its frames.
pub fn fifo_at(at: u64, ino: Ino) -> Option<Handle<Pipe>> {
    let base = super::pipemem::base(at);
    if at != base || !super::pipemem::guarded(at) || !super::pipemem::mapped(at) {
        return None;
    }
    let g = base as *mut Guarded;
    // SAFETY: pipe frames mapped here; a FIFO's `ino` is written before
    // its address is given to the inode.
    (unsafe { (*g).ino } == ino).then(|| unsafe { Handle::from_raw(&raw mut (*g).pipe) })
}

/// Undoes `own_frames` (or `make_fifo`) for frames at `base` nothing
/// refers to.
pub fn unmake(base: u64) {
    if let Some(t) = ticket(base) {
        let _ = sys::range_drop(t, base);
    }
    super::pipemem::release(base, GUARDED_PAGES);
}

/// A new ring with no ends yet (`open_end` adds them), in the arena
/// (`create`'s, which only `bench_libos` makes now: pipes, FIFOs and Unix
/// sockets' rings and inboxes have frames of their own).
pub fn ring() -> Result<Handle<Pipe>, Errno> {
    let p = shared::alloc(size_of::<Pipe>(), align_of::<Pipe>()) as *mut Pipe;
    if p.is_null() {
        return Err(ENOMEM);
    }
    // SAFETY: a fresh block big enough, now a live ring.
    unsafe {
        init(p);
        Ok(Handle::from_raw(p))
    }
}

/// Writes a new ring's header.
///
/// # Safety
/// `p` is a block big enough for a `Pipe`, nobody else's yet.
unsafe fn init(p: *mut Pipe) {
    // SAFETY: written field by field (the buffer needs no initial value);
    // the id (its address) only labels fstat output.
    unsafe {
        let id = p as u64;
        (&raw mut (*p).readers).write(AtomicU32::new(0));
        (&raw mut (*p).writers).write(AtomicU32::new(0));
        (&raw mut (*p).head).write(AtomicU64::new(0));
        (&raw mut (*p).tail).write(AtomicU64::new(0));
        (&raw mut (*p).room_mark).write(AtomicU64::new((CAPACITY - PIPE_BUF) as u64));
        (*p).size = CAPACITY;
        (*p).big = core::ptr::null_mut();
        (*p).id = id;
        (*p).reader_env = crate::lock::my_id();
        (*p).writer_env = crate::lock::my_id();
        (*p).posted = 0;
        (*p).reader_waits = false;
        (*p).writer_waits = false;
        (*p).opened = [0, 0];
        (*p).parked = 0;
    }
}

/// Counts a new `kind` end of `p` (`both`: a FIFO's read end opened for
/// writing too).
fn count_end(p: &mut Pipe, kind: Kind, both: bool) {
    if kind == Kind::PipeRead || both {
        p.readers.fetch_add(1, Ordering::Release);
        p.opened[0] += 1;
    }
    if kind == Kind::PipeWrite || both {
        p.writers.fetch_add(1, Ordering::Release);
        p.opened[1] += 1;
    }
}

/// A new description of ring `p`'s `kind` end (`PipeRead`, `PipeWrite`),
/// counted among its ends; `flags` may ask for `NONBLOCK` and, on a read
/// end, `RDWR` (a FIFO opened for both: it counts as a reader and a
/// writer). `ino` is the FIFO it was opened through, 0 for `pipe`.
pub fn open_end(p: Handle<Pipe>, kind: Kind, flags: u32, ino: Ino) -> Result<Handle<File>, Errno> {
    let both = kind == Kind::PipeRead && flags & ACCMODE == RDWR;
    let access = if both {
        RDWR
    } else if kind == Kind::PipeWrite {
        WRONLY
    } else {
        0
    };
    let f = if super::pipemem::guarded(p.addr()) {
        free_end(p, File::fresh(kind, (flags & NONBLOCK) | access, ino))?
    } else {
        super::new(kind, (flags & NONBLOCK) | access, ino)?
    };
    // SAFETY: the new description is ours alone; `p` is live (the
    // caller's, or held by another end), and other processes change its
    // counts only under the big lock, which we hold.
    unsafe {
        f.get_mut().obj = Object::Pipe(p);
        count_end(p.get_mut(), kind, both);
    }
    Ok(f)
}

/// Puts description `f` in a free entry of the frames of ring `p` (a
/// FIFO's): ENFILE when there is none.
fn free_end(p: Handle<Pipe>, f: File) -> Result<Handle<File>, Errno> {
    let g = super::pipemem::base(p.addr()) as *mut Guarded;
    // SAFETY: `p`'s frames are mapped (the caller uses `p`); an entry with
    // no references is free (the frames start zeroed), read by its count
    // alone, and written whole.
    unsafe {
        let ends = &raw mut (*g).ends as *mut File;
        let free =
            (0..ENDS).map(|i| ends.add(i)).find(|&e| (&raw const (*e).refs).read() == 0).ok_or(ENFILE)?;
        free.write(f);
        Ok(Handle::from_raw(free))
    }
}

/// Ring `p`'s open (readers, writers) and how many read and write ends
/// were ever opened (a FIFO's opener waits for the other count to move).
///
/// # Safety
/// `p` is a live ring.
pub unsafe fn ends(p: *const Pipe) -> (u32, u32, [u64; 2]) {
    // SAFETY: passed on from the caller; read only.
    let p = unsafe { &*p };
    (p.readers(), p.writers(), p.opened)
}

/// The pipe behind an end (in the shared arena).
///
/// # Safety
/// No other reference to the pipe may be live while the result is (other
/// processes use it under the big lock, or through its atomic words).
unsafe fn pipe_of(f: &File) -> &'static mut Pipe {
    // SAFETY: a pipe end's ring stays while any end is open; the caller
    // guarantees the reference is the only one.
    unsafe { f.object::<Pipe>().get_mut() }
}

impl Pipe {
    /// `(tail, head)`, `tail` read first: both only grow and `tail <= head`
    /// holds at every instant, so even without the lock `head - tail`
    /// cannot underflow, and it is never less than the fill at the time
    /// `head` is read (a reader that sees data saw data that was there; a
    /// writer that sees room has it).
    #[inline]
    fn positions(&self) -> (u64, u64) {
        let tail = self.tail.load(Ordering::Acquire);
        (tail, self.head.load(Ordering::Acquire))
    }

    fn readers(&self) -> u32 {
        self.readers.load(Ordering::Relaxed)
    }

    fn writers(&self) -> u32 {
        self.writers.load(Ordering::Relaxed)
    }

    /// The ring's bytes (`size` of them).
    #[inline]
    fn ring(&self) -> &[u8] {
        if self.big.is_null() {
            &self.buf[..self.size]
        } else {
            // SAFETY: `big` holds `size` bytes while it is set (`set_size`).
            unsafe { core::slice::from_raw_parts(self.big, self.size) }
        }
    }

    #[inline]
    fn ring_mut(&mut self) -> &mut [u8] {
        if self.big.is_null() {
            &mut self.buf[..self.size]
        } else {
            // SAFETY: as in `ring`; `&mut self` is the only reference.
            unsafe { core::slice::from_raw_parts_mut(self.big, self.size) }
        }
    }

    /// Gives back a ring larger than `buf`.
    fn free_big(&mut self) {
        if !self.big.is_null() {
            // SAFETY: allocated by `set_size` with this size; going now.
            unsafe { shared::free(self.big, self.size, 64) };
            self.big = core::ptr::null_mut();
        }
    }
}

/// The largest ring `F_SETPIPE_SZ` makes (Linux's default
/// `/proc/sys/fs/pipe-max-size`).
pub const MAX_SIZE: usize = 1 << 20;
const PAGE: usize = crate::layout::PAGE as usize;

/// `F_GETPIPE_SZ`: pipe end `f`'s ring size.
pub fn size(f: &File) -> usize {
    // SAFETY: `f` keeps the pipe live; no other reference to it here.
    unsafe { pipe_of(f) }.size
}

/// `F_SETPIPE_SZ`: makes `f`'s ring `want` bytes (the argument's low 32
/// bits, as Linux reads it) rounded up to a power of two pages (Linux's
/// `round_pipe_size`) and returns the size: EINVAL past
/// 2^31, EPERM past `MAX_SIZE` but for root (Linux lets a process with
/// `CAP_SYS_RESOURCE` past it, which only root holds here), EBUSY if the
/// bytes it holds would not fit (counted in pages, as Linux counts its
/// buffers), ENOMEM if the arena has no room for the ring (past
/// `MAX_SIZE`, only while it leaves the arena its reserve for files and
/// pipes: `shared::alloc_data`).
/// The bytes keep their positions (a socket's passed descriptors are keyed
/// by them).
pub fn set_size(f: &File, want: u32) -> Result<usize, Errno> {
    if want > 1 << 31 {
        return Err(EINVAL);
    }
    let size = (want as usize).max(PAGE).next_power_of_two();
    let past_max = size > MAX_SIZE;
    if past_max && crate::fs::perm::me().uid[abi::ident::EFFECTIVE] != 0 {
        return Err(EPERM);
    }
    // SAFETY: `f` keeps the pipe live; no other reference to it here.
    let p = unsafe { pipe_of(f) };
    let (tail, head) = p.positions();
    let fill = (head - tail) as usize;
    if fill.div_ceil(PAGE) > size / PAGE {
        return Err(EBUSY);
    }
    if size == p.size {
        return Ok(size);
    }
    let big = if size > CAPACITY {
        let b = if past_max { shared::alloc_data(size, 64) } else { shared::alloc(size, 64) };
        if b.is_null() {
            return Err(ENOMEM);
        }
        b
    } else {
        core::ptr::null_mut()
    };
    let mut held = alloc::vec![0u8; fill];
    copy_out(p, tail, &mut held);
    p.free_big();
    (p.big, p.size) = (big, size);
    write_at(p, tail, &held);
    p.room_mark.store((size - PIPE_BUF) as u64, Ordering::Release);
    Ok(size)
}

// Inlined into `io::read_once`, which calls it directly: the read is
// short, and a call across codegen units cost a frame per message.
#[inline]
pub fn read(f: &mut File, buf: &mut [u8]) -> Result<usize, Errno> {
    if f.kind != Kind::PipeRead {
        return Err(EBADF);
    }
    // SAFETY: `f` keeps the pipe live; no other reference to it here.
    let p = unsafe { pipe_of(f) };
    p.reader_env = crate::lock::my_id();
    let (tail, head) = p.positions();
    let fill = (head - tail) as usize;
    if fill > 0 {
        let n = fill.min(buf.len());
        take(p, tail, &mut buf[..n]);
        if p.writer_waits {
            p.writer_waits = false;
            crate::lock::hand_off(p.writer_env);
        }
        return Ok(n);
    }
    if p.writers() == 0 || (reap_dead(f) && other_end_gone(f)) {
        return Ok(0);
    }
    // SAFETY: as above (`reap_dead` is done with it).
    let p = unsafe { pipe_of(f) };
    p.reader_waits |= f.flags & NONBLOCK == 0;
    Err(EAGAIN)
}

/// Whether the other end of `f` has no holder left.
fn other_end_gone(f: &File) -> bool {
    !other_end_open(f)
}

/// Writes `buf` to write end `f`: inline, the common case (a reader
/// exists and all of `buf` fits now); the rest out of line.
#[inline]
pub fn write(f: &mut File, buf: &[u8]) -> Result<usize, Errno> {
    if f.kind != Kind::PipeWrite && f.flags & ACCMODE != RDWR {
        return Err(EBADF);
    }
    // SAFETY: `f` keeps the pipe live; no other reference to it here.
    let p = unsafe { pipe_of(f) };
    p.writer_env = crate::lock::my_id();
    let (tail, head) = p.positions();
    if p.readers() > 0 && buf.len() <= p.size - (head - tail) as usize {
        if buf.len() >= super::handover::MIN && head == tail && p.posted != 0 && hand_over(f, p, head, buf) {
            return Ok(buf.len());
        }
        put(p, head, buf);
        // A reader that had emptied the ring is keeping up with us: it gets
        // the CPU as soon as this call ends, instead of finding the ring
        // empty later, blocking, and waiting for us to yield (ping-pong:
        // the answer is ready when we come to read it). Not after a long
        // write, unless it waits: we go on to our own wait, so its answer
        // finds us waiting and is handed over (`hand_over`).
        if p.reader_waits || (head == tail && buf.len() < super::handover::MIN) {
            p.reader_waits = false;
            crate::lock::hand_off(p.reader_env);
        }
        return Ok(buf.len());
    }
    write_rest(f, p, buf, head == tail)
}

/// Gives `buf` to the reader waiting on the empty ring with its buffer
/// (`handover`): straight into that buffer, and what it has no room for
/// into the ring after it. False if the kernel refused (the reader has
/// closed its record since, or ended): nothing was given.
#[inline(never)]
fn hand_over(f: &File, p: &mut Pipe, head: u64, buf: &[u8]) -> bool {
    let env = core::mem::take(&mut p.posted);
    let Ok(n) = sys::hand_over(env, buf.as_ptr() as u64, buf.len() as u64, key(f)) else {
        return false;
    };
    // The reader has taken them: both positions pass them (head first, so
    // a lockless look never sees the tail ahead of the head).
    let at = head + n;
    p.head.store(at, Ordering::Release);
    p.tail.store(at, Ordering::Release);
    if (n as usize) < buf.len() {
        put(p, at, &buf[n as usize..]);
    }
    super::handover::given();
    // No hand-off: the writer goes on to its own next wait (its read of
    // the answer, in a ping-pong), which yields to the reader; handing the
    // CPU over now would leave it not yet waiting when the answer comes,
    // and the answer would go through the ring.
    p.reader_waits = false;
    true
}

/// What names pipe end `f`'s ring in a hand-over record: its address.
pub fn key(f: &File) -> u64 {
    f.object::<Pipe>().addr()
}

/// A long blocking read of `buf` from pipe end `f` (a FIFO's too) found
/// the ring empty and is about to wait: its buffer is offered to the next
/// writer (`handover`). (A pipe's or a FIFO's frames are mapped only by
/// its holders.)
pub fn post(f: &File, buf: &mut [u8]) {
    if f.kind != Kind::PipeRead {
        return;
    }
    super::handover::open(key(f), buf);
    // SAFETY: `f` keeps the pipe live; no other reference to it here.
    unsafe { pipe_of(f) }.posted = crate::lock::my_id();
}

/// `write`'s other cases: no reader, or not all of `buf` fits now (`was_empty`:
/// the ring was empty when the write began).
#[inline(never)]
fn write_rest(f: &File, p: &mut Pipe, buf: &[u8], was_empty: bool) -> Result<usize, Errno> {
    let mut done = 0;
    while done < buf.len() {
        if p.readers() == 0 {
            if done == 0 {
                return Err(EPIPE);
            }
            break;
        }
        let (tail, head) = p.positions();
        let room = p.size - (head - tail) as usize;
        let want = buf.len() - done;
        // Small writes go in whole or wait; big ones may go in pieces.
        if room > 0 && (want > PIPE_BUF || room >= want) {
            let n = room.min(want);
            put(p, head, &buf[done..done + n]);
            done += n;
            continue;
        }
        // What went in counts; the caller comes back for the rest.
        p.writer_waits |= f.flags & NONBLOCK == 0;
        if done == 0 {
            // A reader the kernel ended counts until taken out: the
            // caller's next try finds it gone (EPIPE).
            reap_dead(f);
            return Err(EAGAIN);
        }
        break;
    }
    if p.reader_waits || (was_empty && done > 0) {
        p.reader_waits = false;
        crate::lock::hand_off(p.reader_env);
    }
    Ok(done)
}

/// Whether read end `f` holds bytes (true) or has no writer left
/// (false), as `read` would find it; EAGAIN if neither, the end marked
/// waiting unless `nonblock` (`splice`, `tee`: the caller waits).
pub fn readable(f: &File, nonblock: bool) -> Result<bool, Errno> {
    // SAFETY: `f` keeps the pipe live; no other reference to it here.
    let p = unsafe { pipe_of(f) };
    let (tail, head) = p.positions();
    if head > tail {
        return Ok(true);
    }
    if p.writers() == 0 {
        return Ok(false);
    }
    p.reader_waits |= !nonblock;
    Err(EAGAIN)
}

/// Whether write end `f` has room, as `write` would find it: EPIPE with no
/// reader left, EAGAIN when full, the end marked waiting unless
/// `nonblock` (`splice`, `tee`: the caller waits, and raises SIGPIPE).
pub fn writable(f: &File, nonblock: bool) -> Result<(), Errno> {
    // SAFETY: `f` keeps the pipe live; no other reference to it here.
    let p = unsafe { pipe_of(f) };
    if p.readers() == 0 {
        return Err(EPIPE);
    }
    let (tail, head) = p.positions();
    if head - tail < p.size as u64 {
        return Ok(());
    }
    p.writer_waits |= !nonblock;
    Err(EAGAIN)
}

/// Copies up to `dst.len()` of read end `f`'s bytes without taking them
/// (`splice` takes them with `read` once written on; `tee` leaves them):
/// how many.
pub fn peek(f: &File, dst: &mut [u8]) -> usize {
    // SAFETY: `f` keeps the pipe live; no other reference to it here.
    let p = unsafe { pipe_of(f) };
    let (tail, head) = p.positions();
    let n = ((head - tail) as usize).min(dst.len());
    copy_out(p, tail, &mut dst[..n]);
    n
}

/// Appends `src` to the ring at `head`, its current head (the caller
/// checked there is room).
#[inline]
fn put(p: &mut Pipe, head: u64, src: &[u8]) {
    write_at(p, head, src);
    p.head.store(head + src.len() as u64, Ordering::Release);
}

/// Writes `src` into the ring at position `pos`.
#[inline]
fn write_at(p: &mut Pipe, pos: u64, src: &[u8]) {
    let n = src.len();
    let ring = p.ring_mut();
    let at = pos as usize & (ring.len() - 1);
    let first = n.min(ring.len() - at);
    copy_small(&mut ring[at..at + first], &src[..first]);
    if first < n {
        crate::copy::copy(&mut ring[..n - first], &src[first..]);
    }
}

/// Fills `dst` from the ring at `tail`, its current tail (the caller
/// checked it holds that much), and takes the bytes.
#[inline]
fn take(p: &mut Pipe, tail: u64, dst: &mut [u8]) {
    copy_out(p, tail, dst);
    p.tail.store(tail + dst.len() as u64, Ordering::Release);
}

/// Fills `dst` from the ring at `tail`, leaving the bytes there.
#[inline]
fn copy_out(p: &Pipe, tail: u64, dst: &mut [u8]) {
    let n = dst.len();
    let ring = p.ring();
    let at = tail as usize & (ring.len() - 1);
    let first = n.min(ring.len() - at);
    copy_small(&mut dst[..first], &ring[at..at + first]);
    if first < n {
        crate::copy::copy(&mut dst[first..], &ring[..n - first]);
    }
}

/// A copy where single bytes (the usual message in a ping-pong) skip the
/// string instructions.
#[inline]
fn copy_small(dst: &mut [u8], src: &[u8]) {
    if let ([d], [s]) = (&mut *dst, src) {
        *d = *s;
    } else {
        crate::copy::copy(dst, src);
    }
}

/// Readiness for `poll` of the pipe end `kind` on ring `pipe`: the read
/// end is readable when the ring holds data, hung up when no writer is
/// left; the write end is writable when a `PIPE_BUF` write would go in at
/// once, in error when no reader is left. Needs no lock: it only loads the
/// header's atomics, and each answer held at some instant of the call (a
/// count of 0 never grows again: no end is left to duplicate).
///
/// `ring` is the ring of an end the caller holds open.
#[inline]
pub fn events(kind: Kind, ring: Handle<Pipe>) -> u16 {
    use super::{POLLERR, POLLHUP, POLLIN, POLLOUT};
    // SAFETY: the caller's end keeps the ring allocated, and the arena
    // stays mapped; the header is only read through atomics.
    let p = unsafe { ring.get() };
    let (tail, head) = p.positions();
    let fill = (head - tail) as usize;
    if kind == Kind::PipeRead {
        (if fill > 0 { POLLIN } else { 0 }) | (if p.writers() == 0 { POLLHUP } else { 0 })
    } else {
        let room = fill as u64 <= p.room_mark.load(Ordering::Acquire);
        (if room { POLLOUT } else { 0 }) | (if p.readers() == 0 { POLLERR } else { 0 })
    }
}

/// A number that changes whenever end `f` has something new for an
/// edge-triggered epoll interest: data written (read end), room made
/// (write end), or the other end gone (the position only grows, so adding
/// one for that never meets an earlier value).
pub fn stamp(f: &File) -> u64 {
    // SAFETY: `f` keeps the pipe live; no other reference to it here.
    let p = unsafe { pipe_of(f) };
    if f.kind == Kind::PipeRead {
        p.head.load(Ordering::Acquire) + (p.writers() == 0) as u64
    } else {
        p.tail.load(Ordering::Acquire) + (p.readers() == 0) as u64
    }
}

/// The ring's (tail, head) positions: bytes ever read and written (a
/// socket's queue of passed descriptors is keyed by them).
pub fn positions(f: &File) -> (u64, u64) {
    // SAFETY: `f` keeps the pipe live; no other reference to it here.
    unsafe { pipe_of(f) }.positions()
}

/// Keeps `tickets` in ring `f`'s frames after those parked before, for
/// the batch of descriptors about to travel through it; ETOOMANYREFS
/// (Linux's answer for too many descriptors in flight) when they do not
/// fit.
pub fn park(f: &File, tickets: &[Ticket]) -> Result<(), Errno> {
    // SAFETY: `f` keeps the pipe live; no other reference to it here.
    let p = unsafe { pipe_of(f) };
    let at = p.parked.min(PARKED);
    let to = at + tickets.len();
    if to > PARKED {
        return Err(ETOOMANYREFS);
    }
    p.tickets[at..to].copy_from_slice(tickets);
    p.parked = to;
    Ok(())
}

/// Takes `n` of ring `f`'s parked tickets out, after the first `skip`
/// (the batches queued before theirs).
pub fn unpark(f: &File, skip: usize, n: usize) -> Vec<Ticket> {
    // SAFETY: `f` keeps the pipe live; no other reference to it here.
    let p = unsafe { pipe_of(f) };
    let len = p.parked.min(PARKED);
    let (from, to) = (skip.min(len), (skip + n).min(len));
    let out = p.tickets[from..to].to_vec();
    p.tickets.copy_within(to..len, from);
    p.parked = len - (to - from);
    out
}

/// Bytes a write could put in the ring now.
pub fn room(f: &File) -> usize {
    let (tail, head) = positions(f);
    // SAFETY: `f` keeps the pipe live; no other reference to it here.
    unsafe { pipe_of(f) }.size - (head - tail) as usize
}

/// Whether the other end of `f` is still open somewhere.
pub fn other_end_open(f: &File) -> bool {
    // SAFETY: `f` keeps the pipe live; no other reference to it here.
    let p = unsafe { pipe_of(f) };
    if f.kind == Kind::PipeRead {
        p.writers() > 0
    } else {
        p.readers() > 0
    }
}

/// The ring's header address (what a wakeup predicate reads) and the
/// environment that last used the other end (a directed yield's target).
pub fn wait_info(f: &File) -> (u64, u64) {
    // SAFETY: `f` keeps the pipe live; no other reference to it here.
    let p = unsafe { pipe_of(f) };
    let peer = if f.kind == Kind::PipeRead { p.writer_env } else { p.reader_env };
    (f.object::<Pipe>().addr(), peer)
}

fn stat(f: &File, st: &mut Stat) -> Result<(), Errno> {
    if f.ino != 0 {
        *st = crate::fs::stat::of(f.ino);
        return Ok(());
    }
    st.mode = crate::fs::S_IFIFO | 0o600;
    // SAFETY: `f` keeps the pipe live; no other reference to it here.
    st.ino = unsafe { pipe_of(f) }.id;
    st.blksize = 4096;
    Ok(())
}

fn close(f: &mut File) {
    // SAFETY: `f` keeps the pipe live; no other reference to it here.
    let p = unsafe { pipe_of(f) };
    let drop = |count: &AtomicU32| count.store(count.load(Ordering::Relaxed) - 1, Ordering::Release);
    if f.kind == Kind::PipeRead {
        drop(&p.readers);
    }
    if f.kind == Kind::PipeWrite || f.flags & ACCMODE == RDWR {
        drop(&p.writers);
    }
    let gone = p.readers() == 0 && p.writers() == 0;
    let ring = f.object::<Pipe>();
    if f.ino != 0 {
        fifo_closed(f.ino, ring.as_ptr(), gone);
    }
    if gone {
        p.free_big();
        // A pipe's own frames go with their last mapping (`pipemem`), once
        // the range that kept them for ends in flight is over.
        if let Some(t) = ticket(ring.addr()) {
            let _ = sys::range_drop(t, super::pipemem::base(ring.addr()));
        } else {
            // SAFETY: allocated by `ring`; no end refers to it any more.
            unsafe { shared::free(ring.as_ptr() as *mut u8, size_of::<Pipe>(), align_of::<Pipe>()) };
        }
    }
}

/// An end of FIFO `ino` on `ring` has closed; `gone` when it was the
/// last: the inode lets go of the ring (`fifo.rs`).
fn fifo_closed(ino: Ino, ring: *mut Pipe, gone: bool) {
    crate::fs::node::update(ino, |n| {
        if gone && n.data == ring as *mut u8 {
            n.data = core::ptr::null_mut();
            n.ticket = 0;
            n.borrowed = false;
        }
        n.opens -= 1;
    });
    crate::fs::node::release(ino);
}
