//! What lxrt does with each exception the kernel hands it: reflected
//! system calls go to the Linux personality, page faults to the program's
//! own fault handler if it installed one (`set_fault_handler`), then to the
//! memory manager; interrupts carry signals from other processes;
//! anything else becomes the signal Linux would send.

use abi::exception::{vector, ExceptionFrame};

const SIGILL: i32 = 4;
const SIGTRAP: i32 = 5;
const SIGFPE: i32 = 8;
const SIGSEGV: i32 = 11;

/// An application's own page-fault handler (ExOS style, paper 001 §5.2:
/// the library passes protection faults to the application, which
/// manages its pages with `protect` itself). It returns whether it dealt
/// with the fault; the frame is resumed as it leaves it.
pub type FaultHandler = fn(&mut ExceptionFrame) -> bool;

static mut FAULT_HANDLER: Option<FaultHandler> = None;

/// Installs (or, with `None`, removes) this process's own fault handler.
pub fn set_fault_handler(h: Option<FaultHandler>) {
    // SAFETY: one thread; never called from inside the handler.
    unsafe { FAULT_HANDLER = h };
}

pub fn handle(f: &mut ExceptionFrame) {
    match f.vector {
        vector::SYSCALL => crate::linux::syscall(f),
        vector::PAGE_FAULT => {
            // SAFETY: written only outside the handler (see above).
            if let Some(h) = unsafe { FAULT_HANDLER } {
                if h(f) {
                    return;
                }
            }
            let write = f.error_code & abi::exception::pf::WRITE != 0;
            if !crate::vm::touch(f.fault_addr, write) {
                fatal(f, SIGSEGV);
            }
        }
        // The kernel's scheduling upcalls: give the CPU back when asked.
        vector::END_OF_SLICE => user::sys::yield_now(),
        vector::START_OF_SLICE => {}
        vector::INTERRUPT => crate::proc::signal::interrupted(f),
        vector::INVALID_OPCODE => fatal(f, SIGILL),
        vector::DIVIDE | vector::X87 | vector::SIMD => fatal(f, SIGFPE),
        vector::BREAKPOINT | vector::DEBUG => fatal(f, SIGTRAP),
        _ => fatal(f, SIGSEGV),
    }
}

/// The default action of a synchronous signal: the process dies.
fn fatal(f: &ExceptionFrame, sig: i32) -> ! {
    crate::log::note(format_args!(
        "pid {} killed by signal {sig} ({} at rip {:#x}, address {:#x})",
        crate::proc::pid(),
        vector::name(f.vector),
        f.regs.rip,
        f.fault_addr
    ));
    crate::proc::exit::exit(sig)
}
