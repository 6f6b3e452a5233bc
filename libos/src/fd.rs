//! The per-process file-descriptor table: small integers naming shared
//! open files, each with the method table this process uses for it. The
//! frames a descriptor's file lives in (a pipe's, a description page) are
//! mapped here while a descriptor needs them (`obj::pipes_of`).

use crate::errno::Errno;
use crate::errno::{EBADF, EMFILE};
use crate::obj::{self, descpage, pipemem, File, Handle, Ops};
use crate::scoped::Scoped;
use alloc::vec::Vec;

/// The most descriptors a process may have (Linux's `nr_open`, the
/// highest `RLIMIT_NOFILE` can be set to).
pub const MAX_FDS: usize = 1024;

#[derive(Clone, Copy)]
pub struct Fd {
    pub ops: &'static Ops,
    pub file: Handle<File>,
    pub cloexec: bool,
}

/// A process's descriptors, indexed by number.
pub struct Table {
    slots: Vec<Option<Fd>>,
    /// Numbers from this one up cannot be had (`RLIMIT_NOFILE`'s soft
    /// limit; descriptors already above it stay).
    limit: usize,
}

impl Table {
    pub const EMPTY: Table = Table { slots: Vec::new(), limit: MAX_FDS };

    fn get(&self, fd: i64) -> Result<Fd, Errno> {
        usize::try_from(fd).ok().and_then(|i| self.slots.get(i).copied().flatten()).ok_or(EBADF)
    }

    /// Whether a descriptor needs the pipe frames at `base` mapped (an
    /// address in the pipes' window: only pipes are there): it is an end
    /// of that pipe, or an epoll set watching one (`obj::needs_pipe`).
    fn names_pipe(&self, base: u64) -> bool {
        self.slots.iter().flatten().any(|d| obj::needs_pipe(d.file, base))
    }

    /// Puts `fd` at `at`, which must be free or closed by the caller.
    fn put(&mut self, at: usize, fd: Option<Fd>) {
        if self.slots.len() <= at {
            self.slots.resize(at + 1, None);
        }
        if let Some(d) = fd {
            obj::pipe::held(d.file, crate::env::id(), 1);
        }
        self.slots[at] = fd;
    }
}

static TABLE: Scoped<Table> = Scoped::new("the descriptor table", Table::EMPTY);

/// Runs `f` on this process's descriptor table.
#[inline]
fn with_table<R>(f: impl FnOnce(&mut Table) -> R) -> R {
    TABLE.with(f)
}

/// The descriptor `fd`, for a call that does I/O or changes the file
/// through it: an `O_PATH` descriptor is none (EBADF).
#[inline]
pub fn get(fd: i64) -> Result<Fd, Errno> {
    let d = get_raw(fd)?;
    if d.file.kind() == obj::Kind::Path {
        return Err(EBADF);
    }
    Ok(d)
}

/// The descriptor `fd`, `O_PATH` ones too: for the calls that only name a
/// file through it (`fstat`, the `*at` calls' directory, `dup`, `close`,
/// `fcntl`'s descriptor flags, `fchdir`, `fstatfs`).
#[inline]
pub fn get_raw(fd: i64) -> Result<Fd, Errno> {
    with_table(|t| t.get(fd))
}

/// The open file behind a descriptor (in the shared arena).
///
/// # Safety
/// No other reference to the file may be live while the result is (the
/// big lock keeps other processes out; two descriptors, here or in another
/// process, may name the same file).
pub unsafe fn file(fd: &Fd) -> &'static mut File {
    // SAFETY: a descriptor holds a reference, so the file is live; the
    // caller guarantees the reference is the only one.
    unsafe { fd.file.get_mut() }
}

/// Installs `fd` at the lowest free number `>= min`.
pub fn install(fd: Fd, min: usize) -> Result<i64, Errno> {
    with_table(|t| {
        let i = (min..t.limit).find(|&i| t.slots.get(i).is_none_or(|s| s.is_none())).ok_or(EMFILE)?;
        t.put(i, Some(fd));
        Ok(i as i64)
    })
}

/// Installs a new descriptor for a fresh file (taking over its reference).
pub fn open(file: Handle<File>, cloexec: bool) -> Result<i64, Errno> {
    let kind = file.kind();
    let r = install(Fd { ops: obj::ops_for(kind), file, cloexec }, 0);
    if r.is_err() {
        put_unheld(obj::ops_for(kind), file);
    }
    r
}

/// Puts a duplicate of `fd` at exactly `at` (closing what was there).
pub fn dup_to(fd: Fd, at: usize, cloexec: bool) -> Result<i64, Errno> {
    if at >= limit() {
        return Err(EBADF);
    }
    // SAFETY: the descriptor keeps the file live; no other reference to it here.
    unsafe { file(&fd) }.refs += 1;
    let _ = close(at as i64);
    with_table(|t| t.put(at, Some(Fd { cloexec, ..fd })));
    Ok(at as i64)
}

pub fn dup(fd: Fd, min: usize, cloexec: bool) -> Result<i64, Errno> {
    // SAFETY: the descriptor keeps the file live; no other reference to it here.
    unsafe { file(&fd) }.refs += 1;
    let r = install(Fd { cloexec, ..fd }, min);
    if r.is_err() {
        // SAFETY: the descriptor keeps the file live; no other reference to it here.
        unsafe { file(&fd) }.refs -= 1;
    }
    r
}

pub fn close(fd: i64) -> Result<i64, Errno> {
    let d = with_table(|t| {
        let d = t.get(fd)?;
        t.slots[fd as usize] = None;
        Ok::<_, Errno>(d)
    })?;
    // POSIX: any close of a file ends the process's record locks on it.
    // SAFETY: the descriptor kept the file live; no other reference to it here.
    crate::locks::released_by_close(unsafe { file(&d) }.lock_key(), crate::env::id());
    obj::pipe::held(d.file, crate::env::id(), -1);
    put_unheld(d.ops, d.file);
    Ok(0)
}

/// Drops a reference to `file`, which no descriptor here names, and
/// unmaps the pipe frames it needed that no descriptor here needs.
pub fn put_unheld(ops: &Ops, file: Handle<File>) {
    let pipes = obj::pipes_of(file);
    obj::put(ops, file);
    unmap_unheld(&pipes);
}

/// Unmaps each of the pipe frames (or description pages) at `bases`
/// (`obj::pipes_of` a description this process let go of) that no
/// descriptor here needs any more: after this process's last close of a
/// pipe or a description in the page, of a set watching it, or a passed
/// one it did not keep. The current description page stays for the next
/// open.
pub fn unmap_unheld(bases: &[u64]) {
    for &base in bases {
        if !pipemem::mapped(base) || descpage::is_current(base) || with_table(|t| t.names_pipe(base)) {
            continue;
        }
        if pipemem::in_descs(base) {
            descpage::let_go(base);
        } else {
            pipemem::release(base, obj::pipe::GUARDED_PAGES);
        }
    }
}

/// fork: maps into child `env` the frames of the pipes and the
/// description pages this process's descriptors need (`obj::pipes_of`).
pub fn share_pipes(env: u64) -> Result<(), abi::Error> {
    let mut bases: Vec<u64> =
        with_table(|t| t.slots.iter().flatten().flat_map(|d| obj::pipes_of(d.file)).collect());
    bases.sort_unstable();
    bases.dedup();
    descpage::shared_at_fork(&bases);
    pipemem::share_with(env, &bases, obj::pipe::GUARDED_PAGES)
}

pub fn set_cloexec(fd: i64, on: bool) -> Result<(), Errno> {
    with_table(|t| {
        let d = t.get(fd)?;
        t.slots[fd as usize] = Some(Fd { cloexec: on, ..d });
        Ok(())
    })
}

/// Lets a program replace the methods it uses for one descriptor (the
/// ExOS extension point); returns the old table.
pub fn set_ops(fd: i64, ops: &'static Ops) -> Result<&'static Ops, Errno> {
    with_table(|t| {
        let d = t.get(fd)?;
        t.slots[fd as usize] = Some(Fd { ops, ..d });
        Ok(d.ops)
    })
}

/// The lowest number a new descriptor may not have (`RLIMIT_NOFILE`).
pub fn limit() -> usize {
    with_table(|t| t.limit)
}

/// Sets `limit` (at most `MAX_FDS`).
pub fn set_limit(n: usize) {
    with_table(|t| t.limit = n.min(MAX_FDS));
}

/// Every open descriptor number.
pub fn all() -> Vec<i64> {
    with_table(|t| (0..t.slots.len() as i64).filter(|&i| t.get(i).is_ok()).collect())
}

/// exec: descriptors marked close-on-exec go.
pub fn close_on_exec() {
    for i in all() {
        if get_raw(i).is_ok_and(|d| d.cloexec) {
            let _ = close(i);
        }
    }
}

/// exit: everything goes (so pipe peers see EOF / EPIPE), and the
/// current description page with it.
pub fn close_all() {
    descpage::exiting();
    for i in all() {
        let _ = close(i);
    }
    descpage::exited();
}

/// fork: the child's copy of this table names the same files, one more
/// reference each (a pipe's reader/writer counts count files, so they need
/// no change).
pub fn fork_refs(child: u32) {
    for i in all() {
        if let Ok(d) = get_raw(i) {
            // SAFETY: the descriptor keeps the file live; no other reference to it here.
            unsafe { file(&d) }.refs += 1;
            obj::pipe::held(d.file, child, 1);
        }
    }
}
