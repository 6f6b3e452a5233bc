//! This process's private state in one value, and the state of its one
//! thread in another. Fork copies both (the child corrects its copy in
//! `fork::child_start`); exec keeps them, resetting what Linux resets.
//!
//! A process's state has two parts:
//! - `Vars`: words read and written by value (`Cell`s: `get`, `set`). No
//!   reference into them is ever lent, so two uses cannot alias and they
//!   need no borrow; the hot paths (every call's signal check, `getpid`,
//!   the lock) read them at the cost of a load.
//! - `Process`: everything else (tables, lists, buffers), reached only
//!   through the scoped borrow `with_process(|p| ...)`, which panics if it
//!   is re-entered (`scoped.rs`), so two `&mut` to it never exist.
//!
//! What is per thread is what Linux keeps per thread: the blocked signals,
//! the alternate signal stack, the mask `rt_sigsuspend` will put back,
//! where its id is cleared when it ends, its robust list, and its
//! side of the big lock (`Thread`, reached through `thread()`, in the
//! thread's `entry::Block` with the frame of the call being answered). Everything else is per process. State shared between
//! processes (the arena, the process table's entries) is not here.
//!
//! Both rely on lxrt's code running for one thread of a process at a time
//! (each Linux call and fault takes the big lock, `lock.rs`, and drops it
//! only where it waits), its handler never re-entered; `thread()` returns
//! the running thread's state.

use super::{exit, kit, signal, table};
use crate::fs::{Ino, ROOT};
use crate::scoped::Scoped;
use crate::{fd, log, predicate, trap, vm};
use alloc::vec::Vec;
use core::cell::Cell;

/// A process's words, each read and written by value.
pub struct Vars {
    /// This process's environment id, and the first process's (`pid.rs`).
    pub env: Cell<u32>,
    pub first: Cell<u32>,
    pub cwd: Cell<Ino>,
    pub umask: Cell<u32>,
    pub brk_start: Cell<u64>,
    pub brk: Cell<u64>,
    /// Where `mmap` looks for room next.
    pub mmap_next: Cell<u64>,
    /// Signals sent to this process and not yet acted on (bit n = signal n),
    /// and those sent to its first thread alone (`tgkill`).
    pub pending: Cell<u64>,
    pub first_pending: Cell<u64>,
    /// Pending signals to the process already handed to a thread other
    /// than the first (`signal::route`).
    pub routed: Cell<u64>,
    /// The generator of `random::fill`.
    pub random: Cell<crate::random::State>,
    /// Who answers system calls, and the program's own fault handler.
    pub personality: Cell<trap::Personality>,
    pub fault_handler: Cell<Option<trap::FaultHandler>>,
    /// Whether the console is a terminal (`lxrt -t`).
    pub tty: Cell<bool>,
    /// Threads other than the first (`thread.rs`), whether the first has
    /// called `exit` (it waits for the others), and the status the process
    /// exits with once a thread has asked for it (`exit_group` from another
    /// thread, or the last one ending: the first ends the process).
    pub threads: Cell<u32>,
    pub first_exited: Cell<bool>,
    pub group_exit: Cell<Option<i32>>,
    /// The predicate futex waits sleep on (`futex.rs`), once installed.
    pub futex_pred: Cell<Option<u64>>,
    /// The arena (`shared.rs`): the capability slot covering its frames,
    /// the one a child being forked receives it in, and how far this
    /// process has it mapped.
    pub arena_cred: Cell<u64>,
    pub arena_child_cred: Cell<u64>,
    pub arena_mapped: Cell<u64>,
}

/// A process's state that is not single words.
pub struct Process {
    /// Path of the running executable (for /proc/self/exe).
    pub exe: Vec<u8>,
    pub fds: fd::Table,
    pub vm: vm::Space,
    pub signals: signal::Dispositions,
    pub children: exit::Children,
    pub kits: kit::Kits,
    pub ptable: table::View,
    pub predicates: predicate::Cache,
    /// Threads other than the first (`thread.rs`).
    pub threads: super::thread::List,
    pub notes: log::Notes,
    /// The terminal's settings (`struct termios`, `obj/console.rs`).
    pub termios: [u8; crate::obj::console::TERMIOS_SIZE],
}

/// A thread's state: words, read and written by value (in its
/// `entry::Block`).
pub struct Thread {
    /// The blocked signals, Linux's `sigset_t` (bit n-1 = signal n).
    pub mask: Cell<u64>,
    pub altstack: Cell<signal::AltStack>,
    /// The mask to put back when the handler that `rt_sigsuspend` waited
    /// for returns.
    pub suspended: Cell<Option<u64>>,
    /// The big lock (`lock.rs`): held by this thread; the environment id
    /// it is taken with (0 until first asked: the thread's own); whom the
    /// current call hands the CPU to when it ends (0: nobody).
    pub lock_held: Cell<bool>,
    pub lock_id: Cell<u64>,
    pub hand_off: Cell<u64>,
    /// Signals sent to this thread alone (bit n = signal n; the first
    /// thread's are `Vars::first_pending`).
    pub pending: Cell<u64>,
    /// The signals it waits for in `rt_sigtimedwait` (bit n = signal n):
    /// a process's signal every thread blocks is handed to it.
    pub sigwait: Cell<u64>,
    /// Where its id is cleared (and a futex woken) when it ends
    /// (`set_tid_address`, `CLONE_CHILD_CLEARTID`).
    pub clear_tid: Cell<u64>,
    /// Set in a new thread's block until it first runs (`thread::start`).
    pub starting: Cell<bool>,
    /// Its robust list (`set_robust_list`, walked when it ends: 0, none).
    pub robust: Cell<u64>,
    /// The buffer (address, length) of the program's memory lent to this
    /// thread's call (`uaccess::with_bytes_mut`), made writable again
    /// whenever the call retakes the big lock after sleeping.
    pub lent: Cell<Option<(u64, u64)>>,
}

impl Thread {
    pub const fn initial() -> Thread {
        Thread {
            mask: Cell::new(0),
            altstack: Cell::new(signal::AltStack::DISABLED),
            suspended: Cell::new(None),
            lock_held: Cell::new(false),
            lock_id: Cell::new(0),
            hand_off: Cell::new(0),
            pending: Cell::new(0),
            sigwait: Cell::new(0),
            clear_tid: Cell::new(0),
            starting: Cell::new(false),
            robust: Cell::new(0),
            lent: Cell::new(None),
        }
    }
}

struct Words {
    process: Vars,
}

// SAFETY: the threads of a process run lxrt one at a time, under the big
// lock (`lock.rs`), and its handler is never re-entered: the cells are
// never used concurrently.
unsafe impl Sync for Words {}

static WORDS: Words = Words {
    process: Vars {
        env: Cell::new(0),
        first: Cell::new(0),
        cwd: Cell::new(ROOT),
        umask: Cell::new(0o022),
        brk_start: Cell::new(0),
        brk: Cell::new(0),
        mmap_next: Cell::new(crate::layout::MMAP_BASE),
        pending: Cell::new(0),
        first_pending: Cell::new(0),
        routed: Cell::new(0),
        random: Cell::new(crate::random::State::ZERO),
        personality: Cell::new(trap::no_personality),
        fault_handler: Cell::new(None),
        tty: Cell::new(false),
        threads: Cell::new(0),
        first_exited: Cell::new(false),
        futex_pred: Cell::new(None),
        group_exit: Cell::new(None),
        arena_cred: Cell::new(0),
        arena_child_cred: Cell::new(0),
        arena_mapped: Cell::new(crate::layout::SHARED),
    },
};

static PROCESS: Scoped<Process> = Scoped::new(
    "the process state",
    Process {
        exe: Vec::new(),
        fds: fd::Table::EMPTY,
        vm: vm::Space::INITIAL,
        signals: signal::Dispositions::INITIAL,
        children: exit::Children::NONE,
        kits: kit::Kits::NONE,
        ptable: table::View::INITIAL,
        predicates: predicate::Cache::EMPTY,
        threads: super::thread::List::NONE,
        notes: log::Notes::NONE,
        termios: crate::obj::console::TERMIOS_DEFAULT,
    },
);

/// This process's words.
#[inline]
pub fn vars() -> &'static Vars {
    &WORDS.process
}

/// The running thread's state.
#[inline]
pub fn thread() -> &'static Thread {
    crate::entry::thread()
}

/// Runs `f` on the rest of this process's state; panics if it is
/// borrowed already.
#[inline]
pub fn with_process<R>(f: impl FnOnce(&mut Process) -> R) -> R {
    PROCESS.with(f)
}

/// Whether the process state is borrowed now (fork copies it: a copy made
/// inside a borrow would leave the child's borrowed for good).
pub fn borrowed() -> bool {
    PROCESS.borrowed()
}
