//! Signals, delivered between processes over protected control transfer.
//! Dispositions are recorded (`rt_sigaction`) and the blocked set is kept
//! in Linux's format (`rt_sigprocmask`: bit n-1 = signal n). A process
//! sends signal n to another (`kill`, Ctrl-C, SIGPIPE) with an
//! interrupting transfer (`PCT_INTERRUPT`) carrying bit n: the kernel
//! enters the target's lxrt handler at once, interrupting whatever the
//! program was doing, or, if lxrt is busy in one of the program's calls,
//! queues the bits (a blocked call sees them and ends with EINTR).
//!
//! The terminal's owner also gets an interrupt (bit 0) while console input
//! waits, so a Ctrl-C reaches the foreground group even when nobody reads
//! the console. Pending signals (bit n = signal n) are acted on at safe
//! points: when the interrupt arrives in the middle of the program, and at the start and the
//! return of each of its Linux calls. At a call's start, pending unblocked
//! signals with the default action or ignored take effect (the process may
//! die before the call runs); otherwise one with a handler of the program's
//! own is delivered as Linux x86-64 does: an `rt_sigframe` (return address
//! = the `SA_RESTORER` restorer, `struct ucontext` with the interrupted
//! registers, `siginfo_t`) and the FXSAVE image of the x87/SSE state are
//! pushed below the red zone, and the program resumes in the handler with
//! rdi = signal, rsi = &info, rdx = &ucontext. The restorer's
//! `rt_sigreturn` puts the registers, the signal mask and the FPU state
//! back from the frame.

use crate::entry::Local;
use crate::errno::LxResult;
use crate::uaccess;
use crate::word::Word;
use core::cell::Cell;
use user::{kinfo, sys};

/// A thread's signal state, what Linux keeps per thread (its part of the
/// thread's block).
pub struct Thread {
    /// The blocked signals, Linux's `sigset_t` (bit n-1 = signal n).
    pub(super) mask: Cell<u64>,
    /// The alternate signal stack; all zero (size 0) reads as disabled.
    altstack: Cell<AltStack>,
    /// The mask to put back when the handler that `rt_sigsuspend` waited
    /// for returns (kept while `suspending`).
    pub(super) suspended: Cell<u64>,
    pub(super) suspending: Cell<bool>,
    /// Signals sent to this thread alone (bit n = signal n; the first
    /// thread's are `WORDS.first_pending`).
    pending: Cell<u64>,
    /// The signals it waits for in `rt_sigtimedwait` (bit n = signal n):
    /// a process's signal every thread blocks is handed to it.
    sigwait: Cell<u64>,
}

// SAFETY: made of `Cell`s, valid all zero; the part above the lock's.
pub const LOCAL: Local<Thread> = unsafe { Local::after(crate::lock::LOCAL.end()) };

#[inline]
pub(super) fn thread() -> &'static Thread {
    LOCAL.get()
}

/// The process's signal words, in one static (every call's signal check
/// reads them from one address).
pub(super) struct Words {
    /// Signals sent to this process and not yet acted on (bit n = signal
    /// n), and those sent to its first thread alone (`tgkill`).
    pub(super) pending: Word<u64>,
    pub(super) first_pending: Word<u64>,
    /// Pending signals to the process already handed to a thread other
    /// than the first (`deliver::route`).
    pub(super) routed: Word<u64>,
    /// The status the process exits with once a thread has asked for it
    /// (`exit::exit_group` from another thread, or the last one ending:
    /// the first acts on it as on a signal).
    pub(super) group_exit: Word<Option<i32>>,
}

pub(super) static WORDS: Words = Words {
    pending: Word::new(0),
    first_pending: Word::new(0),
    routed: Word::new(0),
    group_exit: Word::new(None),
};

pub use crate::signo::*;

pub(super) const SIG_DFL: u64 = 0;
pub(super) const SIG_IGN: u64 = 1;

/// `struct sigaction` as the kernel ABI has it.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct Action {
    pub handler: u64,
    pub flags: u64,
    pub restorer: u64,
    pub mask: u64,
}

/// What a process does with each signal (`proc::Process::signals`), who
/// sent each pending one (its pid: `siginfo_t.si_pid`), and which POSIX
/// timers queued it, in the order they fired: each timer's expiry is a
/// signal of its own, as Linux queues one per timer, so two timers
/// sharing a real-time signal are both delivered (a timer's repeats while
/// its signal waits are its overruns instead).
pub struct Dispositions([Action; 65], [u32; 65], Queued);

impl Dispositions {
    pub const INITIAL: Dispositions =
        Dispositions([Action { handler: 0, flags: 0, restorer: 0, mask: 0 }; 65], [0; 65], Queued::NONE);
}

/// The POSIX timers' pending instances, without allocating (an expiry is
/// queued inside an upcall): for each signal the set of timers (bit n:
/// timer id n, fewer than 64) whose instance waits, and for each timer
/// when it was queued, so the oldest goes first.
pub struct Queued {
    timers: [u64; 65],
    at: [u64; 64],
    count: u64,
}

impl Queued {
    const NONE: Queued = Queued { timers: [0; 65], at: [0; 64], count: 0 };
}

#[inline]
pub(super) fn with_dispositions<R>(f: impl FnOnce(&mut [Action; 65]) -> R) -> R {
    super::with_process(|p| f(&mut p.signals.0))
}

/// Records environment `from` (0: the kernel) as the sender of those of
/// `bits` not pending yet (a signal already pending keeps its first
/// sender, as on Linux).
pub(super) fn note_sender(bits: u64, from: u64) {
    let fresh = bits & !pending_bits();
    if fresh == 0 {
        return;
    }
    // A thread's signals are its process's: the sender is its first thread.
    let pid = match kinfo::env_by_id(from) {
        Some(e) if from != 0 && e.published == 0 && e.parent != 0 => super::pid::of(e.parent),
        Some(_) if from != 0 => super::pid::of(from as u32),
        _ => 0,
    };
    super::with_process(|p| {
        let mut b = fresh;
        while b != 0 {
            p.signals.1[b.trailing_zeros() as usize] = pid;
            b &= b - 1;
        }
    });
}

/// Who sent pending signal `sig` (a pid; 0: the kernel).
pub(super) fn sender(sig: u32) -> u32 {
    super::with_process(|p| p.signals.1[sig as usize])
}

/// What this process does with `sig` (1..=64).
pub fn action(sig: u32) -> Action {
    with_dispositions(|d| d[sig as usize])
}

/// Sets what this process does with `sig` (1..=64).
pub fn set_action(sig: u32, a: Action) {
    with_dispositions(|d| d[sig as usize] = a);
}

/// The blocked signals, Linux's `sigset_t` (bit n-1 = signal n).
pub fn mask() -> u64 {
    thread().mask.get()
}

/// Sets the blocked signals; SIGKILL and SIGSTOP cannot be blocked.
pub fn set_mask(m: u64) {
    thread().mask.set(m & !(1 << (SIGKILL - 1) | 1 << (SIGSTOP - 1)));
}

/// The blocked signals in the process table's format (bit n = signal n).
pub fn blocked() -> u64 {
    mask() << 1
}

/// The pending signals (bit n = signal n): the process's and the running
/// thread's own.
pub(super) fn pending_bits() -> u64 {
    WORDS.pending.get() | own_pending().get()
}

/// The running thread's own pending signals (`tgkill` to it, its faults):
/// the first thread's are kept with the process's words, where its
/// siblings can add to them.
#[inline]
pub(super) fn own_pending() -> &'static core::cell::Cell<u64> {
    if crate::lock::is_first_thread() {
        &WORDS.first_pending
    } else {
        &thread().pending
    }
}

/// Where signals that reach this environment wait: the process's if it is
/// the first thread (signals to the process come to it), else the
/// thread's (`tgkill` to it, its own faults).
pub(super) fn pending_word() -> &'static core::cell::Cell<u64> {
    if crate::lock::is_first_thread() {
        &WORDS.pending
    } else {
        &thread().pending
    }
}

/// Forgets pending signal `sig`.
pub(super) fn clear_pending(sig: u32) {
    for w in [&WORDS.pending, own_pending(), &WORDS.routed] {
        w.set(w.get() & !(1 << sig));
    }
    super::with_process(|p| p.signals.2.timers[sig as usize] = 0);
}

/// Records that POSIX timer `id` queued pending signal `sig`.
pub(super) fn note_timer(sig: u32, id: usize) {
    super::with_process(|p| {
        let q = &mut p.signals.2;
        q.timers[sig as usize] |= 1 << id;
        q.count += 1;
        q.at[id] = q.count;
    });
}

/// Whether POSIX timer `id`'s signal `sig` waits to be taken.
pub(super) fn timer_queued(sig: u32, id: usize) -> bool {
    super::with_process(|p| p.signals.2.timers[sig as usize] & 1 << id != 0)
}

/// Takes one instance of pending signal `sig`: the POSIX timer that
/// queued the oldest, if one did. The signal stays pending while other
/// timers' instances wait (handed to a thread afresh: `route`); otherwise
/// it is taken whole.
pub(super) fn take_one(sig: u32) -> Option<usize> {
    let (id, more) = super::with_process(|p| {
        let q = &mut p.signals.2;
        let set = q.timers[sig as usize];
        let id = (0..64).filter(|&i| set & 1 << i != 0).min_by_key(|&i| q.at[i]);
        if let Some(i) = id {
            q.timers[sig as usize] &= !(1 << i);
        }
        (id, q.timers[sig as usize] != 0)
    });
    if more {
        WORDS.routed.set(WORDS.routed.get() & !(1 << sig));
    } else {
        clear_pending(sig);
    }
    id
}

pub(super) fn ignored_by_default(sig: u32) -> bool {
    matches!(sig, SIGCHLD | SIGCONT | SIGURG | SIGWINCH)
}

/// Whether `sig` would be ignored or is blocked (a terminal then answers a
/// background read with EIO instead of stopping the reader).
pub fn ignored_or_blocked(sig: u32) -> bool {
    action(sig).handler == SIG_IGN || blocked() & (1 << sig) != 0
}

pub(super) fn has_handler(sig: u32) -> bool {
    action(sig).handler > SIG_IGN
}

/// The signals whose default action stops the process.
pub(super) const STOPS: u64 = 1 << SIGSTOP | 1 << SIGTSTP | 1 << SIGTTIN | 1 << SIGTTOU;

/// Records signals that arrived: as on Linux, a SIGCONT discards pending
/// stop signals and a stop signal a pending SIGCONT.
pub(super) fn add_pending(bits: u64) {
    let word = pending_word();
    let mut p = word.get();
    if bits & 1 << SIGCONT != 0 {
        p &= !STOPS;
    }
    if bits & STOPS != 0 {
        p &= !(1 << SIGCONT);
    }
    word.set(p | bits);
}

/// The interrupt bit (not a signal: there is no signal 0) the kernel sends
/// the terminal's owner while console input waits (`console_notify`).
pub const CONSOLE_INPUT: u64 = 1;

/// Sends `sig` (1..=63) to the process in environment `env` (another
/// one): an interrupting transfer into it.
pub fn send(env: u32, sig: u32) -> Result<(), abi::Error> {
    interrupt(env, 1 << sig)
}

/// Interrupt `bits` for environment `env` (a process, or a thread of this
/// one). Inside a call (the big lock held) they are only queued, and the
/// call's end yields to `env` (`lock::hand_off`), which takes them then:
/// entered at once, it would find the lock taken and hand the CPU straight
/// back, and a stream of signals so kept every other process waiting for
/// the lock (a child signalling its parent in a loop stopped the machine).
pub(crate) fn interrupt(env: u32, bits: u64) -> Result<(), abi::Error> {
    if crate::lock::held() {
        sys::interrupt_queued(env as u64, bits, super::table::cred())?;
        crate::lock::hand_off(env as u64);
        return Ok(());
    }
    sys::interrupt(env as u64, bits, super::table::cred()).map(|_| ())
}

/// Puts `old` back as the mask when the handler delivered on this call's
/// return ends (`rt_sigsuspend`, `ppoll`, `pselect6`).
pub fn suspended(old: u64) {
    let t = thread();
    t.suspended.set(old);
    t.suspending.set(true);
}

/// `tgkill` of thread `env` of this process (not the running one): an
/// interrupt reaches it, and its own (not the process's) pending word.
pub fn send_thread(env: u32, sig: u32) -> Result<(), abi::Error> {
    if env != super::env() {
        // Another thread than the first records what reaches it as its own.
        return send(env, sig);
    }
    // The first thread records interrupts as the process's: mark the
    // signal as its own, then wake it.
    note_sender(1 << sig, env as u64);
    let w = &WORDS.first_pending;
    w.set(w.get() | 1 << sig);
    interrupt(env, CONSOLE_INPUT)
}

/// A forked child starts with nothing pending.
pub fn forked_child() {
    WORDS.pending.set(0);
    WORDS.first_pending.set(0);
    WORDS.routed.set(0);
    thread().pending.set(0);
    super::with_process(|p| p.signals.2 = Queued::NONE);
}

/// The alternate signal stack (`sigaltstack`), Linux's `stack_t`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct AltStack {
    pub sp: u64,
    pub flags: u64,
    pub size: u64,
}

pub const SS_ONSTACK: u64 = 1;
pub const SS_DISABLE: u64 = 2;

impl AltStack {
    pub const DISABLED: AltStack = AltStack { sp: 0, flags: SS_DISABLE, size: 0 };

    /// Whether `rsp` lies on it.
    pub(super) fn on(&self, rsp: u64) -> bool {
        self.flags & SS_DISABLE == 0 && rsp > self.sp && rsp <= self.sp + self.size
    }
}

/// `sigaltstack`: reports (into `old`) and sets (from `new`) the alternate
/// signal stack of a program currently at `rsp`.
pub fn sigaltstack(new: u64, old: u64, rsp: u64) -> LxResult {
    use crate::errno::{EINVAL, ENOMEM, EPERM};
    let cur = altstack();
    if old != 0 {
        let flags = if cur.on(rsp) { SS_ONSTACK } else { cur.flags & SS_DISABLE };
        uaccess::put(old, AltStack { flags, ..cur })?;
    }
    if new != 0 {
        let mut n: AltStack = uaccess::get(new)?;
        // SS_AUTODISARM (bit 31) is accepted and, as nothing here
        // re-enters a handler on the stack, has nothing to do.
        n.flags &= 0xffff_ffff & !(1 << 31);
        if cur.on(rsp) {
            return Err(EPERM);
        }
        match n.flags {
            SS_DISABLE => n = AltStack::DISABLED,
            0 if n.size < MINSIGSTKSZ => return Err(ENOMEM),
            0 => {}
            _ => return Err(EINVAL),
        }
        thread().altstack.set(n);
    }
    Ok(0)
}

/// The running thread's alternate stack (a new thread's, all zero, is
/// disabled: an enabled one is never smaller than `MINSIGSTKSZ`).
pub(super) fn altstack() -> AltStack {
    let a = thread().altstack.get();
    if a.size == 0 {
        AltStack::DISABLED
    } else {
        a
    }
}

/// A new thread blocks what its creator blocks.
pub fn thread_created(b: &crate::entry::Block) {
    LOCAL.of(b).mask.set(mask());
}

/// Whether the thread of block `b` takes signal `sig`: it does not block
/// it, or waits for it in `sigwait`.
pub fn takes(b: &crate::entry::Block, sig: u32) -> bool {
    let t = LOCAL.of(b);
    t.mask.get() << 1 & 1 << sig == 0 || t.sigwait.get() & 1 << sig != 0
}

/// The signals the running thread waits for in `sigwait` (bit n = signal
/// n; 0 when it is not waiting).
pub fn set_sigwait(want: u64) {
    thread().sigwait.set(want);
}

/// Linux's smallest alternate stack.
const MINSIGSTKSZ: u64 = 2048;

/// exec: caught signals go back to their default action, and the
/// alternate stack is gone.
pub fn reset_on_exec() {
    thread().altstack.set(AltStack::DISABLED);
    with_dispositions(|d| {
        for a in d.iter_mut().filter(|a| a.handler > SIG_IGN) {
            *a = Action::default();
        }
    });
}
