//! Advisory file locks, shared by every process: POSIX record locks
//! (`fcntl` `F_SETLK`; owned by a process), open-file-description locks
//! (`F_OFD_SETLK`; owned by the description, in the same space as POSIX
//! locks, so the two conflict) and BSD whole-file locks (`flock`; owned by
//! the description, a space of their own), as Linux keeps them.
//!
//! The locks are one table in the arena (`TABLE`), read
//! and changed under the big lock. A lock names its file by a key
//! (`obj::File::lock_key`: its inode, or for a file without one its
//! description) and a byte range with an
//! inclusive end (`u64::MAX`: to the end of any file). A process's POSIX
//! locks on a file go when it closes any descriptor of that file
//! (`released_by_close`, from `fd::close`) or ends (an entry of a process
//! that has ended is free, as the futex table's are); a description's
//! locks go with its last reference (`released_by_file`, from `obj::put`).
//! A lock a request cannot have waits in the caller (`linux/flock.rs`),
//! not here.

use crate::errno::Errno;
use crate::errno::ENOLCK;
use crate::lock;
use abi::tables::env_state;
use user::kinfo;

/// Entries in the table.
const LOCKS: usize = 256;

/// Whose a lock is.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    /// A process (POSIX locks), by environment id, and its pid (what
    /// `F_GETLK` reports).
    Process(u32, u32),
    /// An open file description (OFD and `flock` locks), by address.
    File(u64),
}

/// Which space a lock is in: record locks (POSIX and OFD) or `flock`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Space {
    Record,
    Flock,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct Entry {
    /// The file (0: a free entry).
    file: u64,
    /// `Owner::Process`: environment id and pid; `Owner::File`: address.
    owner: u64,
    pid: u32,
    by_process: bool,
    flock: bool,
    write: bool,
    start: u64,
    end: u64,
}

impl Entry {
    fn owner(&self) -> Owner {
        if self.by_process {
            Owner::Process(self.owner as u32, self.pid)
        } else {
            Owner::File(self.owner)
        }
    }

    fn space(&self) -> Space {
        if self.flock {
            Space::Flock
        } else {
            Space::Record
        }
    }

    /// Free, or held by a process that has ended.
    fn free(&self) -> bool {
        self.file == 0
            || self.by_process && kinfo::env_by_id(self.owner).is_none_or(|e| e.state == env_state::EXITED)
    }
}

/// The table (in the arena's header: all zero, as the arena starts, is
/// every entry free), and how many entries name a file (so that a close
/// looks at it only when some lock may be held).
#[repr(C)]
pub struct Table {
    named: u32,
    entries: [Entry; LOCKS],
}

impl Table {
    fn put(&mut self, i: usize, e: Entry) {
        if self.entries[i].file == 0 {
            self.named += 1;
        }
        self.entries[i] = e;
    }

    fn clear(&mut self, i: usize) {
        if self.entries[i].file != 0 {
            self.named -= 1;
            self.entries[i].file = 0;
        }
    }

    /// A free entry's index.
    fn room(&self) -> Option<usize> {
        self.entries.iter().position(Entry::free)
    }
}

/// The table, in the arena.
static TABLE: crate::shared::Root<Table> = crate::shared::Root::new(4);

/// Makes the table (first process, at start).
pub fn create() -> Result<(), abi::Error> {
    // SAFETY: an entry of environment 0 is free: all zero is an empty table.
    unsafe { TABLE.create_zeroed() }
}

fn with_table<R>(f: impl FnOnce(&mut Table) -> R) -> R {
    debug_assert!(lock::held());
    // SAFETY: the table is in the arena, mapped in every process; the big
    // lock keeps every other thread and process out while `f` runs, and no
    // other reference to it is made.
    f(unsafe { &mut *TABLE.get() })
}

/// A lock someone else holds that a request meets: what `F_GETLK`
/// reports.
#[derive(Clone, Copy)]
pub struct Held {
    pub write: bool,
    pub start: u64,
    pub end: u64,
    pub owner: Owner,
}

fn encode(o: Owner) -> (u64, u32, bool) {
    match o {
        Owner::Process(env, pid) => (env as u64, pid, true),
        Owner::File(addr) => (addr, 0, false),
    }
}

fn same_owner(e: &Entry, o: Owner) -> bool {
    let (id, _, by_process) = encode(o);
    e.by_process == by_process && e.owner == id
}

/// The first lock of another owner on `file` in `space` that a `write` (or
/// read) lock of `[start, end]` by `owner` would conflict with.
pub fn conflict(file: u64, space: Space, owner: Owner, write: bool, start: u64, end: u64) -> Option<Held> {
    with_table(|t| {
        t.entries
            .iter()
            .find(|e| {
                !e.free()
                    && e.file == file
                    && e.space() == space
                    && !same_owner(e, owner)
                    && e.start <= end
                    && start <= e.end
                    && (write || e.write)
            })
            .map(|e| Held { write: e.write, start: e.start, end: e.end, owner: e.owner() })
    })
}

/// Sets `owner`'s lock on `[start, end]` of `file` to `write`, read
/// (`Some(false)`) or none (`None`): what it held there before is replaced
/// (split where the new range cuts it), and touching ranges of one kind
/// merge, as Linux's `posix_lock_file`. The caller has checked for
/// conflicts. ENOLCK when the table is full (nothing changed).
pub fn set(
    file: u64,
    space: Space,
    owner: Owner,
    lock: Option<bool>,
    start: u64,
    end: u64,
) -> Result<(), Errno> {
    with_table(|t| {
        // Room first: a split needs one entry, the new lock one more.
        if t.entries.iter().filter(|e| e.free()).count() < 2 {
            return Err(ENOLCK);
        }
        let (id, pid, by_process) = encode(owner);
        let mine = |e: &Entry| !e.free() && e.file == file && e.space() == space && same_owner(e, owner);
        let mut split = None;
        for i in 0..LOCKS {
            let e = t.entries[i];
            if !mine(&e) || e.start > end || start > e.end {
                continue;
            }
            if e.start < start && e.end > end {
                // The new range lies inside: the left part stays here, the
                // right part goes in a new entry.
                split = Some(Entry { start: end + 1, ..e });
                t.entries[i].end = start - 1;
            } else if e.start < start {
                t.entries[i].end = start - 1;
            } else if e.end > end {
                t.entries[i].start = end + 1;
            } else {
                t.clear(i);
            }
        }
        if let (Some(s), Some(i)) = (split, t.room()) {
            t.put(i, s);
        }
        let Some(write) = lock else { return Ok(()) };
        let (mut start, mut end) = (start, end);
        // Merge with our touching locks of the same kind.
        for i in 0..LOCKS {
            let e = t.entries[i];
            if mine(&e)
                && e.write == write
                && e.start <= end.saturating_add(1)
                && start <= e.end.saturating_add(1)
            {
                start = start.min(e.start);
                end = end.max(e.end);
                t.clear(i);
            }
        }
        let n = Entry { file, owner: id, pid, by_process, flock: space == Space::Flock, write, start, end };
        if let Some(i) = t.room() {
            t.put(i, n);
        }
        Ok(())
    })
}

/// A process closed a descriptor of `file`: its POSIX locks on the file
/// go (POSIX's rule, whichever descriptor took them).
pub fn released_by_close(file: u64, env: u32) {
    with_table(|t| {
        if t.named == 0 {
            return;
        }
        for i in 0..LOCKS {
            let e = t.entries[i];
            if e.file == file && e.by_process && e.owner == env as u64 {
                t.clear(i);
            }
        }
    })
}

/// Description `addr` is gone: its OFD and `flock` locks go.
pub fn released_by_file(addr: u64) {
    with_table(|t| {
        if t.named == 0 {
            return;
        }
        for i in 0..LOCKS {
            let e = t.entries[i];
            if e.file != 0 && !e.by_process && e.owner == addr {
                t.clear(i);
            }
        }
    })
}
