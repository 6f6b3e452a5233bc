//! Threads, 1:1 (paper 000 §5.2): each thread of a process is its own
//! kernel environment over the process's address space
//! (`env_create_shared`, `docs/kernel.md`), so the kernel schedules it on
//! its own and a thread asleep in a call stalls nobody. The first
//! environment is the process (its pid, its process-table entry, its
//! children); the others are its children in the kernel's tree, so they
//! end with it. Each thread runs lxrt's handler on its own `entry::Block`
//! (exception stack, save area, FPU image, `Thread` state), found through
//! its gs base. lxrt's code runs for one thread of a process at a time:
//! each thread takes the big lock (`lock.rs`) as its own environment, and
//! drops it only where it waits.
//!
//! A thread that ends (`exit_thread`) releases the robust locks it holds,
//! clears its id word and wakes a futex waiter on it (`set_tid_address`, `CLONE_CHILD_CLEARTID`, what
//! `pthread_join` waits for); the first thread, if it ends while others
//! run, waits for them (its environment is the process). Any thread can end
//! the process (`exit_group`, a fatal signal): another than the first asks
//! the first to do it (`exit::GROUP_EXIT`, then an interrupt) and ends.

use super::with_process;
use crate::entry::{self, Block, Local, STACK_SIZE};
use crate::lock;
use crate::lock::OTHER_THREADS;
use abi::exception::ExceptionFrame;
use abi::syscall::{CRED_SELF, ENV_SELF};
use abi::tables::env_state;
use alloc::alloc::{alloc, dealloc, Layout};
use alloc::vec::Vec;
use core::cell::Cell;
use user::{kinfo, sys};

/// A thread's life as Linux keeps it (its part of the thread's block).
pub struct Thread {
    /// Where its id is cleared (and a futex woken) when it ends
    /// (`set_tid_address`, `CLONE_CHILD_CLEARTID`).
    clear_tid: Cell<u64>,
    /// Set in a new thread's block until it first runs (`start`).
    starting: Cell<bool>,
    /// Its robust list (`set_robust_list`, walked when it ends: 0, none).
    robust: Cell<u64>,
}

// SAFETY: made of `Cell`s, valid all zero; the part above the signals'.
pub const LOCAL: Local<Thread> = unsafe { Local::after(super::signal::LOCAL.end()) };

/// Marks thread `env` as ending (gone for `tgkill`).
pub fn exiting(env: u32) {
    with_process(|p| p.threads.0.iter_mut().filter(|t| t.env == env).for_each(|t| t.exiting = true));
}

/// Threads other than the first, ended ones not reaped yet included.
pub fn count() -> u32 {
    with_process(|p| p.threads.0.len()) as u32
}

/// Ends the running thread as a Linux thread ends (`end_as_linux`).
pub fn end_as_linux_self() {
    end_as_linux(LOCAL.get(), tid());
}

/// What ends thread `t` (Linux id `tid`), running or not: the locks on its
/// robust list it still holds are marked owner-died
/// (`futex::release_robust`), then its id word is cleared and one waiter
/// on it woken (`pthread_join`).
fn end_as_linux(t: &Thread, tid: u32) {
    let robust = t.robust.replace(0);
    if robust != 0 {
        crate::futex::release_robust(robust, tid);
    }
    let at = t.clear_tid.replace(0);
    if at != 0 && crate::uaccess::put(at, 0u32).is_ok() {
        crate::futex::wake(crate::futex::Key::private(at), 1, crate::futex::ALL);
    }
}

/// Where the running thread's id is cleared when it ends.
pub fn set_clear_tid(at: u64) {
    LOCAL.get().clear_tid.set(at);
}

/// The running thread's robust list (0: none).
pub fn set_robust(head: u64) {
    LOCAL.get().robust.set(head);
}

/// A thread other than the first, as the process keeps it.
#[derive(Clone, Copy)]
struct Entry {
    env: u32,
    block: *mut Block,
    stack: *mut u8,
    /// It has called `exit` (its id is cleared: it is gone for `tgkill`,
    /// as on Linux once `pthread_join` returns).
    exiting: bool,
}

/// The threads other than the first (`proc::Process::threads`).
pub struct List(Vec<Entry>);

impl List {
    pub const NONE: List = List(Vec::new());
}

const STACK_LAYOUT: Layout = match Layout::from_size_align(STACK_SIZE, 4096) {
    Ok(l) => l,
    Err(_) => panic!("the stack's layout"),
};

/// Whether the running thread is the first (the process's environment).
pub fn is_first() -> bool {
    lock::is_first_thread()
}

/// The running thread's Linux id: its environment's pid (the first
/// thread's is the process's pid).
pub fn tid() -> u32 {
    super::pid::of(lock::my_id() as u32)
}

/// The environment of thread `tid` of this process, if it lives.
pub fn env_of(tid: u32) -> Option<u32> {
    let env = super::pid::env(tid)?;
    if env == super::env() {
        return Some(env);
    }
    with_process(|p| p.threads.0.iter().any(|t| t.env == env && !t.exiting)).then_some(env)
}

/// The environments of the threads other than the first.
pub fn envs() -> Vec<u32> {
    with_process(|p| p.threads.0.iter().map(|t| t.env).collect())
}

/// A thread other than the first that does not block signal `sig`, or
/// waits for it in `sigwait`.
pub fn wanting(sig: u32) -> Option<u32> {
    with_process(|p| {
        p.threads
            .0
            .iter()
            .find(|t| {
                // SAFETY: a thread's block lives until `reap` frees it, which
                // needs the big lock we hold; only its `Cell`s are read.
                !t.exiting && super::signal::takes(unsafe { &*t.block }, sig)
            })
            .map(|t| t.env)
    })
}

/// What a new thread starts with.
pub struct Start {
    /// Its stack pointer and fs base (the program's TLS).
    pub rsp: u64,
    pub fs: u64,
    /// Its id is cleared there when it ends (0: nowhere).
    pub clear_tid: u64,
}

/// Free frames below which no thread is made (`clone` answers EAGAIN, as
/// Linux's does when memory is short) and a process that the OOM killer
/// would choose itself may not fork (ENOMEM, `oom::may_fork`). Threads
/// made until the last frame left the programs already running nothing
/// for their pages, so the OOM killer ended a process that asked for
/// nothing (17 processes of 200 threads on a 512 MiB machine); a process
/// forking children that each
/// take memory was killed only after its children had taken it all, and
/// then every new process (a shell's next command) was the largest and was
/// killed in turn (`lx_forkoom`). 8 MiB.
const CREATE_RESERVE: u64 = 2048;

/// Whether memory is left to make a thread. (Here, not in `oom.rs`, which
/// names `exit`: `oom` names threads, threads do not name `oom`.)
pub fn room_to_create() -> bool {
    kinfo::free_frames() >= CREATE_RESERVE
}

/// Makes a thread that will resume the program where `f` (the calling
/// thread's `clone`) is, with rax = 0 and `s`'s stack and TLS; `run`
/// starts it. Returns its environment id.
pub fn create(f: &ExceptionFrame, s: &Start) -> Result<u32, abi::Error> {
    reap();
    if !room_to_create() {
        return Err(abi::Error::NoMemory);
    }
    // SAFETY: non-zero sizes; freed in `reap` (or on failure below).
    let stack = unsafe { alloc(STACK_LAYOUT) };
    let layout = Layout::new::<Block>();
    // SAFETY: as above.
    let block = unsafe { alloc(layout) }.cast::<Block>();
    if stack.is_null() || block.is_null() {
        free(stack, block);
        return Err(abi::Error::NoMemory);
    }
    let lo = stack as u64;
    let mut b = Block::with_stack(lo..lo + STACK_SIZE as u64);
    let mut frame = *f;
    (frame.regs.rax, frame.regs.rsp, frame.busy) = (0, s.rsp, 1);
    b.set_frame(frame, entry::fx());
    b.start_fs = s.fs;
    super::signal::thread_created(&b);
    let t = LOCAL.of(&b);
    t.clear_tid.set(s.clear_tid);
    t.starting.set(true);
    // SAFETY: `block` is fresh, aligned for a `Block` and ours alone.
    unsafe { block.write(b) };
    let started = sys::env_create_shared(ENV_SELF, CRED_SELF).and_then(|env| {
        // SAFETY: written just above; the new thread uses it only once
        // it runs, at the end of this.
        let regs = entry::start_regs(unsafe { &*block });
        // SAFETY: as above.
        // Signals come to it as to the process: only from this tree.
        let r = entry::install_block(env, unsafe { &*block })
            .and_then(|_| sys::env_set_regs(env, &regs))
            // However it ends, the first thread hears of it (`bury`).
            .and_then(|_| sys::env_exit_bits(env, super::signal::CONSOLE_INPUT))
            // No slice of its own: it runs in its process's, by turns with
            // the other threads (the kernel's groups), so a program that
            // makes a thousand threads takes no time from other programs.
            .and_then(|_| sys::set_pct_entry_guarded(env, 0, 0, super::table::cred()));
        match r {
            Ok(_) => Ok(env as u32),
            Err(e) => {
                let _ = sys::env_destroy(env);
                Err(e)
            }
        }
    });
    let env = match started {
        Ok(env) => env,
        Err(e) => {
            free(stack, block);
            return Err(e);
        }
    };
    with_process(|p| p.threads.0.push(Entry { env, block, stack, exiting: false }));
    OTHER_THREADS.set(OTHER_THREADS.get() + 1);
    Ok(env)
}

/// Starts thread `env` (made by `create`).
pub fn run(env: u32) -> Result<(), abi::Error> {
    sys::env_run(env as u64).map(|_| ())
}

fn free(stack: *mut u8, block: *mut Block) {
    // SAFETY: each was allocated with its layout in `create` (or is null)
    // and its thread has ended or never ran.
    unsafe {
        if !stack.is_null() {
            dealloc(stack, STACK_LAYOUT);
        }
        if !block.is_null() {
            dealloc(block.cast(), Layout::new::<Block>());
        }
    }
}

/// Whether the running environment is a thread that has not run yet
/// (`entry::start`).
pub fn starting() -> bool {
    LOCAL.get().starting.get()
}

/// A new thread's first code, before it resumes the program.
pub fn start(_f: &mut ExceptionFrame) {
    LOCAL.get().starting.set(false);
    lock::thread_started();
}

/// Threads that ended without `exit` (the kernel ended them: a fault
/// inside lxrt, say) end as a Linux thread ends: robust locks released,
/// id word cleared, a joiner woken. The first thread hears of every end
/// (`env_exit_bits`) and calls this.
pub fn bury() {
    if OTHER_THREADS.get() == 0 {
        return;
    }
    let dead: Vec<(u32, *mut Block)> = with_process(|p| {
        p.threads
            .0
            .iter_mut()
            .filter(|t| {
                !t.exiting && kinfo::env_by_id(t.env as u64).is_none_or(|e| e.state == env_state::EXITED)
            })
            .map(|t| {
                t.exiting = true;
                (t.env, t.block)
            })
            .collect()
    });
    for (env, block) in dead {
        // SAFETY: its thread has ended; the block lives until `reap` frees
        // it, which needs the big lock we hold; only its `Cell`s are used.
        end_as_linux(LOCAL.of(unsafe { &*block }), super::pid::of(env));
        OTHER_THREADS.set(OTHER_THREADS.get().saturating_sub(1));
    }
}

/// Destroys the threads that have ended and frees their blocks.
pub fn reap() {
    bury();
    let ended: Vec<Entry> = with_process(|p| {
        let (gone, live) = p
            .threads
            .0
            .iter()
            .partition(|t| kinfo::env_by_id(t.env as u64).is_none_or(|e| e.state == env_state::EXITED));
        p.threads.0 = live;
        gone
    });
    for t in ended {
        let _ = sys::env_destroy(t.env as u64);
        free(t.stack, t.block);
    }
}

/// Before the first thread ends the process: every other thread ends
/// (each is its child: destroyed, its block freed).
pub fn end_others() {
    let all: Vec<Entry> = with_process(|p| core::mem::take(&mut p.threads.0));
    for t in all {
        let _ = sys::env_destroy(t.env as u64);
        free(t.stack, t.block);
    }
    OTHER_THREADS.set(0);
}

/// execve: the program's other threads end (Linux's `de_thread`), when the
/// first thread execs. From another thread that would need the first's
/// environment (the process) to take over the exec: not done yet, and the
/// other threads are left running (docs/libos.md).
pub fn end_for_exec() {
    if is_first() {
        end_others();
    } else {
        crate::log::once("execve from a thread other than the first", 3002);
    }
}

/// In a child forked from a threaded process only the caller survives: it
/// becomes the child's first thread, the other threads' blocks (copied
/// with the heap) are freed.
pub fn forked_child() {
    let all: Vec<Entry> = with_process(|p| core::mem::take(&mut p.threads.0));
    let me = entry::current_block();
    for t in all.into_iter().filter(|t| t.block != me) {
        free(t.stack, t.block);
    }
    OTHER_THREADS.set(0);
}
