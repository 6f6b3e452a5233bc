//! What lxrt does with each exception the kernel hands it: reflected
//! system calls go to the personality the program was started with (lxrt's
//! is Linux's, `linux::syscall`), page faults to the program's
//! own fault handler if it installed one (`set_fault_handler`), then to the
//! memory manager; interrupts carry signals from other processes;
//! anything else becomes the signal Linux would send.

use abi::exception::{vector, ExceptionFrame};

use crate::proc::signal::{SIGBUS, SIGFPE, SIGILL, SIGSEGV, SIGTRAP};

/// SIGBUS's `si_code` for an address with nothing behind it.
const BUS_ADRERR: i32 = 2;
use crate::proc::vars;

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
    f.regs.rax = (-crate::errno::ENOSYS) as u64;
}

/// Chooses the personality that answers this process's system calls
/// (kept across fork and exec).
pub fn set_personality(p: Personality) {
    vars().personality.set(p);
}

/// Installs (or, with `None`, removes) this process's own fault handler.
pub fn set_fault_handler(h: Option<FaultHandler>) {
    vars().fault_handler.set(h);
}

pub fn handle(f: &mut ExceptionFrame) {
    // Reflected calls, the common case, first and with no frame to set up.
    if f.vector == vector::SYSCALL {
        return (vars().personality.get())(f);
    }
    other(f);
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
        vector::INTERRUPT => crate::proc::signal::interrupted(f),
        // The process's memory map and signal state are shared by its
        // threads: a fault is handled under the big lock.
        _ => crate::lock::guarded(|| fault(f)),
    }
}

/// A new slice while a timer is armed: a due timer's signal interrupts the
/// program (`alarm.rs`; the look at the timers is made with the lock).
fn slice_started(f: &mut ExceptionFrame) {
    if crate::alarm::armed() {
        crate::proc::signal::interrupted(f);
    }
}

fn fault(f: &mut ExceptionFrame) {
    match f.vector {
        vector::PAGE_FAULT => {
            if let Some(h) = vars().fault_handler.get() {
                if h(f) {
                    return;
                }
            }
            let write = f.error_code & abi::exception::pf::WRITE != 0;
            // An instruction fetch from a page that is present (it only
            // lacks the right to run) would fault again for ever.
            let fetch = f.error_code & abi::exception::pf::FETCH != 0;
            let region = crate::vm::find(f.fault_addr);
            match crate::filemap::fault(f.fault_addr) {
                Some(true) => return,
                Some(false) => return fault_signal(f, SIGBUS, BUS_ADRERR, f.fault_addr),
                None => {}
            }
            if (fetch && region.is_some_and(|r| r.prot & crate::vm::X == 0))
                || !crate::vm::touch(f.fault_addr, write)
            {
                // SEGV_ACCERR inside a region the program mapped (the access
                // was not allowed), else SEGV_MAPERR.
                let code = if region.is_some() { 2 } else { 1 };
                fault_signal(f, SIGSEGV, code, f.fault_addr);
            }
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

/// A signal the program's own fault raised: its handler runs (with
/// `si_code` = `code`, `si_addr` = `addr`) if it has one and does not block
/// the signal; otherwise, as on Linux, the process dies of it.
fn fault_signal(f: &mut ExceptionFrame, sig: u32, code: i32, addr: u64) {
    if !crate::proc::signal::run_fault_handler(f, sig, code, addr) {
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
