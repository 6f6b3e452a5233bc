//! lxrt's own exception entry (paper 001 §4.4): unlike `user::exc` it saves
//! the interrupted program's SSE/x87 state (a Linux `syscall` preserves it,
//! and lxrt's Rust code uses SSE), runs on a 256 KiB stack (file-system and
//! fork code go deep), and has a second way in for a freshly forked child.
//!
//! The kernel writes rax, rcx, rip, rsp and rflags into `LX_FRAME`; the
//! entry saves the other registers, calls `dispatch`, then restores every
//! register from the (possibly changed) frame and returns through a
//! two-word record below the interrupted code's red zone, as `user::exc`.
//! When that record cannot be written — the program's rsp points at
//! nothing, as a program may leave it, or at its exhausted stack after a
//! handler on the alternate stack returned — it returns with IRETQ from a
//! record of lxrt's own (`LX_IRET`) instead, so the program resumes and
//! meets its bad stack itself (SIGSEGV, as on Linux) rather than lxrt
//! faulting in its handler.

use abi::exception::{ExceptionFrame, Regs};

#[repr(C, align(256))]
pub struct Save(pub ExceptionFrame);

#[repr(C, align(64))]
struct FxArea([u8; 512]);

#[repr(C, align(16))]
struct Stack([u8; STACK_SIZE]);

const STACK_SIZE: usize = 256 * 1024;

#[unsafe(no_mangle)]
static mut LX_FRAME: Save = Save(ExceptionFrame::EMPTY);
#[unsafe(no_mangle)]
static mut LX_FX: FxArea = FxArea([0; 512]);
/// The fs base a forked child starts with (written by the parent before it
/// copies lxrt's data into the child).
#[unsafe(no_mangle)]
pub static mut LX_CHILD_FS: u64 = 0;
static mut STACK: Stack = Stack([0; STACK_SIZE]);
/// IRETQ's record (rip, cs, rflags, rsp, ss) for resuming a program whose
/// own stack cannot take the usual one.
#[unsafe(no_mangle)]
static mut LX_IRET: [u64; 5] = [0; 5];

user::exception_asm!(
    ".globl lx_entry",
    "lx_entry:",
    user::save_registers!("LX_FRAME"),
    "fxsave64 [rip + LX_FX]",
    "cld",
    "mov rdi, rax",
    "call {dispatch}",
    "test al, al",
    "jz lx_restore_iret",
    "lx_restore:",
    "fxrstor64 [rip + LX_FX]",
    // `busy` is cleared last, with every register the program's, so an
    // interrupt that lands after it finds the program's state
    // (`user::exc::complete_resume` finishes the last two instructions).
    user::resume_from!("LX_FRAME", "lx_tail"),
    // The same through LX_IRET, for a program whose stack is unusable.
    "lx_restore_iret:",
    "fxrstor64 [rip + LX_FX]",
    "lea rax, [rip + LX_FRAME]",
    "lea rsp, [rip + LX_IRET]",
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
    "mov qword ptr [rip + LX_FRAME], 0",
    ".globl lx_tail_iret",
    "lx_tail_iret:",
    "iretq",
    // A forked child starts here: its copy of LX_FRAME/LX_FX holds the
    // parent's state at the `fork` call (with rax = 0).
    ".globl lx_fork_child",
    "lx_fork_child:",
    "mov rax, [rip + LX_CHILD_FS]",
    "wrfsbase rax",
    "call {child}",
    "test al, al",
    "jz lx_restore_iret",
    "jmp lx_restore",
    dispatch = sym dispatch,
    child = sym child_start
);

unsafe extern "C" {
    fn lx_entry();
    fn lx_fork_child();
    fn lx_tail();
    fn lx_tail_iret();
}

/// Handles the event; false asks for the resume through `LX_IRET`.
extern "C" fn dispatch(frame: &mut ExceptionFrame) -> bool {
    crate::trap::handle(frame);
    prepare_resume(frame)
}

/// Whether the upcall in `f` interrupted the Linux program rather than
/// lxrt's own code. One that came during a resume path's last instructions
/// (`popfq`, `ret 128`, or `iretq`: the program's registers are all in
/// place, rflags, rip and perhaps rsp still in a record) is completed
/// first, so the frame describes the program.
pub fn in_program(f: &mut ExceptionFrame) -> bool {
    user::exc::complete_resume(f, lx_tail as *const () as u64);
    if f.regs.rip == lx_tail_iret as *const () as u64 {
        // SAFETY: the resume path filled the record just before; nothing
        // else writes it.
        let r = unsafe { *(&raw const LX_IRET) };
        (f.regs.rip, f.regs.rflags, f.regs.rsp) = (r[0], r[2], r[3]);
    }
    let (start, end) = crate::proc::fork::image();
    !(start..end).contains(&f.regs.rip)
}

/// The resume path stores two words below the program's red zone; after a
/// fork those stack pages are copy-on-write, and a fault there would come
/// while `busy` is still set, so make them writable first. Returns false
/// if they cannot be: rsp points at nothing the program may write.
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
    crate::vm::prepare(at, 16, true)
}

/// First code a forked child runs (on its exception stack): its copies of
/// lxrt's statics still describe the parent in the middle of `fork`.
extern "C" fn child_start() -> bool {
    // SAFETY: nothing else refers to the frame at the child's first
    // instruction.
    let f = unsafe { frame() };
    crate::proc::fork::child_start(f);
    prepare_resume(f)
}

/// The frame of the event being handled: the registers the program
/// resumes with.
///
/// # Safety
/// No other reference to the frame may be live while the result is: the
/// handler's own (`dispatch`'s argument, which it passes down) is one, so
/// this is only for code outside an event (start-up, a forked child's
/// first instruction).
pub unsafe fn frame() -> &'static mut ExceptionFrame {
    // SAFETY: one thread; the caller holds no other reference.
    unsafe { &mut (*(&raw mut LX_FRAME)).0 }
}

/// The exception stack's pages: a forked child gets fresh ones, uncopied.
pub fn stack_range() -> core::ops::Range<u64> {
    (&raw const STACK) as u64..stack_top()
}

fn stack_top() -> u64 {
    (&raw const STACK) as u64 + STACK_SIZE as u64
}

/// Routes environment `env`'s exceptions (0 = this one) to lxrt.
pub fn install(env: u64) -> Result<(), abi::Error> {
    user::sys::set_exception_handler(
        env,
        lx_entry as *const () as u64,
        stack_top(),
        (&raw const LX_FRAME) as u64,
    )
    .map(|_| ())
}

/// Registers a child's entry point for its first run.
pub fn child_start_regs() -> Regs {
    Regs { rip: lx_fork_child as *const () as u64, rsp: stack_top(), ..Regs::default() }
}

/// The interrupted program's saved x87/SSE state (FXSAVE image), restored
/// when it resumes.
pub fn fx() -> [u8; 512] {
    // SAFETY: one thread; only the entry code's `fxsave`/`fxrstor`, outside
    // Rust, use it otherwise; this copies it out.
    unsafe { (*(&raw const LX_FX)).0 }
}

/// Replaces the state the program resumes with.
pub fn set_fx(image: &[u8; 512]) {
    // SAFETY: as in `fx`.
    unsafe { (*(&raw mut LX_FX)).0 = *image };
}

/// A new program starts with the power-on x87/SSE state.
pub fn reset_fpu() {
    // A default FXSAVE image is all zero except FCW = 0x37f and
    // MXCSR = 0x1f80.
    let mut fx = [0u8; 512];
    fx[0..2].copy_from_slice(&0x37fu16.to_le_bytes());
    fx[24..28].copy_from_slice(&0x1f80u32.to_le_bytes());
    set_fx(&fx);
}

/// Starts the Linux program for the first time: `regs` become the live
/// registers, with a clean SSE state.
pub fn enter(regs: &Regs) -> ! {
    crate::vm::leave_native_stack();
    // SAFETY: start-up: no event is being handled.
    let f = unsafe { frame() };
    f.regs = *regs;
    f.busy = 1;
    reset_fpu();
    // SAFETY: the frame and FPU image describe the program's first
    // instruction; lx_restore never returns here.
    unsafe { core::arch::asm!("jmp lx_restore", options(noreturn)) }
}
