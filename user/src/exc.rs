//! Handling this environment's own exceptions (paper 001 §4.4).
//!
//! The kernel writes the cause and the registers it used into `EXC_FRAME`
//! and starts `exc_entry` on `STACK` with every other register still
//! holding the interrupted code's value; the entry saves those into the
//! frame too, then calls the installed Rust handler, which
//! may change the saved registers (skip an instruction, say), then resumes
//! the interrupted code *without entering the kernel*: it restores every
//! register from the frame, clears `busy`, and returns through a two-word
//! record placed below the interrupted code's red zone.

use abi::exception::ExceptionFrame;

/// A handler returns true to resume (with whatever it changed in the
/// frame) or false to give up (the program exits).
pub type Handler = fn(&mut ExceptionFrame) -> bool;

#[repr(C, align(256))]
struct Save(ExceptionFrame);

#[repr(C, align(16))]
struct Stack([u8; 16384]);

#[unsafe(no_mangle)]
static mut EXC_FRAME: Save = Save(ExceptionFrame::EMPTY);
static mut STACK: Stack = Stack([0; 16384]);
static mut HANDLER: Option<Handler> = None;

/// Assembly (a template string) that saves into the exception frame at
/// symbol `$frame` the registers the kernel leaves live on delivery (it
/// wrote rax, rcx, rip, rsp and rflags itself); leaves rax = &frame. Use it
/// inside [`exception_asm!`], which names the frame's offsets.
#[macro_export]
macro_rules! save_registers {
    ($frame:literal) => {
        concat!("lea rax, [rip + ", $frame, "]\n", $crate::save_registers!(at "rax"))
    };
    // The frame at the address in register `$base` (an environment with
    // several threads finds its frame by its stack, not by symbol).
    (at $base:literal) => {
        concat!(
            "mov [", $base, " + {f_rbx}], rbx\n",
            "mov [", $base, " + {f_rdx}], rdx\n",
            "mov [", $base, " + {f_rsi}], rsi\n",
            "mov [", $base, " + {f_rdi}], rdi\n",
            "mov [", $base, " + {f_rbp}], rbp\n",
            "mov [", $base, " + {f_r8}], r8\n",
            "mov [", $base, " + {f_r9}], r9\n",
            "mov [", $base, " + {f_r10}], r10\n",
            "mov [", $base, " + {f_r11}], r11\n",
            "mov [", $base, " + {f_r12}], r12\n",
            "mov [", $base, " + {f_r13}], r13\n",
            "mov [", $base, " + {f_r14}], r14\n",
            "mov [", $base, " + {f_r15}], r15\n",
        )
    };
}

/// Assembly that resumes the code described by the exception frame at
/// symbol `$frame` without entering the kernel: a two-word record (rflags,
/// rip) below its red zone, every register restored, `busy` cleared last,
/// then `popfq; ret 128` from label `$tail` (see `complete_resume`). Use it
/// inside [`exception_asm!`].
#[macro_export]
macro_rules! resume_from {
    ($frame:literal, $tail:literal) => {
        concat!(
            "lea rax, [rip + ",
            $frame,
            "]\n",
            $crate::resume_from!(busy ["[rip + ", $frame, "]"], $tail)
        )
    };
    // With the frame's address in rax; `busy` is the memory operand of its
    // first word, reachable without a register (`[rip + SYM]`, `gs:[N]`).
    (busy [$($busy:literal),+], $tail:literal) => {
        concat!(
            "mov rsp, [rax + {f_rsp}]\n",
            "sub rsp, 144\n",
            "mov rcx, [rax + {f_rip}]\n",
            "mov [rsp + 8], rcx\n",
            "mov rcx, [rax + {f_rflags}]\n",
            "mov [rsp], rcx\n",
            $crate::load_registers!(),
            "mov qword ptr ",
            $($busy,)+
            ", 0\n",
            ".globl ",
            $tail,
            "\n",
            $tail,
            ":\n",
            "popfq\n",
            "ret 128\n",
        )
    };
}

/// Assembly that loads every general register but rsp from the exception
/// frame rax points to (rax last). Use it inside [`exception_asm!`].
#[macro_export]
macro_rules! load_registers {
    () => {
        concat!(
            "mov rbx, [rax + {f_rbx}]\n",
            "mov rcx, [rax + {f_rcx}]\n",
            "mov rdx, [rax + {f_rdx}]\n",
            "mov rsi, [rax + {f_rsi}]\n",
            "mov rdi, [rax + {f_rdi}]\n",
            "mov rbp, [rax + {f_rbp}]\n",
            "mov r8, [rax + {f_r8}]\n",
            "mov r9, [rax + {f_r9}]\n",
            "mov r10, [rax + {f_r10}]\n",
            "mov r11, [rax + {f_r11}]\n",
            "mov r12, [rax + {f_r12}]\n",
            "mov r13, [rax + {f_r13}]\n",
            "mov r14, [rax + {f_r14}]\n",
            "mov r15, [rax + {f_r15}]\n",
            "mov rax, [rax + {f_rax}]\n",
        )
    };
}

/// `global_asm!` with the exception frame's offsets as operands
/// (`{f_rax}` ... `{f_r15}`, `{f_rip}`, `{f_rflags}`, `{f_rsp}`), taken from
/// `abi::exception::ExceptionFrame` by `offset_of!`, so no offset is
/// written by hand. The template must use `save_registers!` and
/// `resume_from!` (which use every one); the caller's own operands follow,
/// without a trailing comma.
#[macro_export]
macro_rules! exception_asm {
    ($($body:tt)*) => {
        core::arch::global_asm!(
            $($body)*,
            f_rax = const $crate::exc::reg_offset(core::mem::offset_of!(abi::exception::Regs, rax)),
            f_rbx = const $crate::exc::reg_offset(core::mem::offset_of!(abi::exception::Regs, rbx)),
            f_rcx = const $crate::exc::reg_offset(core::mem::offset_of!(abi::exception::Regs, rcx)),
            f_rdx = const $crate::exc::reg_offset(core::mem::offset_of!(abi::exception::Regs, rdx)),
            f_rsi = const $crate::exc::reg_offset(core::mem::offset_of!(abi::exception::Regs, rsi)),
            f_rdi = const $crate::exc::reg_offset(core::mem::offset_of!(abi::exception::Regs, rdi)),
            f_rbp = const $crate::exc::reg_offset(core::mem::offset_of!(abi::exception::Regs, rbp)),
            f_rsp = const $crate::exc::reg_offset(core::mem::offset_of!(abi::exception::Regs, rsp)),
            f_r8 = const $crate::exc::reg_offset(core::mem::offset_of!(abi::exception::Regs, r8)),
            f_r9 = const $crate::exc::reg_offset(core::mem::offset_of!(abi::exception::Regs, r9)),
            f_r10 = const $crate::exc::reg_offset(core::mem::offset_of!(abi::exception::Regs, r10)),
            f_r11 = const $crate::exc::reg_offset(core::mem::offset_of!(abi::exception::Regs, r11)),
            f_r12 = const $crate::exc::reg_offset(core::mem::offset_of!(abi::exception::Regs, r12)),
            f_r13 = const $crate::exc::reg_offset(core::mem::offset_of!(abi::exception::Regs, r13)),
            f_r14 = const $crate::exc::reg_offset(core::mem::offset_of!(abi::exception::Regs, r14)),
            f_r15 = const $crate::exc::reg_offset(core::mem::offset_of!(abi::exception::Regs, r15)),
            f_rip = const $crate::exc::reg_offset(core::mem::offset_of!(abi::exception::Regs, rip)),
            f_rflags = const $crate::exc::reg_offset(core::mem::offset_of!(abi::exception::Regs, rflags)),
        );
    };
}

/// Where the register at `offset` in `Regs` lies in the exception frame.
pub const fn reg_offset(offset: usize) -> usize {
    core::mem::offset_of!(ExceptionFrame, regs) + offset
}

crate::exception_asm!(
    ".globl exc_entry",
    "exc_entry:",
    // The kernel saved rax, rcx, rip, rsp and rflags; the rest are live.
    crate::save_registers!("EXC_FRAME"),
    "mov rdi, rax",
    "call {dispatch}",
    // busy = 0 comes last, with every register the interrupted code's
    // (see `complete_resume`).
    crate::resume_from!("EXC_FRAME", "exc_tail"),
    dispatch = sym dispatch
);

unsafe extern "C" {
    fn exc_entry();
    fn exc_tail();
}

/// An upcall can land in the last two instructions of a resume path
/// (`popfq` at `tail`, then `ret 128`), after `busy` was cleared: every
/// register already holds the interrupted code's value, and its rflags and
/// rip are still in the record on its stack. This completes those two
/// instructions in `f`, so the frame describes the interrupted code.
#[inline]
pub fn complete_resume(f: &mut ExceptionFrame, tail: u64) {
    let r = &mut f.regs;
    if r.rip != tail && r.rip != tail + 1 {
        return;
    }
    // Before `popfq` the record holds rflags then rip; after it, rip.
    let words = if r.rip == tail { 2 } else { 1 };
    // SAFETY: the resume path wrote the record at rsp just before; the 16
    // bytes from rsp lie in the region it reserved below the red zone.
    let rec = unsafe { core::ptr::read(r.rsp as *const [u64; 2]) };
    if words == 2 {
        r.rflags = rec[0];
    }
    r.rip = rec[words - 1];
    r.rsp += words as u64 * 8 + 128;
}

extern "C" fn dispatch(frame: &mut ExceptionFrame) {
    // Only an asynchronous upcall can land at the end of a resume path.
    if frame.vector > abi::exception::vector::SYSCALL {
        complete_resume(frame, exc_tail as *const () as u64);
    }
    // SAFETY: HANDLER is written only by `install`, never while an
    // exception is being handled (single-threaded environment).
    let h = unsafe { HANDLER };
    if !h.is_some_and(|h| h(frame)) {
        crate::println!(
            "unhandled {} at rip {:#x} (address {:#x})",
            abi::exception::vector::name(frame.vector),
            frame.regs.rip,
            frame.fault_addr
        );
        crate::sys::exit(abi::tables::FAULT_EXIT_BASE - frame.vector as i32);
    }
}

/// Defers asynchronous upcalls (end of slice, revocation requests) while
/// `f` runs: a robust critical section instead of a lock. If the kernel
/// had to defer one, the CPU is given up on leaving (the kernel allows that
/// until the next tick, no longer).
pub fn critical<R>(f: impl FnOnce() -> R) -> R {
    use abi::exception::critical::{DEFERRED, IN_SECTION};
    let offset = core::mem::offset_of!(ExceptionFrame, upcalls_off);
    let flag = (&raw mut EXC_FRAME).cast::<u8>().wrapping_add(offset).cast::<u64>();
    // SAFETY: `flag` is `EXC_FRAME.0.upcalls_off`; volatile because the
    // kernel reads and sets it between our instructions.
    unsafe { core::ptr::write_volatile(flag, IN_SECTION) };
    let r = f();
    // SAFETY: as above.
    let deferred = unsafe { core::ptr::replace(flag, 0) } & DEFERRED != 0;
    if deferred {
        DEFERRALS.fetch_add(1, core::sync::atomic::Ordering::Relaxed);
        crate::sys::yield_now();
    }
    r
}

static DEFERRALS: core::sync::atomic::AtomicU64 = core::sync::atomic::AtomicU64::new(0);

/// How many times an upcall waited for a critical section to end.
pub fn deferrals() -> u64 {
    DEFERRALS.load(core::sync::atomic::Ordering::Relaxed)
}

/// Routes this environment's exceptions to `handler`.
pub fn install(handler: Handler) -> Result<(), abi::Error> {
    // SAFETY: single-threaded; no exception is in progress while installing.
    unsafe { HANDLER = Some(handler) };
    let stack_top = (&raw const STACK) as u64 + core::mem::size_of::<Stack>() as u64;
    crate::sys::set_exception_handler(
        0,
        exc_entry as *const () as u64,
        stack_top,
        (&raw const EXC_FRAME) as u64,
    )
    .map(|_| ())
}
