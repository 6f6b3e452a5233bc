//! Acting on signals (the state they act on is `signal.rs`): at a call's
//! start and return, and when an interrupt lands in the program, pending
//! unblocked signals take their default action (the process may stop or
//! die), are ignored, or run the program's handler on a Linux signal
//! frame (`run_handler`); `rt_sigsuspend`, `rt_sigreturn`, and raising a
//! signal in the caller itself (`raise_self`: SIGPIPE, a fault's).

use super::signal::{
    action, add_pending, altstack, blocked, clear_pending, has_handler, ignored_by_default, interrupt, mask,
    note_sender, note_timer, own_pending, pending_bits, send, send_thread, sender, set_action, set_mask,
    suspended, take_one, thread, timer_queued, Action, CONSOLE_INPUT, SIGCHLD, SIGCONT, SIGSEGV, SIG_DFL,
    SS_DISABLE, SS_ONSTACK, STOPS, WORDS,
};
use crate::errno::LxResult;
use crate::uaccess;
use abi::exception::ExceptionFrame;
use user::{kinfo, sys};

const SA_ONSTACK: u64 = 0x0800_0000;
const SA_RESTART: u64 = 0x1000_0000;
const SA_NODEFER: u64 = 0x4000_0000;
const SA_RESETHAND: u64 = 0x8000_0000;

/// The default action or ignoring; never returns when the signal kills.
/// Init (PID 1) ignores every signal it has no handler for, SIGKILL and
/// SIGSTOP included, as Linux does for signals sent to init from inside
/// its PID namespace: a process that could end init would end the system.
/// (Its own faults still kill it: those do not come through here.)
fn act(sig: u32) {
    match action(sig).handler {
        SIG_DFL if super::is_init() => {}
        SIG_DFL if STOPS & (1 << sig) != 0 => stop(sig),
        SIG_DFL if !ignored_by_default(sig) => super::exit::exit(sig as i32 & 0x7f),
        _ => {}
    }
}

/// Collects signals the kernel queued while lxrt was busy (one look at the
/// exposed table when there are none).
fn collect() {
    // Another thread asked the first to end the process (`thread.rs`).
    if let Some(status) = WORDS.group_exit.get() {
        if super::thread::is_first() {
            super::exit::exit(status);
        }
    }
    // An interval timer's expiry is a signal to the process.
    if crate::alarm::armed() {
        let bits = crate::alarm::fire(queue_timer);
        let p = &WORDS.pending;
        p.set(p.get() | bits);
    }
    let slot = abi::tables::env_slot(crate::lock::my_id() as u32);
    if kinfo::interrupts(slot) != 0 {
        take_interrupts(slot);
    }
    // Usually nothing is pending: one word read on every call's path.
    if WORDS.pending.get() != 0 {
        route();
    }
}

/// `collect`'s rare case, out of line so that every call's `collect`
/// saves no registers for it: the interrupts queued for this thread's
/// environment `slot`, their senders noted, made pending.
#[cold]
#[inline(never)]
fn take_interrupts(slot: usize) {
    let from = kinfo::env(slot).interrupt_from;
    let bits = sys::interrupts_take();
    if bits & CONSOLE_INPUT != 0 {
        // Also the bit a thread's end is told with (`thread::bury`).
        // (Console input, the other use, is looked at by every wait.)
        super::thread::bury();
    }
    note_sender(bits & !CONSOLE_INPUT, from);
    add_pending(bits & !CONSOLE_INPUT);
    if bits & 1 << SIGCHLD != 0 && super::is_init() {
        super::exit::reap_adopted();
    }
}

/// Queues POSIX timer `id`'s signal `sig` for the process or for the
/// thread in environment `thread`; false if the one it queued before is
/// still pending (the expiry is then counted as an overrun).
fn queue_timer(id: usize, sig: u32, thread: Option<u32>) -> bool {
    if timer_queued(sig, id) {
        return false;
    }
    let word = match thread {
        None => &WORDS.pending,
        Some(env) if env as u64 == crate::lock::my_id() => own_pending(),
        Some(env) => {
            // A thread that has ended takes nothing (the next expiry tries
            // again). It runs only once we drop the lock.
            if send_thread(env, sig).is_ok() {
                note_timer(sig, id);
            }
            return true;
        }
    };
    note_timer(sig, id);
    word.set(word.get() | 1 << sig);
    true
}

/// Linux's `complete_signal`: a signal to the process that the first
/// thread (which receives them) blocks goes to a thread that does not:
/// that thread is woken once to take it (it reads the process's pending
/// word as its own).
#[inline(never)]
fn route() {
    let waiting = WORDS.pending.get() & blocked() & !WORDS.routed.get();
    if waiting == 0 || !super::thread::is_first() {
        return;
    }
    let mut p = waiting;
    while p != 0 {
        let sig = p.trailing_zeros();
        p &= p - 1;
        if let Some(env) = super::thread::wanting(sig) {
            WORDS.routed.set(WORDS.routed.get() | 1 << sig);
            let _ = interrupt(env, CONSOLE_INPUT);
        }
    }
}

/// Stops this process (the default action of `sig`): records it in the
/// process-table entry, tells the parent (SIGCHLD), and sleeps until a
/// SIGCONT (even a blocked or handled one) arrives, or a signal whose
/// default action kills (as on Linux, it kills a stopped process).
fn stop(sig: u32) {
    super::table::update_mine(|me| {
        (me.stopped, me.stop_sig) = (1, sig as u8);
        me.stops = me.stops.wrapping_add(1);
    });
    tell_parent();
    loop {
        collect();
        let p = pending_bits();
        if p & 1 << SIGCONT != 0 {
            break;
        }
        let mut fatal = p & !blocked() & !STOPS;
        while fatal != 0 {
            let s = fatal.trailing_zeros();
            fatal &= fatal - 1;
            if action(s).handler == SIG_DFL && !ignored_by_default(s) {
                super::exit::exit(s as i32);
            }
        }
        crate::sleep::pause(None);
    }
    super::table::update_mine(|me| {
        me.stopped = 0;
        me.conts = me.conts.wrapping_add(1);
    });
    tell_parent();
}

/// SIGCHLD for the parent, if it lives (a stop or a continue to report).
fn tell_parent() {
    let parent = super::table::mine().parent;
    if super::table::alive(parent) {
        let _ = send(parent, SIGCHLD);
    }
}

/// `rt_sigsuspend` (and `pause`, with the current mask): blocks `mask`
/// instead and sleeps until a signal it does not block is pending; a
/// handler then runs on the call's return, with the old mask in its frame.
/// Always fails with EINTR.
pub fn suspend(mask: u64) -> LxResult {
    let old = self::mask();
    set_mask(mask);
    loop {
        // Default actions and ignoring take effect here; only a signal with
        // a handler ends the wait.
        check_pending();
        if pending_bits() & !blocked() != 0 {
            break;
        }
        crate::obj::console::poll_interrupt();
        crate::sleep::pause(None);
    }
    // Read by `run_handler` on this call's return.
    suspended(old);
    Err(crate::errno::EINTR)
}

/// The `INTERRUPT` upcall: signals arrived. If they interrupted the program
/// itself, act on them now, as at a call's return.
pub fn interrupted(f: &mut ExceptionFrame) {
    let bits = f.error_code & !CONSOLE_INPUT;
    if !crate::entry::in_program(f) {
        add_pending(bits);
        return;
    }
    crate::lock::acquire();
    // The upcall's fault address names the sender (`interrupt_from`).
    note_sender(bits, f.fault_addr);
    add_pending(bits);
    if bits & 1 << SIGCHLD != 0 && super::is_init() {
        super::exit::reap_adopted();
    }
    // Typed input (a Ctrl-C may become a SIGINT for us too), or a
    // thread's end.
    if f.error_code & CONSOLE_INPUT != 0 {
        crate::obj::console::poll_interrupt();
        super::thread::bury();
    }
    check_pending();
    deliver(f, None);
    crate::lock::end_call();
}

/// A signal this process sends itself (kill, SIGPIPE): the default action
/// at once, or, when the program handles or blocks it, pending until the
/// current call returns or the signal is unblocked.
pub fn raise_self(sig: u32) {
    if has_handler(sig) || blocked() & (1 << sig) != 0 {
        note_sender(1 << sig, super::env() as u64);
        if super::thread::is_first() {
            add_pending(1 << sig);
            route();
            return;
        }
        // From another thread it is still the process's signal: in the
        // process's word, where this thread delivers it at its call's end
        // unless it blocks it; then the first thread is woken to hand it
        // to one that takes it (`route`), or to take it itself.
        let p = &WORDS.pending;
        p.set(p.get() | 1 << sig);
        if blocked() & (1 << sig) != 0 {
            let _ = sys::interrupt(super::env() as u64, CONSOLE_INPUT, super::table::cred());
        }
        return;
    }
    act(sig);
}

/// `tgkill` of the running thread: `raise_self`, but for this thread
/// alone.
pub fn raise_thread(sig: u32) {
    if has_handler(sig) || blocked() & (1 << sig) != 0 {
        let w = own_pending();
        w.set(w.get() | 1 << sig);
        return;
    }
    act(sig);
}

/// At a call's start: acts on pending signals that kill or are ignored.
/// Those with a handler stay pending for `deliver`, at the call's return.
pub fn check_pending() {
    collect();
    let mut p = pending_bits() & !blocked();
    while p != 0 {
        let sig = p.trailing_zeros();
        p &= p - 1;
        if !has_handler(sig) {
            clear_pending(sig);
            act(sig);
        }
    }
}

/// At a call's return (`f` holds its result): acts on pending unblocked
/// signals; the first with a handler has it run, at once on return. The
/// call (Linux number `restart`) ended with EINTR and may be restarted: if
/// the handler asked for `SA_RESTART`, the program makes it again once the
/// handler returns.
pub fn deliver(f: &mut ExceptionFrame, restart: Option<u64>) {
    // Nothing pending (the common case) costs one test.
    let mut p = pending_bits() & !blocked();
    while p != 0 {
        let sig = p.trailing_zeros();
        p &= p - 1;
        if has_handler(sig) {
            let (code, words) = take(sig);
            if let Some(nr) = restart.filter(|_| action(sig).flags & SA_RESTART != 0) {
                // Back onto the `syscall` instruction (2 bytes).
                f.regs.rax = nr;
                f.regs.rip -= 2;
            }
            run_handler(f, sig, code, words);
            return;
        }
        clear_pending(sig);
        act(sig);
    }
}

/// Bytes of the frame: return address, `struct ucontext` (304 bytes in the
/// kernel's layout), `siginfo_t` (128).
const FRAME_WORDS: usize = 1 + 38 + 16;
/// Word indices in the frame.
const UC_MCONTEXT: usize = 6;
const MC_FPSTATE: usize = UC_MCONTEXT + 23;
const UC_SIGMASK: usize = 38;
const INFO: usize = 39;
/// rflags bits a handler (or `rt_sigreturn`) may change, as Linux's
/// FIX_EFLAGS: AC, RF, OF, DF, TF, SF, ZF, AF, PF, CF.
const FIX_EFLAGS: u64 = 0x50dd5;
const FX_BYTES: u64 = 512;

/// The registers in `struct sigcontext` order, r8 to rflags.
fn mcontext_regs(r: &mut abi::exception::Regs) -> [&mut u64; 18] {
    [
        &mut r.r8,
        &mut r.r9,
        &mut r.r10,
        &mut r.r11,
        &mut r.r12,
        &mut r.r13,
        &mut r.r14,
        &mut r.r15,
        &mut r.rdi,
        &mut r.rsi,
        &mut r.rbp,
        &mut r.rbx,
        &mut r.rdx,
        &mut r.rax,
        &mut r.rcx,
        &mut r.rsp,
        &mut r.rip,
        &mut r.rflags,
    ]
}

/// A fault's signal: runs the program's handler for it (returns false if
/// there is none or the signal is blocked: the process must die).
pub fn run_fault_handler(f: &mut ExceptionFrame, sig: u32, code: i32, addr: u64) -> bool {
    if !has_handler(sig) || blocked() & (1 << sig) != 0 {
        return false;
    }
    run_handler(f, sig, code, [addr, 0]);
    true
}

/// `si_code` of a signal sent by `tkill` or `tgkill`.
const SI_TKILL: i32 = -6;
/// `si_code` of a POSIX timer's signal.
const SI_TIMER: i32 = -2;

/// Takes one instance of pending signal `sig` (`take_one`), with
/// `siginfo_t`'s `si_code` and its union's first two words: a POSIX
/// timer's (its id and overrun count, then its value), a `tgkill` or
/// `tkill` by a thread of this process (pending for this thread alone:
/// `raise_thread` too; glibc's SIGCANCEL and SIGSETXID handlers act only
/// on these, si_pid the process's own), or a sender's pid (SI_USER).
fn take(sig: u32) -> (i32, [u64; 2]) {
    let own = own_pending().get() & 1 << sig != 0;
    let from = sender(sig);
    if let Some(id) = take_one(sig) {
        let (overrun, value) = crate::alarm::delivered(id);
        return (SI_TIMER, [id as u64 | overrun << 32, value]);
    }
    if own {
        return (SI_TKILL, [super::pid() as u64, 0]);
    }
    (0, [from as u64, 0])
}

/// Pushes the signal frame, with `siginfo_t`'s `si_code` and its union's
/// first two words (`info`; a fault's address), and points the program at
/// the handler; a stack that cannot take the frame kills the process with
/// SIGSEGV, as on Linux.
fn run_handler(f: &mut ExceptionFrame, sig: u32, code: i32, words: [u64; 2]) {
    let a = action(sig);
    // Set by `suspend` for this delivery only.
    let t = thread();
    let saved = if t.suspending.replace(false) { t.suspended.get() } else { t.mask.get() };
    let alt = altstack();
    let on_alt = alt.on(f.regs.rsp);
    // A handler installed with SA_ONSTACK starts at the top of the
    // alternate stack, unless the program is on it already; otherwise
    // below the red zone.
    let top = if a.flags & SA_ONSTACK != 0 && alt.flags & SS_DISABLE == 0 && !on_alt {
        alt.sp.checked_add(alt.size)
    } else {
        f.regs.rsp.checked_sub(128)
    };
    // Linux's alignment: rsp + 8 is 16-byte aligned at the handler's entry,
    // as after a call. A stack pointer near 0 or outside the program's half
    // of the address space cannot take the frame.
    let fx_at =
        top.filter(|&t| t <= abi::layout::USER_END).and_then(|t| t.checked_sub(FX_BYTES)).map(|x| x & !63);
    let frame =
        fx_at.filter(|&x| x >= FRAME_WORDS as u64 * 8 + 16).map(|x| ((x - FRAME_WORDS as u64 * 8) & !15) - 8);
    let mut w = [0u64; FRAME_WORDS];
    w[0] = a.restorer;
    // uc_stack: the alternate stack as it was, as Linux records it.
    (w[3], w[5]) = (alt.sp, alt.size);
    w[4] = if alt.flags & SS_DISABLE != 0 {
        SS_DISABLE
    } else if on_alt {
        SS_ONSTACK
    } else {
        0
    };
    let mut regs = f.regs;
    for (i, r) in mcontext_regs(&mut regs).into_iter().enumerate() {
        w[UC_MCONTEXT + i] = *r;
    }
    w[UC_MCONTEXT + 18] = 0x33 | 0x2b << 48; // cs, gs, fs, ss
    w[UC_MCONTEXT + 21] = saved; // oldmask
    w[MC_FPSTATE] = fx_at.unwrap_or(0);
    w[UC_SIGMASK] = saved;
    w[INFO] = sig as u64; // si_signo; si_errno 0
    w[INFO + 1] = code as u32 as u64; // si_code (SI_USER: 0)
                                      // si_addr; si_pid and si_uid (0: everyone is root); a timer's.
    (w[INFO + 2], w[INFO + 3]) = (words[0], words[1]);
    let written = match (fx_at, frame) {
        (Some(fx_at), Some(frame)) => {
            uaccess::put(fx_at, crate::entry::fx()).and_then(|_| uaccess::put(frame, w)).map(|_| frame)
        }
        _ => Err(crate::errno::EFAULT),
    };
    // As Linux's force_sigsegv: the program dies of SIGSEGV's default
    // action, whatever it does with SIGSEGV.
    let Ok(frame) = written else {
        crate::log::note(format_args!("pid {} cannot take signal {sig}: bad stack", super::pid()));
        super::exit::exit(SIGSEGV as i32);
    };
    let r = &mut f.regs;
    r.rsp = frame;
    r.rip = a.handler;
    r.rdi = sig as u64;
    r.rsi = frame + INFO as u64 * 8;
    r.rdx = frame + 8;
    r.rax = 0;
    r.rflags &= !(0x400 | 0x100 | 0x10000); // DF, TF, RF
    let mut m = mask() | a.mask;
    if a.flags & SA_NODEFER == 0 {
        m |= 1 << (sig - 1);
    }
    set_mask(m);
    // A one-shot handler: the default action is back, the flags stay (as
    // Linux, which resets the handler alone).
    if a.flags & SA_RESETHAND != 0 {
        set_action(sig, Action { handler: 0, ..a });
    }
}

/// `rt_sigreturn`: the handler has returned into the restorer, which popped
/// the return address, so rsp points at the frame's `ucontext`.
pub fn sigreturn(f: &mut ExceptionFrame) -> LxResult {
    let frame = f.regs.rsp.wrapping_sub(8);
    let Ok(w) = uaccess::get::<[u64; FRAME_WORDS]>(frame) else {
        super::exit::exit(SIGSEGV as i32);
    };
    let mut fx = None;
    if w[MC_FPSTATE] != 0 {
        match uaccess::get::<[u8; 512]>(w[MC_FPSTATE]) {
            Ok(v) => fx = Some(v),
            Err(_) => super::exit::exit(SIGSEGV as i32),
        }
    }
    let flags = f.regs.rflags;
    for (i, r) in mcontext_regs(&mut f.regs).into_iter().enumerate() {
        *r = w[UC_MCONTEXT + i];
    }
    f.regs.rflags = (flags & !FIX_EFLAGS) | (f.regs.rflags & FIX_EFLAGS);
    if let Some(mut fx) = fx {
        // MXCSR: reserved bits (and DAZ, which not every CPU has) would make
        // fxrstor fault inside lxrt.
        let mxcsr = u32::from_le_bytes([fx[24], fx[25], fx[26], fx[27]]) & 0xffbf;
        fx[24..28].copy_from_slice(&mxcsr.to_le_bytes());
        crate::entry::set_fx(&fx);
    }
    set_mask(w[UC_SIGMASK]);
    Ok(f.regs.rax as i64)
}

/// Nothing to act on before or after a call: no signal queued in the
/// kernel or pending here, no exit asked for by a sibling (what `collect`
/// would find, without its work: the path of calls that only read). An
/// armed interval timer needs `collect`'s look, with the lock.
#[inline]
pub fn quiet() -> bool {
    WORDS.group_exit.get().is_none()
        && !crate::alarm::armed()
        && WORDS.pending.get() | own_pending().get() == 0
        && kinfo::interrupts(abi::tables::env_slot(crate::lock::my_id() as u32)) == 0
}

/// Pending signals among `set` (bit n = signal n), as `rt_sigpending`
/// reports them.
pub fn pending_in(set: u64) -> u64 {
    collect();
    pending_bits() & set
}

/// Takes a pending signal among `set` (`rt_sigtimedwait`, a signalfd's
/// read), with its `si_code` and the first two words of its `siginfo_t`
/// union: as Linux's `dequeue_signal`, the lowest of this thread's own,
/// else the lowest of the process's.
pub fn take_pending_in(set: u64) -> Option<(u32, i32, [u64; 2])> {
    let p = pending_in(set);
    let own = own_pending().get() & set;
    let p = if own != 0 { own } else { p };
    (p != 0).then(|| {
        let sig = p.trailing_zeros();
        let (code, words) = take(sig);
        (sig, code, words)
    })
}

/// What a signalfd reads (`obj::signalfd`, handed in at start-up): the
/// caller's pending signals among its mask.
pub static SIGNALFD: crate::obj::signalfd::Signals =
    crate::obj::signalfd::Signals { ready: pending_among, take: take_pending_in };

fn pending_among(set: u64) -> bool {
    pending_in(set) != 0
}

/// Whether a signal this process does not block and handles is waiting
/// for it (other than `except`): a blocked call ends with EINTR.
pub fn pending_except(except: u64) -> bool {
    collect();
    // (A SIGCHLD the upcall brought while lxrt slept: init reaps here.)
    if pending_bits() & 1 << SIGCHLD != 0 && super::is_init() {
        super::exit::reap_adopted();
    }
    // Default actions happen here: a fatal signal ends the process, an
    // ignored one (a child's SIGCHLD, say) must not end the call, and a
    // stop stops the process right here, the wait going on once it is
    // continued (as Linux restarts it). Only signals with a handler remain.
    check_pending();
    pending_bits() & !blocked() & !except != 0
}

pub fn pending() -> bool {
    pending_except(0)
}
