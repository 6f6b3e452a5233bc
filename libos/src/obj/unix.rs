//! Unix-domain sockets: stream, datagram and sequenced-packet, made in
//! pairs (`socketpair`) or by name in the file system (bind, listen,
//! connect, accept). A connected socket is two pipe rings (`obj::pipe`),
//! one each way: it reads from one and writes into the other, so a
//! socket's data path, blocking, end of file and EPIPE/SIGPIPE are a
//! pipe's, and a wait for it sleeps on the same wakeup predicates. Datagram
//! and packet sockets frame each message in the ring (a 4-byte length,
//! then the bytes), written whole.
//!
//! Descriptors passed with `SCM_RIGHTS` wait in the receiving socket's
//! queue (`Rights`), each batch keyed by the ring position where the
//! message carrying it starts; a receive that reaches that position takes
//! them, and never reads past the start of the next batch's message, so
//! descriptors arrive with the data they were sent with, as on Linux. A
//! passed file is held by its batch (one more reference) until received
//! or the socket closes. A batch also carries the range ticket of each
//! pipe with frames of its own that its files need (an end, or one an
//! epoll set watches): the receiver, whoever it is, maps the frames with
//! it (`pipemem::take`), so an end goes to any process Linux lets receive
//! it. The tickets wait in the frames of the ring the message travels
//! through (`pipe::park`), which only the holders of the two sockets map,
//! not in the arena with the batch.
//!
//! A name is an `S_IFSOCK` inode whose `data` points at the listening
//! socket (borrowed: the inode never frees it); the listener clears it when
//! it closes. Its queue of connections not yet accepted is a ring of its
//! own (`listen`) holding each one's tickets, so `accept` and a wait for a
//! listener sleep on a predicate too.

use super::flags::NONBLOCK;
use super::{no_seek, pipe, File, Kind, Ops};
use super::{POLLERR, POLLHUP, POLLIN, POLLOUT};
use crate::errno::Errno;
use crate::errno::{
    EAGAIN, ECONNREFUSED, ECONNRESET, EINVAL, EISCONN, EMSGSIZE, ENOMEM, ENOTCONN, EOPNOTSUPP, EPIPE,
    EPROTOTYPE,
};
use crate::fs::{node, Ino, S_IFMT, S_IFSOCK};
use crate::obj::Handle;
use crate::predicate::{WANT_READ, WANT_WRITE};
use crate::shared;
use alloc::vec::Vec;
use pipe::Ticket;

pub const STREAM: u32 = 1;
pub const DGRAM: u32 = 2;
pub const SEQPACKET: u32 = 5;

/// `POLLRDHUP`: the peer will send nothing more.
pub const POLLRDHUP: u16 = 0x2000;
/// Longest name (`sun_path` without its NUL).
pub const NAME_MAX: usize = 108;
/// Most descriptors one message may carry (Linux's `SCM_MAX_FD`).
pub const MAX_PASSED: usize = 253;
/// A pending connection's entry in its listener's queue ring: its two
/// rings' tickets.
const PENDING: usize = 2 * size_of::<Ticket>();
/// Most connections waiting to be accepted: as many as the queue ring
/// holds (Linux's `SOMAXCONN` is 4096).
const MAX_BACKLOG: u32 = (pipe::CAPACITY / PENDING) as u32;

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Unconnected,
    Listening,
    Connected,
}

/// A batch of passed descriptors, its `n` files after it in the same
/// block; the `m` tickets of the pipes they need are parked in the ring
/// it travels through (`pipe::park`), not here in the arena.
struct Rights {
    next: *mut Rights,
    /// Ring position where the message that carries it starts.
    at: u64,
    n: usize,
    m: usize,
}

/// A connection waiting for `accept`: its socket. Its rings' frames (the
/// connector's, `OWNER_SELF` 0600) are held for the acceptor, whoever it
/// is, to map with their tickets, which wait in the listener's queue ring
/// in the same order, not here in the arena.
struct Pending {
    next: *mut Pending,
    file: Handle<File>,
}

/// A socket's object (`File::data`).
pub struct Socket {
    ty: u32,
    state: State,
    /// The read end of the ring it receives on, the write end of the one
    /// its peer receives on; null before connecting and after `shutdown`.
    /// A listener's queue ring: `accept` reads, `connect` writes.
    rx: *mut File,
    tx: *mut File,
    peer: *mut Socket,
    /// Descriptors sent to this socket, oldest first.
    rights: *mut Rights,
    /// Its name and the node that holds it (0: unnamed), and the name of
    /// what it is connected to.
    ino: Ino,
    name: [u8; NAME_MAX],
    name_len: usize,
    peer_name: [u8; NAME_MAX],
    peer_name_len: usize,
    /// The process (environment id) at the other end when they connected
    /// (its `SO_PEERCRED`), and this socket's own: the caller's at
    /// `socketpair` and `connect`, the listener's at `listen`.
    peer_env: u32,
    env: u32,
    /// Listening: its queue ring's ticket (`connect` maps the ring with
    /// it, as the rule from the name's bits allows), its connections
    /// (oldest first) and how many it may hold.
    queue_ticket: u64,
    pending: *mut Pending,
    backlog: u32,
    /// A connection `accept` refused (it could not map its rings): the
    /// connector closes its socket (it maps them) when it next uses this
    /// one (`refused`).
    refused: *mut File,
    /// A named datagram socket's inbox: the write end of the ring it
    /// receives on (`rx`), which senders write into.
    inbox: *mut File,
    /// A datagram socket connected by name: the node and the socket it
    /// named then (a later socket bound to the name is not it).
    dest: Ino,
    dest_sock: *mut Socket,
    /// The name a blocked datagram send waits for room at.
    waits_on: Ino,
}

pub static OPS: Ops = Ops { read, write, seek: no_seek, stat: super::socket_stat, ioctl, close };

/// `FIONREAD` on a connected stream socket: the bytes waiting (datagram
/// and packet sockets do not answer it here); the interface requests, as
/// on any socket (glibc's `if_nametoindex` asks a Unix one).
fn ioctl(f: &mut File, req: u64, arg: u64) -> Result<usize, Errno> {
    // SAFETY: `f` is an open socket (the lock held); no other reference to it here.
    let s = unsafe { sock(f) };
    if req != super::FIONREAD || s.ty != STREAM || s.state != State::Connected {
        return crate::net::ifreq::ioctl(req, arg).map(|()| 0);
    }
    if s.rx.is_null() {
        return super::put_readable(arg, 0);
    }
    // SAFETY: the socket holds its receiving end open.
    let (tail, head) = pipe::positions(unsafe { &*s.rx });
    super::put_readable(arg, head - tail)
}

use super::{alloc_object as alloc, free_object as free};

/// A new unconnected socket of type `ty` (`STREAM`, `DGRAM`, `SEQPACKET`)
/// with status flags `flags` (`NONBLOCK`).
pub fn create(ty: u32, flags: u32) -> Result<Handle<File>, Errno> {
    let s = Socket {
        ty,
        state: State::Unconnected,
        rx: core::ptr::null_mut(),
        tx: core::ptr::null_mut(),
        peer: core::ptr::null_mut(),
        rights: core::ptr::null_mut(),
        ino: 0,
        name: [0; NAME_MAX],
        name_len: 0,
        peer_name: [0; NAME_MAX],
        peer_name_len: 0,
        peer_env: 0,
        env: crate::env::id(),
        queue_ticket: 0,
        pending: core::ptr::null_mut(),
        backlog: 0,
        refused: core::ptr::null_mut(),
        inbox: core::ptr::null_mut(),
        dest: 0,
        dest_sock: core::ptr::null_mut(),
        waits_on: 0,
    };
    super::new_with(Kind::Socket, (flags & NONBLOCK) | super::flags::RDWR, s)
}

/// The socket behind `f`.
///
/// # Safety
/// `f` is an open socket, and no other reference to its socket is live
/// while the result is (the big lock keeps other processes out).
unsafe fn sock<'a>(f: &File) -> &'a mut Socket {
    // SAFETY: a socket's object stays while it is open; the caller makes
    // this the only reference in use.
    unsafe { f.object::<Socket>().get_mut() }
}

/// Connects `a` and `b` to each other with a ring each way, in frames of
/// their own (`pipemem`) made by this process.
fn join(a: &mut Socket, b: &mut Socket) -> Result<(), Errno> {
    let (ra, wb) = pipe::create_guarded(0)?;
    let (rb, wa) = match pipe::create_guarded(0) {
        Ok(p) => p,
        Err(e) => {
            super::put(&pipe::OPS, ra);
            super::put(&pipe::OPS, wb);
            return Err(e);
        }
    };
    (a.rx, a.tx, b.rx, b.tx) = (ra.as_ptr(), wa.as_ptr(), rb.as_ptr(), wb.as_ptr());
    a.peer = b;
    b.peer = a;
    (a.peer_env, b.peer_env) = (b.env, a.env);
    a.state = State::Connected;
    b.state = State::Connected;
    Ok(())
}

/// `socketpair`: two sockets of type `ty` connected to each other.
pub fn pair(ty: u32, flags: u32) -> Result<(Handle<File>, Handle<File>), Errno> {
    let a = create(ty, flags)?;
    let b = match create(ty, flags) {
        Ok(b) => b,
        Err(e) => {
            super::put(&OPS, a);
            return Err(e);
        }
    };
    // SAFETY: both were just created, live, and referenced nowhere else.
    let (fa, fb) = unsafe { (a.get(), b.get()) };
    // SAFETY: two new sockets, referred to by nothing else.
    if let Err(e) = join(unsafe { sock(fa) }, unsafe { sock(fb) }) {
        super::put(&OPS, a);
        super::put(&OPS, b);
        return Err(e);
    }
    Ok((a, b))
}

/// Whether `found` holds for the base of a ring of socket `f` in frames
/// of its own (`join`), which a descriptor of it needs mapped;
/// stops at the first that does.
pub fn any_ring(f: &File, found: &mut impl FnMut(u64) -> bool) -> bool {
    // SAFETY: `f` is an open socket (the lock held); read only.
    let s = unsafe { sock(f) };
    [s.rx, s.tx, s.inbox]
        .into_iter()
        .filter(|&end| super::pipemem::guarded(end as u64))
        .any(|end| found(super::pipemem::base(end as u64)))
}

/// `bind`: names the socket by node `ino` (made by the caller, `path` its
/// name); a datagram socket not in a pair gets its inbox, in frames of its
/// own (`inbox`). EINVAL if it has a name already.
pub fn bind(f: &File, ino: Ino, path: &[u8]) -> Result<(), Errno> {
    // SAFETY: `f` is an open socket (the lock held); no other reference to it here.
    let s = unsafe { sock(f) };
    if s.ino != 0 {
        return Err(EINVAL);
    }
    if s.ty == DGRAM && s.state == State::Unconnected {
        let (r, w) = super::inbox::make(ino)?;
        (s.rx, s.inbox) = (r.as_ptr(), w.as_ptr());
    }
    s.ino = ino;
    s.name[..path.len()].copy_from_slice(path);
    s.name_len = path.len();
    node::update(ino, |n| {
        n.data = s as *mut Socket as *mut u8;
        n.borrowed = true;
        // Kept while bound: a sender connected by name goes on sending
        // after the name is unlinked, as on Linux.
        n.opens += 1;
    });
    Ok(())
}

/// `SO_PEERCRED`'s process, by environment id (the caller names it by
/// pid): the process at the other end when they connected (None before).
pub fn peer_env(f: &File) -> Option<u32> {
    // SAFETY: `f` is an open socket (the lock held); no other reference to it here.
    let s = unsafe { sock(f) };
    (s.state == State::Connected).then_some(s.peer_env)
}

/// The socket's type (`STREAM`, `DGRAM`, `SEQPACKET`).
pub fn kind(f: &File) -> u32 {
    // SAFETY: an open socket; read only.
    unsafe { sock(f) }.ty
}

/// Whether the socket has a name (bind before listen).
pub fn is_bound(f: &File) -> bool {
    // SAFETY: an open socket; read only.
    unsafe { sock(f) }.ino != 0
}

/// `listen`: a bound stream or packet socket starts taking connections.
pub fn listen(f: &File, backlog: i64) -> Result<(), Errno> {
    // SAFETY: `f` is an open socket (the lock held); no other reference to it here.
    let s = unsafe { sock(f) };
    if s.ty == DGRAM {
        return Err(EOPNOTSUPP);
    }
    if s.state == State::Connected || s.ino == 0 {
        return Err(EINVAL);
    }
    if s.rx.is_null() {
        // Those who may connect (write the name: any for an abstract one)
        // may map the ring to queue their tickets; no one else.
        let n = node::get(s.ino);
        let (owner, mode) = super::pipemem::rule(n.uid, n.gid, n.mode, 0o2, &crate::fs::perm::me());
        let abstract_name = s.name[..s.name_len].first() == Some(&0);
        let (r, w) = pipe::create_ruled(0, owner, if abstract_name { 0o666 } else { mode })?;
        s.queue_ticket = pipe::ticket(r.addr()).unwrap_or(0);
        (s.rx, s.tx) = (r.as_ptr(), w.as_ptr());
    }
    s.backlog = backlog.clamp(1, MAX_BACKLOG as i64) as u32;
    s.env = crate::env::id();
    s.state = State::Listening;
    Ok(())
}

/// `connect` to the socket named by node `ino`: queues a connection for
/// its `accept` and connects this socket to it.
pub fn connect(f: &File, ino: Ino) -> Result<(), Errno> {
    // SAFETY: `f` is an open socket (the lock held); no other reference to it here.
    let s = unsafe { sock(f) };
    if s.ty == DGRAM && s.state == State::Unconnected {
        let t = receiver(ino)?;
        (s.dest, s.dest_sock) = (ino, t);
        // SAFETY: a live receiver (lock held); read only.
        let t = unsafe { &*t };
        (s.peer_name, s.peer_name_len) = (t.name, t.name_len);
        return Ok(());
    }
    if s.state != State::Unconnected {
        return Err(if s.state == State::Connected { EISCONN } else { EINVAL });
    }
    let n = node::get(ino);
    if n.mode & S_IFMT != S_IFSOCK || n.data.is_null() {
        return Err(ECONNREFUSED);
    }
    // SAFETY: a named node's `data` is its live listener (cleared when it
    // closes).
    let l = unsafe { &mut *(n.data as *mut Socket) };
    if l.ty != s.ty {
        return Err(EPROTOTYPE);
    }
    if l.state != State::Listening {
        return Err(ECONNREFUSED);
    }
    // The listener's queue ring, mapped here for the while (the kernel
    // judges the name's rule).
    let base = super::pipemem::base(l.tx as u64);
    let now = super::pipemem::claim_named(base, l.queue_ticket, pipe::GUARDED_PAGES)?.ok_or(ECONNREFUSED)?;
    let queued = enqueue(s, l);
    if now {
        super::pipemem::release(base, pipe::GUARDED_PAGES);
    }
    queued
}

/// Connects `s` to a new socket queued at listener `l`, whose queue ring
/// is mapped here; EAGAIN when its backlog is full.
fn enqueue(s: &mut Socket, l: &mut Socket) -> Result<(), Errno> {
    // SAFETY: a listener holds its queue ring's ends (mapped here).
    let (tail, head) = pipe::positions(unsafe { &*l.rx });
    if (head - tail) / PENDING as u64 >= l.backlog as u64 {
        return Err(EAGAIN);
    }
    let server = create(s.ty, 0)?;
    // SAFETY: just created, referred to by nothing else.
    let ss = unsafe { sock(server.get()) };
    // The connection speaks for the listener's process.
    ss.env = l.env;
    if let Err(e) = join(s, ss) {
        super::put(&OPS, server);
        return Err(e);
    }
    let rings = [ss.rx, ss.tx].map(|end| super::pipemem::base(end as u64));
    ss.name = l.name;
    ss.name_len = l.name_len;
    (ss.peer_name, ss.peer_name_len) = (s.name, s.name_len);
    s.peer_name = l.name;
    s.peer_name_len = l.name_len;
    let held = hold(&rings).and_then(|t| {
        let pending = <[Ticket; 2]>::try_from(t.as_slice()).map_err(|_| ENOMEM).and_then(|rings| {
            let p = alloc(Pending { next: core::ptr::null_mut(), file: server })?;
            // SAFETY: the listener holds its queue ring's write end
            // (mapped here); the backlog leaves room for the entry.
            let w = unsafe { ring(l.tx, true) };
            match (pipe::OPS.write)(w, &pack(rings)) {
                Ok(PENDING) => Ok(p),
                _ => {
                    // SAFETY: just allocated, linked nowhere.
                    unsafe { free(p) };
                    Err(ENOMEM)
                }
            }
        });
        pending.inspect_err(|_| let_go(&t))
    });
    let p = match held {
        Ok(p) => p,
        Err(e) => {
            super::put(&OPS, server);
            // The rings go with the connection (a later `listen` makes
            // its own).
            let bases = [s.rx, s.tx].map(|end| super::pipemem::base(end as u64));
            drop_end(&mut s.rx);
            drop_end(&mut s.tx);
            bases.iter().for_each(|&b| super::pipemem::release(b, pipe::GUARDED_PAGES));
            s.state = State::Unconnected;
            return Err(e);
        }
    };
    let mut at = &raw mut l.pending;
    // SAFETY: the list's links are live (lock held).
    unsafe {
        while !(*at).is_null() {
            at = &raw mut (**at).next;
        }
        *at = p;
    }
    Ok(())
}

/// A pending connection's entry in the queue ring: its rings' tickets.
fn pack(rings: [Ticket; 2]) -> [u8; PENDING] {
    let mut b = [0u8; PENDING];
    for (i, t) in rings.iter().enumerate() {
        b[16 * i..16 * i + 8].copy_from_slice(&t.base.to_ne_bytes());
        b[16 * i + 8..16 * i + 16].copy_from_slice(&t.ticket.to_ne_bytes());
    }
    b
}

/// Takes the oldest pending connection's tickets from listener `s`'s
/// queue ring (none if it holds no whole entry).
fn unpack(s: &Socket) -> Vec<Ticket> {
    let mut b = [0u8; PENDING];
    // SAFETY: a listener holds its queue ring's read end.
    if s.rx.is_null() || (pipe::OPS.read)(unsafe { ring(s.rx, true) }, &mut b) != Ok(PENDING) {
        return Vec::new();
    }
    let word = |at: usize| u64::from_ne_bytes(b[at..at + 8].try_into().unwrap_or_default());
    (0..2).map(|i| Ticket { base: word(16 * i), ticket: word(16 * i + 8) }).collect()
}

/// The datagram socket named by node `ino`, to send to: ECONNREFUSED
/// when no socket holds the name (or it has no inbox), EPROTOTYPE when
/// another type does.
fn receiver(ino: Ino) -> Result<*mut Socket, Errno> {
    let n = node::get(ino);
    if n.mode & S_IFMT != S_IFSOCK || n.data.is_null() {
        return Err(ECONNREFUSED);
    }
    let t = n.data as *mut Socket;
    // SAFETY: a named node's `data` is its live socket (cleared when it
    // closes); read only.
    let t_ref = unsafe { &*t };
    if t_ref.ty != DGRAM {
        return Err(EPROTOTYPE);
    }
    if t_ref.inbox.is_null() {
        return Err(ECONNREFUSED);
    }
    Ok(t)
}

/// `accept`: the oldest connection waiting, as an open file with status
/// flags `flags`; EAGAIN when none is (the caller waits, `io::accept`).
pub fn accept(f: &File, flags: u32) -> Result<Handle<File>, Errno> {
    // SAFETY: `f` is an open socket (the lock held); no other reference to it here.
    let s = unsafe { sock(f) };
    if s.state != State::Listening {
        return Err(EINVAL);
    }
    while !s.pending.is_null() {
        let p = s.pending;
        // SAFETY: a queued connection (lock held); freed once taken.
        let file = unsafe {
            s.pending = (*p).next;
            let file = (*p).file;
            free(p);
            file
        };
        let tickets = unpack(s);
        let fresh = take_held(&tickets);
        if tickets.len() == 2 && tickets.iter().all(|t| super::pipemem::mapped(t.base)) {
            // Its rings stay mapped here for the descriptor the caller
            // makes.
            // SAFETY: the connection's file, handed to the caller.
            unsafe { file.get_mut() }.flags |= flags & NONBLOCK;
            return Ok(file);
        }
        // A socket this process cannot use (as `obj::usable` leaves a
        // passed end out): the connector closes it.
        fresh.iter().for_each(|&base| super::pipemem::release(base, pipe::GUARDED_PAGES));
        // SAFETY: the connection's socket is in the arena; its peer, the
        // connector's, is live while it links to it.
        unsafe {
            let peer = sock(file.get()).peer;
            if !peer.is_null() {
                (*peer).refused = file.as_ptr();
            }
        }
    }
    Err(EAGAIN)
}

/// Closes the connection `accept` refused to `s`, if there is one (`s`
/// maps its rings): whether there was.
fn refused(s: &mut Socket) -> bool {
    let f = core::mem::replace(&mut s.refused, core::ptr::null_mut());
    if !f.is_null() {
        // SAFETY: the refused connection's socket, now the connector's to
        // close.
        super::put(&OPS, unsafe { Handle::from_raw(f) });
    }
    !f.is_null()
}

/// The socket's name (`peer`: what it is connected to's), as a path.
pub fn name(f: &File, peer: bool) -> Result<Vec<u8>, Errno> {
    // SAFETY: `f` is an open socket (the lock held); no other reference to it here.
    let s = unsafe { sock(f) };
    if peer {
        if s.state != State::Connected && s.dest == 0 {
            return Err(ENOTCONN);
        }
        return Ok(s.peer_name[..s.peer_name_len].to_vec());
    }
    Ok(s.name[..s.name_len].to_vec())
}

/// `shutdown`: stop receiving (`rd`: reads see end of file, the peer's
/// writes fail) and/or sending (`wr`: the peer reads end of file).
pub fn shutdown(f: &File, rd: bool, wr: bool) -> Result<(), Errno> {
    // SAFETY: `f` is an open socket (the lock held); no other reference to it here.
    let s = unsafe { sock(f) };
    // Linux's Unix sockets take it in any state (there is no connection
    // to end for one not connected).
    if s.state != State::Connected {
        return Ok(());
    }
    // The batches' tickets are in the receiving ring: its descriptors
    // go with it (Linux would still hand them out with the bytes queued
    // before the shutdown; here those bytes go too).
    while rd && !s.rights.is_null() {
        unqueue_rights(s, s.rights);
    }
    for (shut, end) in [(rd, &mut s.rx), (wr, &mut s.tx)] {
        if shut {
            drop_end(end);
        }
    }
    Ok(())
}

/// Lets go of the ring end a socket holds at `end` (if any) and clears it.
fn drop_end(end: &mut *mut File) {
    let f = core::mem::replace(end, core::ptr::null_mut());
    if !f.is_null() {
        // SAFETY: an end the socket held open, now let go.
        super::put(&pipe::OPS, unsafe { Handle::from_raw(f) });
    }
}

/// One end's ring file, with the call's blocking mode.
///
/// # Safety
/// `end` is a ring end the socket holds open, and no other reference to it
/// is live while the result is.
unsafe fn ring<'a>(end: *mut File, nonblock: bool) -> &'a mut File {
    // SAFETY: as the caller promises.
    let r = unsafe { &mut *end };
    r.flags = if nonblock { r.flags | NONBLOCK } else { r.flags & !NONBLOCK };
    r
}

/// What a send with a destination address gets from a stream socket
/// (Linux: EISCONN connected, EOPNOTSUPP not; a packet socket ignores the
/// address and a datagram socket sends there).
pub fn address_refused(f: &File) -> Errno {
    // SAFETY: an open socket; read only.
    if unsafe { sock(f) }.state == State::Connected {
        EISCONN
    } else {
        EOPNOTSUPP
    }
}

/// The framed message for `data` from a socket named `from`: a word
/// holding the length (low 24 bits) and the name's (top 8), the name, the
/// bytes. EMSGSIZE when it cannot fit a ring.
fn frame(data: &[u8], from: &[u8]) -> Result<Vec<u8>, Errno> {
    let len = 4 + from.len() + data.len();
    if len > pipe::CAPACITY {
        return Err(EMSGSIZE);
    }
    let mut v = Vec::with_capacity(len);
    v.extend_from_slice(&(data.len() as u32 | (from.len() as u32) << 24).to_ne_bytes());
    v.extend_from_slice(from);
    v.extend_from_slice(data);
    Ok(v)
}

/// Sends what fits now of `data` (one message for a datagram or packet
/// socket, whole or not at all), to the socket named by node `to` if
/// given, with the descriptors `files`, whose references pass to the
/// receiver (`files` is left empty) if anything goes, and stay the
/// caller's otherwise. EAGAIN when nothing fits now, EPIPE (ECONNREFUSED
/// for a datagram) when the peer is gone: the caller waits, and raises
/// SIGPIPE (`io::send`). Only a datagram socket is given `to`
/// (`address_refused`).
pub fn send(
    f: &File,
    data: &[u8],
    to: Option<Ino>,
    files: &mut Vec<Handle<File>>,
    nonblock: bool,
) -> Result<usize, Errno> {
    // SAFETY: `f` is an open socket (the lock held); no other reference to it here.
    let s = unsafe { sock(f) };
    let nonblock = nonblock || f.flags & NONBLOCK != 0;
    refused(s);
    if s.ty == DGRAM {
        if let Some(ino) = to {
            return send_to(s, ino, false, data, files, nonblock);
        }
        if s.state != State::Connected && s.dest != 0 {
            return send_to(s, s.dest, true, data, files, nonblock);
        }
    }
    if s.state != State::Connected {
        return Err(ENOTCONN);
    }
    // SAFETY: the socket holds its ends open; none is referred to here.
    if s.tx.is_null() || !pipe::other_end_open(unsafe { ring(s.tx, nonblock) }) {
        return Err(if s.ty == DGRAM { ECONNREFUSED } else { EPIPE });
    }
    if s.ty == STREAM && data.is_empty() {
        return Ok(0);
    }
    // SAFETY: as above.
    let tx = unsafe { ring(s.tx, nonblock) };
    let framed;
    let bytes = if s.ty == STREAM {
        data
    } else {
        framed = frame(data, &[])?;
        // A message goes in whole, or waits for room for all of it.
        if pipe::room(tx) < framed.len() {
            return Err(EAGAIN);
        }
        &framed[..]
    };
    let n = put_message(s.peer, tx, bytes, files)?;
    Ok(if s.ty == STREAM { n } else { data.len() })
}

/// Sends datagram `data` into the inbox of the socket named by node `ino`
/// (`connected`: the name `connect` gave, which must still be the socket
/// it named then; a receiver gone ends that connection, as on Linux).
/// EPERM when the receiver is connected to another socket.
fn send_to(
    s: &mut Socket,
    ino: Ino,
    connected: bool,
    data: &[u8],
    files: &mut Vec<Handle<File>>,
    nonblock: bool,
) -> Result<usize, Errno> {
    let me = s as *mut Socket;
    let t = receiver(ino);
    if connected && t != Ok(s.dest_sock) {
        (s.dest, s.dest_sock) = (0, core::ptr::null_mut());
        return Err(ECONNREFUSED);
    }
    let t = t?;
    // SAFETY: a live receiver (lock held); only its plain fields are read.
    let (t_dest, t_dest_sock, t_inbox) = unsafe { ((*t).dest, (*t).dest_sock, (*t).inbox) };
    if t != me && t_dest != 0 && t_dest_sock != me {
        return Err(crate::errno::EPERM);
    }
    super::inbox::reach(t_inbox, ino)?;
    let framed = frame(data, &s.name[..s.name_len])?;
    // SAFETY: the receiver holds its inbox open; nothing else refers to it here.
    let tx = unsafe { ring(t_inbox, nonblock) };
    if pipe::room(tx) < framed.len() {
        s.waits_on = ino;
        return Err(EAGAIN);
    }
    put_message(t, tx, &framed, files)?;
    Ok(data.len())
}

/// Writes `bytes` (what fits of them) into ring `tx`, which socket `to`
/// receives on, with the descriptors `files` (queued for it first, with
/// the tickets of the pipes they need, keyed by where the message starts;
/// taken back if nothing goes).
fn put_message(
    to: *mut Socket,
    tx: &mut File,
    bytes: &[u8],
    files: &mut Vec<Handle<File>>,
) -> Result<usize, Errno> {
    let batch = if files.is_empty() { None } else { Some(queue_rights(to, tx, files)?) };
    let n = (pipe::OPS.write)(tx, bytes).and_then(|n| if n == 0 { Err(EAGAIN) } else { Ok(n) });
    let n = n.inspect_err(|_| {
        if let Some(b) = batch {
            // Nothing went: the batch comes out of the receiver's queue,
            // its files still the caller's.
            // SAFETY: the receiver is live while its ring has a reader.
            take_batch(unsafe { &mut *to }, b);
        }
    })?;
    files.clear();
    Ok(n)
}

/// Puts `files` in the queue of socket `to`, which receives on ring `tx`,
/// as a batch for the message starting at its head, with the tickets of
/// the pipes they need parked in the ring's frames (ETOOMANYREFS when
/// they hold too many already).
fn queue_rights(to: *mut Socket, tx: &File, files: &[Handle<File>]) -> Result<*mut Rights, Errno> {
    let mut bases: Vec<u64> = files.iter().flat_map(|&f| super::pipes_of(f)).collect();
    bases.sort_unstable();
    bases.dedup();
    // Kept for the receiver while the batch is in flight (`take_batch`
    // lets go).
    let tickets = hold(&bases)?;
    let (size, align) = batch_size(files.len());
    let r = shared::alloc(size, align) as *mut Rights;
    let parked = if r.is_null() { Err(ENOMEM) } else { pipe::park(tx, &tickets) };
    if let Err(e) = parked {
        let_go(&tickets);
        if !r.is_null() {
            // SAFETY: the block just allocated, referred to by nothing.
            unsafe { shared::free(r as *mut u8, size, align) };
        }
        return Err(e);
    }
    let at = pipe::positions(tx).1;
    // SAFETY: a fresh block with room for the header and the files; the
    // receiver is live (its ring has a reader) and the lock is held.
    unsafe {
        r.write(Rights { next: core::ptr::null_mut(), at, n: files.len(), m: tickets.len() });
        core::ptr::copy_nonoverlapping(files.as_ptr(), rights_files(r), files.len());
        let mut link = &raw mut (*to).rights;
        while !(*link).is_null() {
            link = &raw mut (**link).next;
        }
        *link = r;
    }
    Ok(r)
}

/// Holds the frames of the pipes at `bases` (mapped here) for a process
/// that will map them with the tickets returned (`take_held`), whoever
/// unmaps them meanwhile; ENOMEM (nothing held) when the kernel refuses.
fn hold(bases: &[u64]) -> Result<Vec<Ticket>, Errno> {
    let tickets: Vec<Ticket> =
        bases.iter().filter_map(|&base| Some(Ticket { base, ticket: super::ticket(base)? })).collect();
    for (i, t) in tickets.iter().enumerate() {
        if user::sys::range_hold(t.ticket, t.base).is_err() {
            let_go(&tickets[..i]);
            return Err(ENOMEM);
        }
    }
    Ok(tickets)
}

/// Maps the pipes held with `tickets` where they allow (`pipemem::take`)
/// and lets go of them; the bases of those this process did not map
/// before.
fn take_held(tickets: &[Ticket]) -> Vec<u64> {
    let mut fresh = Vec::new();
    for t in tickets {
        let before = super::pipemem::mapped(t.base);
        if super::pipemem::take(t.base, t.ticket, pipe::GUARDED_PAGES) && !before {
            fresh.push(t.base);
        }
    }
    // Mapped here (or not to be): let go of the frames.
    let_go(tickets);
    fresh
}

/// A batch carrying `tickets` is over (taken, or never sent): it lets go
/// of their frames.
fn let_go(tickets: &[Ticket]) {
    for t in tickets {
        let _ = user::sys::range_unhold(t.ticket, t.base);
    }
}

/// The size and alignment of a batch of `n` files.
fn batch_size(n: usize) -> (usize, usize) {
    (size_of::<Rights>() + n * size_of::<Handle<File>>(), align_of::<Rights>())
}

/// The files of batch `r`.
fn rights_files(r: *mut Rights) -> *mut Handle<File> {
    // SAFETY: the files follow the header in the same block.
    unsafe { (r as *mut u8).add(size_of::<Rights>()) as *mut Handle<File> }
}

/// Takes batch `r` out of `s`'s queue and drops its files; the pipes this
/// process mapped only for that (`take_batch`) are unmapped again.
fn unqueue_rights(s: &mut Socket, r: *mut Rights) {
    let (files, fresh) = take_batch(s, r);
    files.iter().for_each(|&f| super::put(super::ops_for_file(f), f));
    // No descriptor here names them: a descriptor's pipe is mapped.
    fresh.iter().for_each(|&base| super::pipemem::release(base, pipe::GUARDED_PAGES));
}

/// Takes batch `r` out of `s`'s queue and frees it; returns its files
/// (their references now the caller's), with the frames of the pipes they
/// need mapped where the tickets parked in `s`'s receiving ring allow
/// (`pipemem::take`) and the batch's holds on them let go, and the bases
/// of those this process did not map before.
fn take_batch(s: &mut Socket, r: *mut Rights) -> (Vec<Handle<File>>, Vec<u64>) {
    // The tickets of the batches ahead of `r` come first in the ring.
    let mut skip = 0;
    // SAFETY: `r` is in the queue (lock held); freed after the unlink.
    unsafe {
        let mut link = &raw mut s.rights;
        while !(*link).is_null() && *link != r {
            skip += (**link).m;
            link = &raw mut (**link).next;
        }
        if *link == r {
            *link = (*r).next;
        }
        let (n, m) = ((*r).n, (*r).m);
        let files = core::slice::from_raw_parts(rights_files(r), n).to_vec();
        let (size, align) = batch_size(n);
        shared::free(r as *mut u8, size, align);
        // The socket keeps its receiving ring while it has batches
        // (`shutdown` drops them first).
        let tickets = if s.rx.is_null() { Vec::new() } else { pipe::unpark(&*s.rx, skip, m) };
        (files, take_held(&tickets))
    }
}

/// What a receive got: bytes read, the message's full length (more for a
/// datagram cut short), the descriptors that came with it, and the
/// sender's name (empty: unnamed).
pub struct Received {
    pub len: usize,
    pub full: usize,
    pub files: Vec<Handle<File>>,
    pub from: Vec<u8>,
}

/// Receives into `buf`: stream bytes (up to the next batch of passed
/// descriptors), or one message (the rest of it dropped if `buf` is
/// short); EAGAIN when nothing is there yet (the caller waits,
/// `io::recv`). With `peek` (`MSG_PEEK`)
/// the bytes stay and no descriptors come.
pub fn recv(f: &File, buf: &mut [u8], nonblock: bool, peek: bool) -> Result<Received, Errno> {
    // SAFETY: `f` is an open socket (the lock held); no other reference to it here.
    let s = unsafe { sock(f) };
    let nonblock = nonblock || f.flags & NONBLOCK != 0;
    if s.state != State::Connected && s.inbox.is_null() {
        return Err(if s.ty == STREAM { EINVAL } else { ENOTCONN });
    }
    if refused(s) {
        return Err(ECONNRESET);
    }
    let none = Received { len: 0, full: 0, files: Vec::new(), from: Vec::new() };
    if s.rx.is_null() {
        return Ok(none);
    }
    // SAFETY: the socket holds its ends open; none is referred to here.
    let rx = unsafe { ring(s.rx, nonblock) };
    // Data (or the end) is looked for without taking any: which batch
    // comes with it is known only once it is there.
    let (tail, head) = pipe::positions(rx);
    if head == tail {
        if !pipe::other_end_open(rx) {
            return Ok(none);
        }
        pipe::readable(rx, nonblock)?;
    }
    let tail = pipe::positions(rx).0;
    if peek {
        return Ok(peek_at(s, rx, tail, buf));
    }
    let mut files = Vec::new();
    if !s.rights.is_null() {
        // SAFETY: the queue's head batch (lock held).
        if unsafe { (*s.rights).at } <= tail {
            files = take_batch(s, s.rights).0;
        }
    }
    // Never past the start of the next batch's message.
    // SAFETY: as above.
    let limit =
        (!s.rights.is_null()).then(|| unsafe { (*s.rights).at } - tail).map_or(usize::MAX, |l| l as usize);
    let peer_name = s.peer_name[..s.peer_name_len].to_vec();
    if s.ty == STREAM {
        let want = buf.len().min(limit);
        let n = (pipe::OPS.read)(rx, &mut buf[..want])?;
        return Ok(Received { len: n, full: n, files, from: peer_name });
    }
    let mut word = [0u8; 4];
    // The word, the name and the message are all in the ring (`frame`).
    let _ = (pipe::OPS.read)(rx, &mut word);
    let (full, name_len) = unframe(word);
    let mut from = alloc::vec![0u8; name_len];
    read_exact(rx, &mut from);
    let from = if name_len == 0 { peer_name } else { from };
    let take = full.min(buf.len());
    read_exact(rx, &mut buf[..take]);
    let mut rest = full - take;
    let mut scratch = [0u8; 256];
    while rest > 0 {
        let n = rest.min(scratch.len());
        read_exact(rx, &mut scratch[..n]);
        rest -= n;
    }
    Ok(Received { len: take, full, files, from })
}

/// A message's length and its sender's name's, from its word (`frame`).
fn unframe(word: [u8; 4]) -> (usize, usize) {
    let w = u32::from_ne_bytes(word);
    ((w & 0xff_ffff) as usize, (w >> 24) as usize)
}

/// `MSG_PEEK`: copies what a receive would get into `buf` from ring `rx`
/// (at `tail`, holding data) and leaves it there; passed descriptors stay
/// queued (Linux would give copies of them).
fn peek_at(s: &Socket, rx: &File, tail: u64, buf: &mut [u8]) -> Received {
    if s.ty == STREAM {
        // Never past the start of a later batch's message.
        let mut r = s.rights;
        // SAFETY: the queue's batches (lock held).
        while !r.is_null() && unsafe { (*r).at } <= tail {
            // SAFETY: as above.
            r = unsafe { (*r).next };
        }
        // SAFETY: as above.
        let limit = if r.is_null() { usize::MAX } else { (unsafe { (*r).at } - tail) as usize };
        let want = buf.len().min(limit);
        let n = pipe::peek(rx, &mut buf[..want]);
        return Received {
            len: n,
            full: n,
            files: Vec::new(),
            from: s.peer_name[..s.peer_name_len].to_vec(),
        };
    }
    // A message is its word, its sender's name and its bytes, all in the
    // ring.
    let mut msg = alloc::vec![0u8; 4 + NAME_MAX + buf.len()];
    let got = pipe::peek(rx, &mut msg);
    let (full, name_len) = unframe([msg[0], msg[1], msg[2], msg[3]]);
    let at = 4 + name_len;
    let take = full.min(buf.len()).min(got.saturating_sub(at));
    buf[..take].copy_from_slice(&msg[at..at + take]);
    let from = if name_len == 0 { s.peer_name[..s.peer_name_len].to_vec() } else { msg[4..at].to_vec() };
    Received { len: take, full, files: Vec::new(), from }
}

/// Reads exactly `buf.len()` bytes of a message already in the ring.
fn read_exact(rx: &mut File, buf: &mut [u8]) {
    let mut at = 0;
    while at < buf.len() {
        match (pipe::OPS.read)(rx, &mut buf[at..]) {
            Ok(n) if n > 0 => at += n,
            _ => return,
        }
    }
}

fn read(f: &mut File, buf: &mut [u8]) -> Result<usize, Errno> {
    let r = recv(f, buf, false, false)?;
    // Descriptors sent with data read by `read` are dropped.
    r.files.iter().for_each(|&x| super::put(super::ops_for_file(x), x));
    Ok(r.len)
}

fn write(f: &mut File, buf: &[u8]) -> Result<usize, Errno> {
    send(f, buf, None, &mut Vec::new(), false)
}

/// Readiness for `poll`: a listener is readable with a connection
/// waiting; a connected socket as its rings are (end of file and a peer
/// gone count as readable, `POLLRDHUP`; both ways shut, `POLLHUP`).
pub fn events(f: &File) -> u16 {
    // SAFETY: `f` is an open socket (the lock held); no other reference to it here.
    let s = unsafe { sock(f) };
    match s.state {
        State::Listening => {
            // SAFETY: a listener holds its queue ring's ends; the lock is held.
            let (tail, head) = pipe::positions(unsafe { &*s.rx });
            if head != tail {
                POLLIN
            } else {
                0
            }
        }
        // A datagram socket can always send (a full receiver is found
        // only by sending); one with an inbox is readable with a message in it.
        State::Unconnected if s.ty == DGRAM => {
            let waiting = !s.rx.is_null() && {
                // SAFETY: the socket holds its inbox open; the lock is held.
                let (tail, head) = pipe::positions(unsafe { &*s.rx });
                head != tail
            };
            POLLOUT | if waiting { POLLIN } else { 0 }
        }
        State::Unconnected => POLLOUT | POLLHUP,
        State::Connected => {
            let mut ev = 0;
            // SAFETY: the socket holds its ends open; the lock is held.
            let rx_done = s.rx.is_null() || !pipe::other_end_open(unsafe { &*s.rx });
            if !s.rx.is_null() {
                // SAFETY: as above.
                let (tail, head) = pipe::positions(unsafe { &*s.rx });
                if head != tail {
                    ev |= POLLIN;
                }
            }
            if rx_done {
                ev |= POLLIN | POLLRDHUP;
            }
            // SAFETY: as above.
            let tx_done = s.tx.is_null() || !pipe::other_end_open(unsafe { &*s.tx });
            // SAFETY: as above.
            if tx_done || pipe::room(unsafe { &*s.tx }) >= pipe::PIPE_BUF {
                ev |= POLLOUT;
            }
            if rx_done && tx_done {
                ev |= POLLHUP;
            }
            if !s.refused.is_null() {
                // `recv` answers ECONNRESET (and closes what was refused).
                ev |= POLLIN | POLLERR;
            }
            ev
        }
    }
}

/// The ring-shaped headers a wait for `events` on `f` sleeps on, with
/// their terms (a zero address: none).
pub fn wait_terms(f: &File, events: u16) -> [(u64, u64); 2] {
    // SAFETY: `f` is an open socket (the lock held); no other reference to it here.
    let s = unsafe { sock(f) };
    let mut t = [(0, 0); 2];
    if s.state == State::Listening {
        // SAFETY: a listener holds its queue ring's ends.
        t[0] = (pipe::wait_info(unsafe { &*s.rx }).0, WANT_READ);
        return t;
    }
    if events & POLLIN != 0 && !s.rx.is_null() {
        // SAFETY: the socket holds the end open.
        t[0] = (pipe::wait_info(unsafe { &*s.rx }).0, WANT_READ);
    }
    if events & POLLOUT != 0 && !s.tx.is_null() {
        // SAFETY: as above.
        t[1] = (pipe::wait_info(unsafe { &*s.tx }).0, WANT_WRITE);
    } else if events & POLLOUT != 0 && s.waits_on != 0 {
        // A datagram send waits for room in the receiver's inbox.
        // SAFETY: a live receiver holds its inbox open (lock held); read
        // only where this process maps it (`inbox::reach`).
        if let Some(inbox) = receiver(s.waits_on).ok().map(|r| unsafe { (*r).inbox }) {
            if super::pipemem::mapped(inbox as u64) {
                // SAFETY: as above.
                t[1] = (pipe::wait_info(unsafe { &*inbox }).0, WANT_WRITE);
            }
        }
    }
    t
}

/// A number that changes when the socket has something new (edge-
/// triggered epoll): data in, room out, a connection queued.
pub fn stamp(f: &File) -> u64 {
    // SAFETY: `f` is an open socket (the lock held); no other reference to it here.
    let s = unsafe { sock(f) };
    if s.state == State::Listening {
        // SAFETY: a listener holds its queue ring's ends.
        return pipe::stamp(unsafe { &*s.rx });
    }
    // SAFETY: the socket holds its ends open.
    let rx = if s.rx.is_null() { 0 } else { pipe::stamp(unsafe { &*s.rx }) };
    // SAFETY: as above.
    let tx = if s.tx.is_null() { 0 } else { pipe::stamp(unsafe { &*s.tx }) };
    rx.wrapping_add(tx.rotate_left(32))
}

fn close(f: &mut File) {
    // SAFETY: `f` is an open socket (the lock held); no other reference to it here.
    let s = unsafe { sock(f) };
    refused(s);
    while !s.rights.is_null() {
        unqueue_rights(s, s.rights);
    }
    while !s.pending.is_null() {
        let p = s.pending;
        // SAFETY: a queued connection; its socket closes (the client sees
        // end of file), which needs its rings mapped here for that.
        unsafe {
            s.pending = (*p).next;
            let fresh = take_held(&unpack(s));
            super::put(&OPS, (*p).file);
            fresh.iter().for_each(|&base| super::pipemem::release(base, pipe::GUARDED_PAGES));
            free(p);
        }
    }
    for end in [s.rx, s.tx, s.inbox] {
        if !end.is_null() {
            // SAFETY: an end the socket holds open, let go with it.
            super::put(&pipe::OPS, unsafe { Handle::from_raw(end) });
        }
    }
    if !s.peer.is_null() {
        // SAFETY: a connected peer is live until it clears this link.
        unsafe { (*s.peer).peer = core::ptr::null_mut() };
    }
    if s.ino != 0 {
        let me = s as *mut Socket as *mut u8;
        node::update(s.ino, |n| {
            if n.mode & S_IFMT == S_IFSOCK && n.data == me {
                n.data = core::ptr::null_mut();
                n.ticket = 0;
                n.borrowed = false;
                n.opens -= 1;
            }
        });
        node::release(s.ino);
    }
    // SAFETY: made by `create`; nobody refers to it now.
    unsafe { free(s as *mut Socket) };
}
