//! What lxrt does with each exception the kernel hands it: reflected
//! system calls go to the personality the program was started with (lxrt's
//! is Linux's, `linux::syscall`), page faults to the program's
//! own fault handler if it installed one (`set_fault_handler`), then to the
//! memory manager; interrupts carry signals from other processes;
//! anything else becomes the signal Linux would send.
//!
//! Here too is the assembly stub every event enters by and every resume
//! leaves by (on the running thread's `entry::Block`): the one piece of the
//! library's bottom that calls its top, by symbol.

use crate::entry::{self, Local};
use crate::word::Word;
use abi::exception::{vector, ExceptionFrame, Regs};
use core::cell::Cell;

use crate::proc::signal::{SIGBUS, SIGFPE, SIGILL, SIGSEGV, SIGTRAP};

/// SIGBUS's `si_code` for an address with nothing behind it.
const BUS_ADRERR: i32 = 2;

user::exception_asm!(
    ".globl lx_entry",
    "lx_entry:",
    "rdgsbase rax",
    user::save_registers!(at "rax"),
    "fxsave64 [rax + {fx}]",
    "cld",
    "mov rdi, rax",
    "call {dispatch}",
    "test al, al",
    "jz lx_restore_iret",
    "lx_restore:",
    "rdgsbase rax",
    "fxrstor64 [rax + {fx}]",
    // `busy` is cleared last, with every register the program's, so an
    // interrupt that lands after it finds the program's state
    // (`user::exc::complete_resume` finishes the last two instructions).
    user::resume_from!(busy ["gs:[0]"], "lx_tail"),
    // The same through the block's IRETQ record, for a program whose
    // stack is unusable.
    "lx_restore_iret:",
    "rdgsbase rax",
    "fxrstor64 [rax + {fx}]",
    "lea rsp, [rax + {iret}]",
    "mov rcx, [rax + {f_rip}]",
    "mov [rsp], rcx",
    "mov rcx, cs",
    "mov [rsp + 8], rcx",
    "mov rcx, [rax + {f_rflags}]",
    "mov [rsp + 16], rcx",
    "mov rcx, [rax + {f_rsp}]",
    "mov [rsp + 24], rcx",
    "mov rcx, ss",
    "mov [rsp + 32], rcx",
    user::load_registers!(),
    "mov qword ptr gs:[0], 0",
    ".globl lx_tail_iret",
    "lx_tail_iret:",
    "iretq",
    // A forked child or a new thread starts here with rdi = its block,
    // whose frame and FPU image hold the state to resume (rax = 0 in it).
    ".globl lx_start",
    "lx_start:",
    "wrgsbase rdi",
    "mov rax, [rdi + {start_fs}]",
    "wrfsbase rax",
    "call {start}",
    "test al, al",
    "jz lx_restore_iret",
    "jmp lx_restore",
    dispatch = sym dispatch,
    start = sym start,
    fx = const entry::FX_AT,
    iret = const entry::IRET_AT,
    start_fs = const entry::START_FS_AT
);

/// Handles the event; false asks for the resume through the IRETQ record.
extern "C" fn dispatch(frame: &mut ExceptionFrame) -> bool {
    // Reflected calls, the common case, first and with no frame to set up.
    if frame.vector == vector::SYSCALL {
        (PERSONALITY.get())(frame);
        return resume_after_call(frame);
    }
    other(frame);
    prepare_resume(frame)
}

/// The resume path stores two words below the program's red zone; after a
/// fork those stack pages are copy-on-write, and a fault there would come
/// while `busy` is still set, so make them writable first. Returns false
/// if they cannot be: rsp points at nothing the program may write.
/// Out of line: `dispatch` reaches it by a jump after `other`, and
/// inlined it held its constants across that call in registers the
/// dispatch then saved on every event.
#[inline(never)]
pub fn prepare_resume(frame: &ExceptionFrame) -> bool {
    let at = frame.regs.rsp.wrapping_sub(144);
    if !(at < frame.regs.rsp && frame.regs.rsp <= abi::layout::USER_END) {
        return false;
    }
    // Usually the record's page is mapped writable already (the program's
    // stack, in use): one look at its page-table entry.
    let page = at & !(crate::layout::PAGE - 1);
    let writable = |va| crate::vm::pte(va).is_some_and(|p| p & abi::pte::WRITABLE != 0);
    if page == (at + 15) & !(crate::layout::PAGE - 1) && writable(page) {
        return true;
    }
    prepare_record(at)
}

/// `prepare_resume` after a reflected call, the common event: a program
/// making calls keeps its stack where it was, so the look is remembered.
/// When this thread last found the record's page writable and no call
/// since could have taken a right from a page (`sys::rights_taken`),
/// nothing is walked.
fn resume_after_call(frame: &ExceptionFrame) -> bool {
    let at = frame.regs.rsp.wrapping_sub(144);
    let page = at & !(crate::layout::PAGE - 1);
    let checked = CHECKED.get();
    let taken = user::sys::rights_taken();
    if checked.get() == (page, taken) && page == (at + 15) & !(crate::layout::PAGE - 1) {
        return true;
    }
    look_and_remember(frame, page, taken)
}

/// `resume_after_call` when nothing is remembered: out of line, so that
/// `dispatch` keeps no registers across `prepare_record` for the
/// remembering (the fault path shares its prologue).
#[inline(never)]
fn look_and_remember(frame: &ExceptionFrame, page: u64, taken: u64) -> bool {
    let ok = prepare_resume(frame);
    if ok {
        CHECKED.get().set((page, taken));
    }
    ok
}

/// The page this thread last found its resume record's page writable in,
/// and `sys::rights_taken` then.
// SAFETY: a `Cell` of integers is valid all zero (never a match: the
// count starts at 1); the part above the threads' own.
const CHECKED: Local<Cell<(u64, u64)>> = unsafe { Local::after(crate::proc::thread::LOCAL.end()) };

/// `prepare_resume`'s rare case, out of line so that the common one saves
/// no registers.
#[cold]
#[inline(never)]
fn prepare_record(at: u64) -> bool {
    crate::lock::guarded(|| crate::vm::prepare(at, 16, true))
}

/// First code a forked child or a new thread runs (on its exception
/// stack, its gs base set).
extern "C" fn start() -> bool {
    // SAFETY: nothing else refers to the frame at the first instruction.
    let f = unsafe { entry::frame() };
    if crate::proc::thread::starting() {
        crate::proc::thread::start(f);
    } else {
        crate::proc::fork::child_start(f);
    }
    prepare_resume(f)
}

/// Starts the Linux program for the first time: `regs` become the live
/// registers, with a clean SSE state.
pub fn enter(regs: &Regs) -> ! {
    crate::vm::leave_native_stack();
    // SAFETY: start-up: no event is being handled.
    let f = unsafe { entry::frame() };
    f.regs = *regs;
    f.busy = 1;
    entry::reset_fpu();
    // SAFETY: the frame and FPU image describe the program's first
    // instruction; lx_restore never returns here.
    unsafe { core::arch::asm!("jmp lx_restore", options(noreturn)) }
}

/// An application's own page-fault handler (ExOS style, paper 001 §5.2:
/// the library passes protection faults to the application, which
/// manages its pages with `protect` itself). It returns whether it dealt
/// with the fault; the frame is resumed as it leaves it.
pub type FaultHandler = fn(&mut ExceptionFrame) -> bool;

/// A personality: answers the reflected system call in `f` (the call's
/// number and arguments in its registers, the result put in rax). The
/// library's core never names one; the program that starts it chooses
/// (`native::init`).
pub type Personality = fn(&mut ExceptionFrame);

/// Until a personality is chosen, every call fails with ENOSYS.
pub fn no_personality(f: &mut ExceptionFrame) {
    f.regs.rax = crate::errno::ENOSYS.negated() as u64;
}

/// Who answers system calls, and the program's own fault handler.
static PERSONALITY: Word<Personality> = Word::new(no_personality);
static FAULT_HANDLER: Word<Option<FaultHandler>> = Word::new(None);

/// Chooses the personality that answers this process's system calls
/// (kept across fork and exec).
pub fn set_personality(p: Personality) {
    PERSONALITY.set(p);
}

/// Installs (or, with `None`, removes) this process's own fault handler.
pub fn set_fault_handler(h: Option<FaultHandler>) {
    FAULT_HANDLER.set(h);
}

/// Every exception but a reflected call.
#[inline(never)]
fn other(f: &mut ExceptionFrame) {
    match f.vector {
        // The kernel's scheduling upcalls: give the CPU back when asked.
        // They come only while the real-time timer is armed (`alarm.rs`):
        // an expiry interrupts the program as a signal would.
        vector::END_OF_SLICE => {
            user::sys::yield_now();
            slice_started(f);
        }
        vector::START_OF_SLICE => slice_started(f),
        vector::INTERRUPT => crate::proc::deliver::interrupted(f),
        // The process's memory map and signal state are shared by its
        // threads: a fault is handled under the big lock.
        _ => crate::lock::guarded(|| fault(f)),
    }
}

/// A new slice while a timer is armed: a due timer's signal interrupts the
/// program (`alarm.rs`; the look at the timers is made with the lock).
fn slice_started(f: &mut ExceptionFrame) {
    if crate::alarm::armed() {
        crate::proc::deliver::interrupted(f);
    }
}

fn fault(f: &mut ExceptionFrame) {
    match f.vector {
        vector::PAGE_FAULT => {
            if let Some(h) = FAULT_HANDLER.get() {
                if h(f) {
                    return;
                }
            }
            page_fault(f)
        }
        // si_code as Linux: ILL_ILLOPN, FPE_INTDIV / FPE_FLTINV, TRAP_BRKPT,
        // SI_KERNEL for a general protection fault.
        vector::INVALID_OPCODE => fault_signal(f, SIGILL, 2, f.regs.rip),
        vector::DIVIDE => fault_signal(f, SIGFPE, 1, f.regs.rip),
        vector::X87 | vector::SIMD => fault_signal(f, SIGFPE, 7, f.regs.rip),
        vector::BREAKPOINT | vector::DEBUG => fault_signal(f, SIGTRAP, 1, f.regs.rip),
        _ => fault_signal(f, SIGSEGV, 0x80, 0),
    }
}

/// A page fault the program's own handler left to the library: a file
/// mapping's page, a page the library maps on first touch, or a signal.
/// Out of line, so that the handler's path saves no registers for it.
#[inline(never)]
fn page_fault(f: &mut ExceptionFrame) {
    let write = f.error_code & abi::exception::pf::WRITE != 0;
    // An instruction fetch from a page that is present (it only
    // lacks the right to run) would fault again for ever.
    let fetch = f.error_code & abi::exception::pf::FETCH != 0;
    let region = crate::vm::find(f.fault_addr);
    match file_fault(f.fault_addr) {
        Some(true) => return,
        Some(false) => return fault_signal(f, SIGBUS, BUS_ADRERR, f.fault_addr),
        None => {}
    }
    if (fetch && region.is_some_and(|r| r.prot & crate::vm::X == 0)) || !crate::vm::touch(f.fault_addr, write)
    {
        // SEGV_ACCERR inside a region the program mapped (the access
        // was not allowed), else SEGV_MAPERR.
        let code = if region.is_some() { 2 } else { 1 };
        fault_signal(f, SIGSEGV, code, f.fault_addr);
    }
}

/// A fault in a file mapping (`filemap::fault`), looked at with the lock
/// held (a process with one thread takes page faults without it): the
/// file, its pages, and the arena mapped as far as any process has grown
/// it.
fn file_fault(va: u64) -> Option<bool> {
    if crate::lock::held() {
        return crate::filemap::fault(va);
    }
    crate::lock::acquire();
    let r = crate::filemap::fault(va);
    crate::lock::release();
    r
}

/// A signal the program's own fault raised: its handler runs (with
/// `si_code` = `code`, `si_addr` = `addr`) if it has one and does not block
/// the signal; otherwise, as on Linux, the process dies of it.
fn fault_signal(f: &mut ExceptionFrame, sig: u32, code: i32, addr: u64) {
    if !crate::proc::deliver::run_fault_handler(f, sig, code, addr) {
        fatal(f, sig);
    }
}

/// The default action of a synchronous signal: the process dies.
fn fatal(f: &ExceptionFrame, sig: u32) -> ! {
    crate::log::note(format_args!(
        "pid {} killed by signal {sig} ({} at rip {:#x}, address {:#x})",
        crate::proc::pid(),
        vector::name(f.vector),
        f.regs.rip,
        f.fault_addr
    ));
    crate::proc::exit::exit(sig as i32)
}
