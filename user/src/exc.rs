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
use core::arch::global_asm;

/// A handler returns true to resume (with whatever it changed in the
/// frame) or false to give up (the program exits).
pub type Handler = fn(&mut ExceptionFrame) -> bool;

#[repr(C, align(256))]
struct Save(ExceptionFrame);

#[repr(C, align(16))]
struct Stack([u8; 16384]);

#[unsafe(no_mangle)]
static mut EXC_FRAME: Save = Save(ExceptionFrame {
    busy: 0,
    vector: 0,
    error_code: 0,
    fault_addr: 0,
    regs: abi::exception::Regs {
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
});
static mut STACK: Stack = Stack([0; 16384]);
static mut HANDLER: Option<Handler> = None;

global_asm!(
    ".globl exc_entry",
    "exc_entry:",
    // The kernel saved rax, rcx, rip, rsp and rflags; the rest are live.
    "lea rax, [rip + EXC_FRAME]",
    "mov [rax + 40], rbx",
    "mov [rax + 56], rdx",
    "mov [rax + 64], rsi",
    "mov [rax + 72], rdi",
    "mov [rax + 80], rbp",
    "mov [rax + 96], r8",
    "mov [rax + 104], r9",
    "mov [rax + 112], r10",
    "mov [rax + 120], r11",
    "mov [rax + 128], r12",
    "mov [rax + 136], r13",
    "mov [rax + 144], r14",
    "mov [rax + 152], r15",
    "mov rdi, rax",
    "call {dispatch}",
    "lea rax, [rip + EXC_FRAME]",
    "mov rsp, [rax + 88]",      // interrupted rsp
    "sub rsp, 144",             // below its 128-byte red zone
    "mov rcx, [rax + 160]",
    "mov [rsp + 8], rcx",       // rip
    "mov rcx, [rax + 168]",
    "mov [rsp], rcx",           // rflags
    "mov rbx, [rax + 40]",
    "mov rcx, [rax + 48]",
    "mov rdx, [rax + 56]",
    "mov rsi, [rax + 64]",
    "mov rdi, [rax + 72]",
    "mov rbp, [rax + 80]",
    "mov r8, [rax + 96]",
    "mov r9, [rax + 104]",
    "mov r10, [rax + 112]",
    "mov r11, [rax + 120]",
    "mov r12, [rax + 128]",
    "mov r13, [rax + 136]",
    "mov r14, [rax + 144]",
    "mov r15, [rax + 152]",
    "mov rax, [rax + 32]",
    // busy = 0: a new exception or upcall may come, and finds every
    // register the interrupted code's (see `complete_resume`).
    "mov qword ptr [rip + EXC_FRAME], 0",
    ".globl exc_tail",
    "exc_tail:",
    "popfq",
    "ret 128",
    dispatch = sym dispatch,
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
