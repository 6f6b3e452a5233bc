//! What lxrt does with each exception the kernel hands it: reflected
//! system calls go to the Linux personality, page faults to the memory
//! manager, anything else becomes the signal Linux would send.

use abi::exception::{vector, ExceptionFrame};

const SIGILL: i32 = 4;
const SIGTRAP: i32 = 5;
const SIGFPE: i32 = 8;
const SIGSEGV: i32 = 11;

pub fn handle(f: &mut ExceptionFrame) {
    match f.vector {
        vector::SYSCALL => crate::linux::syscall(f),
        vector::PAGE_FAULT => {
            let write = f.error_code & abi::exception::pf::WRITE != 0;
            if !crate::vm::touch(f.fault_addr, write) {
                fatal(f, SIGSEGV);
            }
        }
        // The kernel's scheduling upcalls: give the CPU back when asked.
        vector::END_OF_SLICE => user::sys::yield_now(),
        vector::START_OF_SLICE => {}
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
