//! Pseudo-terminals: `/dev/ptmx` opens a master and makes a pair, whose
//! slave is `/dev/pts/N` (N from `TIOCGPTN`; it opens once unlocked,
//! `TIOCSPTLCK`, or straight from the master with `TIOCGPTPEER`). Between
//! the two ends runs the line discipline every terminal shares
//! (`ldisc.rs`): what the master writes is processed as typed input
//! (signal characters, canonical lines, echo back to the master) into the
//! slave's input queue; what the slave writes goes, translated for output,
//! into the master's queue.
//!
//! A pair lives in frames of its own (issue 25: `pipe::own_frames`, the
//! pipes' window and range), mapped only into the processes that hold an
//! end: fork maps it for the child, each process's last close unmaps it,
//! an end passed over a Unix socket carries its ticket (`obj::pipes_of`
//! names a pty end's pair as a pipe end's frames). Every description of
//! either end points at it (`Object::Pty`). A table hanging from an arena
//! root keeps, by number, each pair's address, its range's ticket and the
//! session it controls; an opener by name (`/dev/pts/N`, `/dev/tty`)
//! claims the frames with the ticket, and the kernel judges it by the
//! range's rule, the slave node's owner, group and bits as the pair was
//! made (`pipemem::rule`). Both queues start with the ring-shaped header a wakeup predicate reads
//! (`crate::predicate`), so a reader or writer waiting on an end sleeps in
//! the kernel until the other side makes progress or goes, as on a pipe.
//! Everything is changed under the big lock.
//!
//! As Linux: the master reads EIO once the last slave has closed and the
//! queue is drained (its writes are then dropped); a slave reads
//! end of file and writes EIO once the master has gone, and the master's
//! last close sends SIGHUP to the foreground group of the session whose
//! controlling terminal the slave is, as the session leader's exit does. A session takes the slave as its
//! controlling terminal with `TIOCSCTTY` (or by opening it without
//! `O_NOCTTY` as a session leader without one), and `/dev/tty` then opens
//! it.

use super::flags::{ACCMODE, NONBLOCK};
use super::ldisc::{self, Edit, Shared, Termios};
use super::pipe::{self, GUARDED_PAGES};
use super::{no_seek, pipemem, File, Handle, Kind, Object, Ops, POLLERR, POLLHUP, POLLIN, POLLOUT};
use crate::errno::Errno;
use crate::errno::{EAGAIN, EINVAL, EIO, EMFILE, ENOENT, ENOMEM, ENOTTY, EPERM};
use crate::fs::stat::dev;
use crate::fs::{dir, node, Ino, Stat};
use crate::shared;
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// `/dev/ptmx`'s device number, and the slaves' major (`/dev/pts/N` is
/// 136:N), Linux's.
pub const PTMX: u32 = dev(5, 2);
const SLAVE_MAJOR: u32 = 136;
/// Pairs open at once.
const MAX: usize = 64;
/// Each queue's bytes.
const QSIZE: usize = 4096;
/// The longest canonical line.
const LINE: usize = 1024;
/// Finished canonical lines a queue holds.
const ENDS: usize = 64;

/// One direction of a pair: a byte ring behind a predicate's header.
#[repr(C, align(64))]
struct Queue {
    /// The header (`crate::predicate`): whether the reading end and the
    /// writing end are there, and (`head` − `tail`) what a read would
    /// find: bytes plus finished lines (an empty line at end of file is
    /// something to read).
    readers: AtomicU32,
    writers: AtomicU32,
    head: AtomicU64,
    tail: AtomicU64,
    room_mark: AtomicU64,
    /// Bytes ever put in and taken out.
    wr: u64,
    rd: u64,
    /// Where finished canonical lines end (positions in `wr`'s count),
    /// oldest first.
    ends: [u64; ENDS],
    nends: usize,
    buf: [u8; QSIZE],
}

const _: () = {
    assert!(core::mem::offset_of!(Queue, readers) == crate::predicate::READERS_AT as usize);
    assert!(core::mem::offset_of!(Queue, writers) == crate::predicate::WRITERS_AT as usize);
    assert!(core::mem::offset_of!(Queue, head) == crate::predicate::HEAD_AT as usize);
    assert!(core::mem::offset_of!(Queue, tail) == crate::predicate::TAIL_AT as usize);
    assert!(core::mem::offset_of!(Queue, room_mark) == crate::predicate::ROOM_AT as usize);
};

impl Queue {
    fn used(&self) -> usize {
        (self.wr - self.rd) as usize
    }

    fn free(&self) -> usize {
        QSIZE - self.used()
    }

    /// Whether a read would find something (bytes, or an empty line).
    fn readable(&self) -> bool {
        self.used() > 0 || self.nends > 0
    }

    /// Puts in as much of `b` as fits.
    fn push(&mut self, b: &[u8]) {
        for &c in b.iter().take(self.free()) {
            self.buf[self.wr as usize % QSIZE] = c;
            self.wr += 1;
        }
        self.sync();
    }

    /// Ends a canonical line here; false if no more lines fit.
    fn end_line(&mut self) -> bool {
        if self.nends == ENDS {
            return false;
        }
        self.ends[self.nends] = self.wr;
        self.nends += 1;
        self.sync();
        true
    }

    /// Takes what a read finds: in canonical mode up to the end of the
    /// first line (0 for an empty one), else what is there; None when
    /// nothing is.
    fn take(&mut self, out: &mut [u8], canonical: bool) -> Option<usize> {
        let limit = match (canonical, self.nends) {
            (true, n) if n > 0 => self.ends[0],
            _ if self.used() > 0 => self.wr,
            _ => return None,
        };
        let n = ((limit - self.rd) as usize).min(out.len());
        for b in &mut out[..n] {
            *b = self.buf[self.rd as usize % QSIZE];
            self.rd += 1;
        }
        // Line ends now behind the reader are done with (one at the
        // reader only if this read was canonical: it ended there).
        let done =
            self.ends[..self.nends].iter().take_while(|&&e| e < self.rd || canonical && e == self.rd).count();
        self.ends.copy_within(done..self.nends, 0);
        self.nends -= done;
        self.sync();
        Some(n)
    }

    /// Drops everything queued.
    fn flush(&mut self) {
        self.rd = self.wr;
        self.nends = 0;
        self.sync();
    }

    /// Publishes what a read would find, for predicates and `poll`.
    fn sync(&self) {
        self.head.store((self.used() + self.nends) as u64, Ordering::Release);
        self.tail.store(0, Ordering::Release);
    }
}

/// A pseudo-terminal pair.
#[repr(C)]
pub struct Pair {
    /// Master to slave, after the line discipline; slave to master.
    input: Queue,
    output: Queue,
    /// The line being typed (canonical mode).
    edit: Edit<LINE>,
    termios: Termios,
    shared: Shared,
    /// Its number (`/dev/pts/N`) and node.
    index: u32,
    node: Ino,
    /// The slave cannot be opened (`TIOCSPTLCK`).
    locked: bool,
    master: bool,
    /// Open descriptions of the slave.
    slaves: u32,
}

impl Pair {
    /// Publishes which ends are there in the queues' headers: the master
    /// reads EIO (wakes) once a slave has been and gone, a slave reads end
    /// of file once the master has gone.
    fn ends_changed(&self, slave_gone: bool) {
        self.input.writers.store(self.master as u32, Ordering::Release);
        self.input.readers.store((self.slaves > 0) as u32, Ordering::Release);
        self.output.readers.store(self.master as u32, Ordering::Release);
        if slave_gone || self.slaves > 0 {
            self.output.writers.store((self.slaves > 0) as u32, Ordering::Release);
        }
    }

    /// Sends `sig` to the foreground group, if one is set.
    fn signal(&self, sig: u32) {
        signal_group(self.shared.pgrp, sig);
    }

    /// Input byte `c` typed at the master; false when it must wait for
    /// room.
    fn typed(&mut self, c: u8) -> bool {
        let t = self.termios;
        let pgrp = self.shared.pgrp;
        let Pair { input, output, edit, .. } = self;
        if let Some(sig) = t.signal_for(c) {
            // As Linux: the signal, then both queues flushed, then the echo.
            signal_group(pgrp, sig);
            edit.clear();
            input.flush();
            output.flush();
            t.echo_control(c, &mut |b| t.output(b, &mut |o| output.push(o)));
            return true;
        }
        let need = if t.canonical() { LINE } else { 1 };
        if input.free() < need || input.nends == ENDS {
            return false;
        }
        let mut echo = |b: &[u8]| t.output(b, &mut |o| output.push(o));
        let Some(c) = t.input(c) else { return true };
        if !t.canonical() {
            input.push(&[c]);
            if t.echoes() {
                echo(&[c]);
            }
        } else if edit.key(c, &t, &mut echo) {
            input.push(edit.line());
            input.end_line();
            edit.clear();
        }
        true
    }
}

/// Sends `sig` to process group `pgrp`, if one is set (0: none, not
/// everyone).
fn signal_group(pgrp: u32, sig: u32) {
    if pgrp != 0 {
        (ldisc::jobs().signal_group)(pgrp, sig);
    }
}

/// A pair's place in the table: its frames, their range's ticket (an
/// opener by name claims them with it, judged by the rule), and the
/// session whose controlling terminal its slave is (0: none). In the
/// arena: a process that writes it can lose a pair or misdirect an opener,
/// not reach a pair it may not open.
#[derive(Clone, Copy)]
struct Slot {
    pair: *mut Pair,
    ticket: u64,
    session: u32,
}

/// The pairs by number.
struct Table {
    slots: [Slot; MAX],
}

/// Slot 7 of the arena's roots (`shared::Root`).
static TABLE: shared::Root<Table> = shared::Root::new(7);

fn table() -> Result<&'static mut Table, Errno> {
    // SAFETY: null pointers are an empty table; the big lock is held.
    unsafe { TABLE.get_or_create_zeroed().map(|t| &mut *t).map_err(|_| ENOMEM) }
}

/// Where the table says pair `n` is, and its range's ticket (read from
/// the arena, so anything).
pub fn named(n: u32) -> Option<(u64, u64)> {
    let s = table().ok()?.slots.get(n as usize).copied()?;
    (!s.pair.is_null()).then_some((s.pair as u64, s.ticket))
}

/// Pair `n`, mapped here (with the ticket beside its number, if this
/// process did not map it: the kernel judges the claim by the rule), and
/// whether it was just mapped. ENOENT when there is none (or the table's
/// words name frames that are not pair `n`), EACCES when the rule refuses
/// this process.
fn reach(n: u32) -> Result<(*mut Pair, bool), Errno> {
    let (at, ticket) = named(n).ok_or(ENOENT)?;
    let now = pipemem::claim_named(at, ticket, GUARDED_PAGES)?.ok_or(ENOENT)?;
    let p = at as *mut Pair;
    // SAFETY: frames of their own mapped here, read only.
    if unsafe { (*p).index } == n {
        return Ok((p, now));
    }
    if now {
        pipemem::release(at, GUARDED_PAGES);
    }
    Err(ENOENT)
}

/// A new description of pair `n`'s slave, opened by name (`/dev/pts/N`,
/// `/dev/tty`): its frames stay mapped here with it.
fn open_named(n: u32, status: u32, noctty: bool) -> Result<Handle<File>, Errno> {
    let (p, now) = reach(n)?;
    // SAFETY: mapped (`reach`); the big lock is held.
    let f = open_slave(unsafe { &mut *p }, status, noctty);
    if f.is_err() && now {
        pipemem::release(p as u64, GUARDED_PAGES);
    }
    f
}

/// Pair `p`'s place in the table.
fn slot(p: &Pair) -> Result<&'static mut Slot, Errno> {
    Ok(&mut table()?.slots[p.index as usize % MAX])
}

/// The pair description `f` is an end of.
fn pair(f: &File) -> &'static mut Pair {
    // SAFETY: a pty end's object is its pair, live while an end is open;
    // the big lock is held and the caller holds no other reference.
    unsafe { f.object::<Pair>().get_mut() }
}

/// `/dev/pts`, made at boot (`devfs`).
fn pts_dir() -> Option<Ino> {
    dir::lookup(dir::lookup(crate::fs::ROOT, b"dev")?, b"pts")
}

/// `N` as a name.
fn name(i: u32, buf: &mut [u8; 4]) -> &[u8] {
    let mut n = 0;
    let mut v = i;
    loop {
        buf[3 - n] = b'0' + (v % 10) as u8;
        n += 1;
        v /= 10;
        if v == 0 || n == 4 {
            break;
        }
    }
    &buf[4 - n..]
}

/// Whether device `rdev` is a pty's (`/dev/ptmx`, `/dev/pts/N`).
pub fn is_pty(rdev: u32) -> bool {
    rdev == PTMX || crate::fs::stat::split(rdev).0 == SLAVE_MAJOR
}

/// Opens device `rdev` (a pty's) with status flags `status` for node
/// `ino`; `noctty`: `O_NOCTTY`.
pub fn open(rdev: u32, ino: Ino, status: u32, noctty: bool) -> Result<Handle<File>, Errno> {
    if rdev == PTMX {
        return open_master(ino, status);
    }
    open_named(crate::fs::stat::split(rdev).1, status, noctty)
}

/// A new pair numbered `index` for slave node `ino`, in frames of its own
/// whose rule is the node's owner, group and bits (`pipemem::rule`).
fn make(ino: Ino, index: u32) -> Result<*mut Pair, Errno> {
    let n = node::get(ino);
    let (owner, mode) = pipemem::rule(n.uid, n.gid, n.mode, 0o6, &crate::fs::perm::me());
    let p = pipe::own_frames(owner, mode)? as *mut Pair;
    // SAFETY: fresh zeroed frames, ours alone, with room for a Pair (the
    // assertion below): all zero is empty queues and plain fields.
    let pair = unsafe { &mut *p };
    pair.termios = Termios::PTY;
    pair.index = index;
    pair.node = ino;
    pair.locked = true;
    pair.master = true;
    pair.input.room_mark.store((QSIZE - LINE) as u64, Ordering::Relaxed);
    pair.output.room_mark.store((QSIZE - 2) as u64, Ordering::Relaxed);
    pair.output.writers.store(1, Ordering::Relaxed);
    pair.ends_changed(false);
    Ok(p)
}

const _: () = assert!(size_of::<Pair>() <= pipe::OWN_ROOM);

/// A new pair and its master.
fn open_master(ptmx: Ino, status: u32) -> Result<Handle<File>, Errno> {
    let t = table()?;
    let index = t.slots.iter().position(|s| s.pair.is_null()).ok_or(EMFILE)?;
    let pts = pts_dir().ok_or(ENOENT)?;
    let ino = node::alloc_on(crate::fs::S_IFCHR | 0o620, node::FS_DEV)?;
    node::update(ino, |n| n.rdev = dev(SLAVE_MAJOR, index as u32));
    crate::fs::perm::own_new(pts, ino);
    let mut buf = [0; 4];
    let made = make(ino, index as u32).and_then(|p| match dir::add(pts, name(index as u32, &mut buf), ino) {
        Ok(()) => Ok(p),
        Err(e) => {
            pipe::unmake(p as u64);
            Err(e)
        }
    });
    let opened = made.and_then(|p| match super::new(Kind::PtyMaster, status & (ACCMODE | NONBLOCK), ptmx) {
        Ok(f) => Ok((f, p)),
        Err(e) => {
            dir::remove(pts, name(index as u32, &mut buf));
            pipe::unmake(p as u64);
            Err(e)
        }
    });
    let (f, p) = opened.inspect_err(|_| node::release(ino))?;
    t.slots[index] = Slot { pair: p, ticket: pipe::ticket(p as u64).unwrap_or(0), session: 0 };
    // SAFETY: just made; nobody else refers to it yet; `p` is a live pair.
    unsafe { f.get_mut().obj = Object::Pty(Handle::from_raw(p)) };
    Ok(f)
}

/// A new description of `pair`'s slave.
fn open_slave(pair: &mut Pair, status: u32, noctty: bool) -> Result<Handle<File>, Errno> {
    if pair.locked || !pair.master {
        return Err(EIO);
    }
    let f = super::new(Kind::PtySlave, status & (ACCMODE | NONBLOCK), pair.node)?;
    // SAFETY: just made; nobody else refers to it yet; the pair is live.
    unsafe { f.get_mut().obj = Object::Pty(Handle::from_raw(pair)) };
    pair.slaves += 1;
    pair.ends_changed(false);
    // A session leader without a terminal takes the first it opens.
    let (pid, sid) = (ldisc::jobs().session)();
    if !noctty && pid == sid && controlling().is_none() {
        if let Some(s) = slot(pair).ok().filter(|s| s.session == 0) {
            s.session = sid;
            pair.shared.pgrp = (ldisc::jobs().own_group)();
        }
    }
    Ok(f)
}

/// The number of the pair whose slave is the caller's session's
/// controlling terminal.
fn controlling() -> Option<u32> {
    let (_, sid) = (ldisc::jobs().session)();
    let at = table().ok()?.slots.iter().position(|s| !s.pair.is_null() && sid != 0 && s.session == sid)?;
    Some(at as u32)
}

/// The caller is ending: if it leads a session whose controlling terminal
/// is a pty, the terminal hangs up, as Linux's: SIGHUP and SIGCONT to its
/// foreground group, and no session has it any more.
pub fn session_ended() {
    let (pid, sid) = (ldisc::jobs().session)();
    if pid != sid {
        return;
    }
    let Some(n) = controlling() else { return };
    // (A leader that holds no end maps the pair for this, if its rule
    // lets it.)
    if let Ok((p, now)) = reach(n) {
        // SAFETY: mapped (`reach`); the big lock is held.
        let p = unsafe { &mut *p };
        // (Not to the caller: it is ending.)
        if p.shared.pgrp != 0 {
            (ldisc::jobs().signal_others)(p.shared.pgrp, ldisc::SIGHUP);
            (ldisc::jobs().signal_others)(p.shared.pgrp, SIGCONT);
        }
        p.shared.pgrp = 0;
        if now {
            pipemem::release(p as *mut Pair as u64, GUARDED_PAGES);
        }
    }
    if let Ok(t) = table() {
        t.slots[n as usize].session = 0;
    }
}

/// Linux's.
const SIGCONT: u32 = 18;

/// `/dev/tty` for a session whose controlling terminal is a pty: a new
/// description of that slave (None: the session has no pty).
pub fn open_controlling(status: u32) -> Option<Result<Handle<File>, Errno>> {
    controlling().map(|n| open_named(n, status, true))
}

pub static OPS: Ops = Ops { read, write, seek: no_seek, stat, ioctl, close };

fn read(f: &mut File, buf: &mut [u8]) -> Result<usize, Errno> {
    let p = pair(f);
    if f.kind == Kind::PtyMaster {
        let n = p.output.take(buf, false);
        // The slave gone (its header's writers 0) and nothing left: EIO.
        n.ok_or(if p.output.writers.load(Ordering::Relaxed) == 0 { EIO } else { EAGAIN })
    } else {
        let canonical = p.termios.canonical();
        // Nothing there: end of file without the master, 0 for a polled
        // read (`VMIN` 0), else wait.
        match p.input.take(buf, canonical) {
            Some(n) => Ok(n),
            None if p.master && !p.termios.polled() => Err(EAGAIN),
            None => Ok(0),
        }
    }
}

fn write(f: &mut File, buf: &[u8]) -> Result<usize, Errno> {
    let p = pair(f);
    let mut done = 0;
    if f.kind == Kind::PtyMaster {
        if p.output.writers.load(Ordering::Relaxed) == 0 {
            // The slave has been and gone: Linux takes the bytes and drops
            // them (before it is first opened they wait for it).
            return Ok(buf.len());
        }
        while done < buf.len() && p.typed(buf[done]) {
            done += 1;
        }
    } else {
        if !p.master {
            return Err(EIO);
        }
        let t = p.termios;
        // Room for the longest translation of a byte (CR LF).
        while done < buf.len() && p.output.free() >= 2 {
            t.output(&buf[done..=done], &mut |o| p.output.push(o));
            done += 1;
        }
    }
    if done == 0 && !buf.is_empty() {
        return Err(EAGAIN);
    }
    Ok(done)
}

fn stat(f: &File, st: &mut Stat) -> Result<(), Errno> {
    *st = crate::fs::stat::of(f.ino);
    Ok(())
}

/// What `poll` finds on end `f` (the lock is held).
pub fn events(f: &File) -> u16 {
    let p = pair(f);
    if f.kind == Kind::PtyMaster {
        let gone = p.output.writers.load(Ordering::Relaxed) == 0;
        let hup = if gone { POLLHUP } else { 0 };
        // (With the slave gone, writes are taken and dropped.)
        let out = if gone || p.input.free() >= LINE { POLLOUT } else { 0 };
        hup | out | if p.output.readable() { POLLIN } else { 0 }
    } else if !p.master {
        POLLIN | POLLOUT | POLLHUP | POLLERR
    } else {
        (if p.input.readable() { POLLIN } else { 0 }) | if p.output.free() >= 2 { POLLOUT } else { 0 }
    }
}

/// Changes whenever either queue of `f`'s pair takes bytes or an end
/// comes or goes (edge-triggered epoll).
pub fn stamp(f: &File) -> u64 {
    let p = pair(f);
    p.input.wr + p.input.nends as u64 + p.output.wr + p.slaves as u64 + p.master as u64
}

/// The header a wait on end `f` for reading (or writing) sleeps on.
pub fn wait_ring(f: &File, write: bool) -> u64 {
    let p = pair(f);
    let q = if (f.kind == Kind::PtyMaster) != write { &p.output } else { &p.input };
    q as *const Queue as u64
}

const TCSBRK: u64 = 0x5409;
const TCXONC: u64 = 0x540a;
const TCFLSH: u64 = 0x540b;
const TIOCSCTTY: u64 = 0x540e;
const TIOCOUTQ: u64 = 0x5411;
const TIOCNOTTY: u64 = 0x5422;
const TIOCGSID: u64 = 0x5429;
const TIOCGPTN: u64 = 0x8004_5430;
const TIOCSPTLCK: u64 = 0x4004_5431;
const TIOCGPTLCK: u64 = 0x8004_5439;
const TIOCGPTPEER: u64 = 0x5441;
/// `open`'s flags `TIOCGPTPEER` takes.
const O_NOCTTY: u64 = 0o400;
const O_CLOEXEC: u64 = 0o2000000;

fn ioctl(f: &mut File, req: u64, arg: u64) -> Result<usize, Errno> {
    ioctl_of(f, req, arg).map(|n| n as usize)
}

fn ioctl_of(f: &mut File, req: u64, arg: u64) -> Result<i64, Errno> {
    let master = f.kind == Kind::PtyMaster;
    let p = pair(f);
    let was_canonical = p.termios.canonical();
    let own = (ldisc::jobs().own_group)();
    if let Some(r) = ldisc::ioctl(&mut p.termios, &mut p.shared, req, arg, own) {
        match r? {
            ldisc::Did::Answer(n) => return Ok(n),
            ldisc::Did::Resized => p.signal(ldisc::SIGWINCH),
            ldisc::Did::Set { flush } => {
                if flush {
                    p.edit.clear();
                    p.input.flush();
                } else if was_canonical && !p.termios.canonical() {
                    // What was being typed becomes readable at once.
                    p.input.push(p.edit.line());
                    p.edit.clear();
                }
            }
        }
        return Ok(0);
    }
    let (mine, theirs) = if master { (&mut p.output, &mut p.input) } else { (&mut p.input, &mut p.output) };
    match req {
        super::FIONREAD => super::put_readable(arg, mine.used() as u64).map(|n| n as i64),
        TIOCOUTQ => super::put_readable(arg, theirs.used() as u64).map(|n| n as i64),
        TCFLSH => {
            match arg {
                0 => mine.flush(),
                1 => theirs.flush(),
                2 => {
                    mine.flush();
                    theirs.flush();
                }
                _ => return Err(EINVAL),
            }
            Ok(0)
        }
        TCSBRK | TCXONC => Ok(0),
        TIOCGSID => match slot(p)?.session {
            0 => Err(ENOTTY),
            sid => crate::uaccess::put(arg, sid as i32).map(|_| 0),
        },
        TIOCGPTN if master => crate::uaccess::put(arg, p.index).map(|_| 0),
        TIOCSPTLCK if master => crate::uaccess::get::<i32>(arg).map(|v| {
            p.locked = v != 0;
            0
        }),
        TIOCGPTLCK if master => crate::uaccess::put(arg, p.locked as i32).map(|_| 0),
        TIOCGPTPEER if master => {
            let s = open_slave(p, arg as u32 & (ACCMODE | NONBLOCK), arg & O_NOCTTY != 0)?;
            crate::fd::open(s, arg & O_CLOEXEC != 0)
        }
        TIOCSCTTY if !master => {
            let (pid, sid) = (ldisc::jobs().session)();
            let session = &mut slot(p)?.session;
            if *session == sid && sid != 0 {
                return Ok(0);
            }
            if pid != sid || *session != 0 || controlling().is_some() {
                return Err(EPERM);
            }
            *session = sid;
            p.shared.pgrp = own;
            Ok(0)
        }
        TIOCNOTTY if !master => {
            let (pid, sid) = (ldisc::jobs().session)();
            let session = &mut slot(p)?.session;
            if *session != sid || sid == 0 {
                return Err(ENOTTY);
            }
            if pid == sid {
                *session = 0;
                p.signal(ldisc::SIGHUP);
                p.shared.pgrp = 0;
            }
            Ok(0)
        }
        _ => Err(ENOTTY),
    }
}

fn close(f: &mut File) {
    let p = pair(f);
    if f.kind == Kind::PtyMaster {
        p.master = false;
        // The slave's name goes with the master, as on Linux.
        let mut buf = [0; 4];
        if let Some(pts) = pts_dir() {
            dir::remove(pts, name(p.index, &mut buf));
        }
        if slot(p).is_ok_and(|s| s.session != 0) {
            p.signal(ldisc::SIGHUP);
        }
        p.ends_changed(false);
    } else {
        p.slaves -= 1;
        p.ends_changed(true);
    }
    if !p.master && p.slaves == 0 {
        if let Ok(s) = slot(p) {
            *s = Slot { pair: core::ptr::null_mut(), ticket: 0, session: 0 };
        }
        node::release(p.node);
        // Its last end is going: no process needs the frames any more.
        pipe::unmake(f.object::<Pair>().addr());
    }
}
