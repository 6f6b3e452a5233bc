//! Exceptions forwarded to user space (paper 001 §4.4).
//!
//! When code in an environment raises an exception, the kernel writes into
//! the [`ExceptionFrame`] save area the environment registered: `busy = 1`,
//! the vector, error code and faulting address, and of the registers only
//! `rax`, `rcx`, `rip`, `rsp` and `rflags` (the ones delivery uses). It then
//! starts the handler at `entry` on the registered stack with every other
//! general register still holding the interrupted code's value, as Aegis did
//! (paper 001 §4.4): the handler saves what it will use. It may resume the
//! faulting code itself, without entering the kernel, by restoring the
//! registers and clearing `busy`. An exception raised while `busy` is still
//! set ends the environment (its handler itself faulted).

use core::sync::atomic::AtomicU64;

/// User registers, as saved on an exception or by `env_get_regs`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Regs {
    pub rax: u64,
    pub rbx: u64,
    pub rcx: u64,
    pub rdx: u64,
    pub rsi: u64,
    pub rdi: u64,
    pub rbp: u64,
    pub rsp: u64,
    pub r8: u64,
    pub r9: u64,
    pub r10: u64,
    pub r11: u64,
    pub r12: u64,
    pub r13: u64,
    pub r14: u64,
    pub r15: u64,
    pub rip: u64,
    pub rflags: u64,
}

/// What the kernel writes into the registered save area.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ExceptionFrame {
    /// Set by the kernel on delivery; the handler clears it when done.
    pub busy: u64,
    /// x86 vector number ([`vector`]).
    pub vector: u64,
    /// The CPU's error code (0 when the vector has none).
    pub error_code: u64,
    /// The faulting address for page faults (CR2), else 0.
    pub fault_addr: u64,
    /// The registers at the time of the exception.
    pub regs: Regs,
    /// Bit 0, written by the environment: set while it is in a critical
    /// section and asynchronous upcalls (end of slice, revocation requests)
    /// must wait. Bit 1, written by the kernel: an upcall was deferred — on
    /// leaving the section the environment should give up the CPU. The
    /// kernel waits at most until the next tick, then treats the environment
    /// as not complying (robust critical sections, paper 000 §3.3).
    /// Bit 2, written by the environment: it holds a library lock that
    /// others may wait for; bit 3, written by the kernel: that hold was
    /// broken (see `syscall::SECTION_HOLDS`).
    pub upcalls_off: u64,
}

// The layout is ABI: assembly on both sides (the kernel's exception stub,
// the user runtime's entry and resume paths) reaches these words by
// `offset_of!`, and programs built against one kernel must run on the next.
const _: () = {
    use core::mem::{offset_of, size_of};
    assert!(size_of::<Regs>() == 18 * 8);
    assert!(offset_of!(Regs, rax) == 0 && offset_of!(Regs, r15) == 15 * 8);
    assert!(offset_of!(Regs, rip) == 16 * 8 && offset_of!(Regs, rflags) == 17 * 8);
    assert!(offset_of!(ExceptionFrame, busy) == 0);
    assert!(offset_of!(ExceptionFrame, vector) == 8);
    assert!(offset_of!(ExceptionFrame, error_code) == 16);
    assert!(offset_of!(ExceptionFrame, fault_addr) == 24);
    assert!(offset_of!(ExceptionFrame, regs) == 32);
    assert!(offset_of!(ExceptionFrame, upcalls_off) == 32 + 18 * 8);
    assert!(size_of::<ExceptionFrame>() == 23 * 8);
};

impl ExceptionFrame {
    /// A save area before any delivery (a `static` initialiser).
    pub const EMPTY: ExceptionFrame = ExceptionFrame {
        busy: 0,
        vector: 0,
        error_code: 0,
        fault_addr: 0,
        regs: Regs {
            rax: 0,
            rbx: 0,
            rcx: 0,
            rdx: 0,
            rsi: 0,
            rdi: 0,
            rbp: 0,
            rsp: 0,
            r8: 0,
            r9: 0,
            r10: 0,
            r11: 0,
            r12: 0,
            r13: 0,
            r14: 0,
            r15: 0,
            rip: 0,
            rflags: 0,
        },
        upcalls_off: 0,
    };
}

/// A read waiting for bytes (`syscall::HAND_OVER`): the record right after
/// an environment's exception save area, in the same page (else it has
/// none). Its owner fills `key` (an address it maps, which names what it
/// reads: whoever fills the record must name the same key and map the same
/// frame at its page), `dst` and `len`, then sets `state` to
/// `OPEN`; the kernel copies into `dst`, then sets `len` to the bytes
/// given and `state` to `DONE`. The owner closes it (`NONE`) with an
/// atomic exchange, which tells it whether bytes came.
#[repr(C)]
pub struct Handover {
    pub state: AtomicU64,
    pub key: AtomicU64,
    pub dst: AtomicU64,
    pub len: AtomicU64,
}

impl Handover {
    /// A record no read has opened.
    pub const fn closed() -> Handover {
        Handover {
            state: AtomicU64::new(0),
            key: AtomicU64::new(0),
            dst: AtomicU64::new(0),
            len: AtomicU64::new(0),
        }
    }
}

/// `Handover::state` values, and the most one hand-over copies.
pub mod handover {
    pub const NONE: u64 = 0;
    pub const OPEN: u64 = 1;
    pub const DONE: u64 = 2;
    pub const MAX: u64 = 64 * 1024;
}

/// `ExceptionFrame::upcalls_off` bits.
pub mod critical {
    /// Set by the environment: in a critical section.
    pub const IN_SECTION: u64 = 1;
    /// Set by the kernel: an upcall waited for the section to end.
    pub const DEFERRED: u64 = 2;
    /// Set by the environment: it holds a library lock (`SECTION_HOLDS`
    /// vouches for it to waiters). Upcalls are not deferred by it.
    pub const HOLDS: u64 = 4;
    /// Set by the kernel: a waiter was told the hold is over (the holder
    /// slept, stopped or overran `SECTION_TICKS`).
    pub const BROKEN: u64 = 8;
}

/// Exception vectors the kernel forwards.
pub mod vector {
    pub const DIVIDE: u64 = 0;
    pub const DEBUG: u64 = 1;
    pub const BREAKPOINT: u64 = 3;
    pub const OVERFLOW: u64 = 4;
    pub const BOUND: u64 = 5;
    pub const INVALID_OPCODE: u64 = 6;
    pub const GENERAL_PROTECTION: u64 = 13;
    pub const PAGE_FAULT: u64 = 14;
    pub const X87: u64 = 16;
    pub const ALIGNMENT: u64 = 17;
    pub const SIMD: u64 = 19;
    /// Not a CPU vector: a `syscall` whose number is not a kernel call,
    /// reflected to the environment (a Linux personality, say). The frame
    /// holds every register (`rip` is after the `syscall`); the handler puts
    /// the result in `regs.rax` and resumes.
    pub const SYSCALL: u64 = 256;
    /// Not a CPU vector: the environment's time slice is over. It must give
    /// up the CPU (yield) before the next tick or be preempted by force and
    /// penalised; three offences end it (paper 001 §4.2.1).
    pub const END_OF_SLICE: u64 = 257;
    /// Not a CPU vector: a slice of the environment's begins.
    pub const START_OF_SLICE: u64 = 258;
    /// Not a CPU vector: the kernel asks the environment to give back
    /// `error_code` frames (free them) within two ticks; it chooses which
    /// (paper 001 §3.3, visible revocation).
    pub const REVOKE_REQUEST: u64 = 259;
    /// Not a CPU vector: the environment did not give frames back in time,
    /// so the kernel took `error_code` of them; they are listed in its
    /// repossession vector ([`RepossessionVector`]).
    pub const REPOSSESSED: u64 = 260;
    /// Not a CPU vector: an interrupting protected control transfer
    /// (`PCT_INTERRUPT`) arrived: `error_code` holds the interrupt bits
    /// queued for the environment (now cleared), `fault_addr` the id of the
    /// last sender, and the frame the interrupted registers.
    pub const INTERRUPT: u64 = 261;

    /// Name of a vector, for messages.
    pub const fn name(v: u64) -> &'static str {
        match v {
            DIVIDE => "divide error",
            DEBUG => "debug trap",
            BREAKPOINT => "breakpoint",
            OVERFLOW => "overflow",
            BOUND => "bound range exceeded",
            INVALID_OPCODE => "invalid opcode",
            GENERAL_PROTECTION => "general protection fault",
            PAGE_FAULT => "page fault",
            X87 => "x87 floating-point error",
            ALIGNMENT => "alignment check",
            SIMD => "SIMD floating-point error",
            SYSCALL => "reflected system call",
            END_OF_SLICE => "end of time slice",
            START_OF_SLICE => "start of time slice",
            REVOKE_REQUEST => "request to give back frames",
            REPOSSESSED => "frames repossessed",
            INTERRUPT => "interrupt",
            _ => "exception",
        }
    }
}

/// One frame the kernel repossessed: where it was mapped (0 if it was not
/// mapped) and its number.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Repossessed {
    pub va: u64,
    pub frame: u64,
}

/// The repossession vector (paper 001 §3.3): a page the environment
/// registers, where the kernel lists the frames it took by force. The
/// environment resets `count` once it has dealt with them.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct RepossessionVector {
    pub count: u64,
    pub entries: [Repossessed; 255],
}

/// Page-fault error-code bits.
pub mod pf {
    pub const PRESENT: u64 = 1 << 0;
    pub const WRITE: u64 = 1 << 1;
    pub const USER: u64 = 1 << 2;
    pub const FETCH: u64 = 1 << 4;
}
