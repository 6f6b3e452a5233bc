//! lxrt's own exception entry (paper 001 §4.4): unlike `user::exc` it saves
//! the interrupted program's SSE/x87 state (a Linux `syscall` preserves it,
//! and lxrt's Rust code uses SSE), runs on a 256 KiB stack (file-system and
//! fork code go deep), and has a second way in for a freshly forked child.
//!
//! Each thread has its own `Block` (save area, FPU image, stack), found
//! through its gs base. The kernel writes rax, rcx, rip, rsp and rflags
//! into the block's save area; the
//! entry saves the other registers, calls `dispatch`, then restores every
//! register from the (possibly changed) frame and returns through a
//! two-word record below the interrupted code's red zone, as `user::exc`.
//! When that record cannot be written — the program's rsp points at
//! nothing, as a program may leave it, or at its exhausted stack after a
//! handler on the alternate stack returned — it returns with IRETQ from a
//! record of lxrt's own (the block's `iret`) instead, so the program resumes and
//! meets its bad stack itself (SIGSEGV, as on Linux) rather than lxrt
//! faulting in its handler.

use crate::proc::Thread;
use abi::exception::{ExceptionFrame, Regs};
use core::mem::offset_of;

#[repr(C, align(256))]
pub struct Save(pub ExceptionFrame);

#[repr(C, align(64))]
struct FxArea([u8; 512]);

#[repr(C, align(16))]
struct Stack([u8; STACK_SIZE]);

/// The size of the first thread's exception stack.
pub const STACK_SIZE: usize = 256 * 1024;

/// The size of every other thread's: a quarter of the first's, ten times
/// the deepest lxrt was seen to go (about 6 KiB, in exec and the shell's
/// calls). Each is backed at once and copied by a fork, and programs make
/// thousands of threads: at 256 KiB, 17 processes of 200 threads ran a
/// 512 MiB machine out of memory.
pub const THREAD_STACK_SIZE: usize = 64 * 1024;

/// What lxrt's entry keeps per thread: the save area the kernel writes
/// the event into (first: the gs base points at it), the interrupted
/// program's FPU image, the IRETQ record, the fs base a new thread or
/// forked child starts with, its exception stack, and the thread's state.
/// Each environment running lxrt has its gs base at its own block (the
/// kernel keeps gs per environment), so the entry and `block()` find it
/// without a symbol; a Linux program does not use gs (`arch_prctl`
/// refuses to set it).
#[repr(C, align(256))]
pub struct Block {
    save: Save,
    fx: FxArea,
    /// IRETQ's record (rip, cs, rflags, rsp, ss) for resuming a program
    /// whose own stack cannot take the usual one.
    iret: [u64; 5],
    pub start_fs: u64,
    /// The exception stack: its lowest address and its top.
    stack: (u64, u64),
    pub thread: Thread,
}

impl Block {
    pub const fn initial() -> Block {
        Block {
            save: Save(ExceptionFrame::EMPTY),
            fx: FxArea([0; 512]),
            iret: [0; 5],
            start_fs: 0,
            stack: (0, 0),
            thread: Thread::initial(),
        }
    }

    /// A block for a new thread, its exception stack at `stack`.
    pub fn with_stack(stack: core::ops::Range<u64>) -> Block {
        Block { stack: (stack.start, stack.end), ..Block::initial() }
    }

    /// The state the thread resumes with when it first runs.
    pub fn set_frame(&mut self, f: ExceptionFrame, fx: [u8; 512]) {
        (self.save.0, self.fx.0) = (f, fx);
    }

    /// The exception stack's pages (a forked child gets fresh ones).
    pub fn stack(&self) -> core::ops::Range<u64> {
        self.stack.0..self.stack.1
    }
}

const _: () = assert!(offset_of!(Block, save) == 0);

/// The first environment's block (each other thread's is on the heap,
/// `proc::thread`).
static mut MAIN: Block = Block::initial();
static mut MAIN_STACK: Stack = Stack([0; STACK_SIZE]);

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
    fx = const offset_of!(Block, fx),
    iret = const offset_of!(Block, iret),
    start_fs = const offset_of!(Block, start_fs)
);

unsafe extern "C" {
    fn lx_entry();
    fn lx_start();
    fn lx_tail();
    fn lx_tail_iret();
}

/// The running thread's block. Only its own environment uses it, and
/// lxrt's handler is not re-entered, so each use below (a copy in or out,
/// never a lasting reference but to the `Cell`s of `Thread`) is alone.
#[inline]
fn block() -> *mut Block {
    let gs: u64;
    // SAFETY: CR4.FSGSBASE is enabled for user code.
    unsafe { core::arch::asm!("rdgsbase {}", out(reg) gs, options(nomem, nostack, preserves_flags)) };
    if gs == 0 {
        // Before `install`: the first environment's.
        return main_block();
    }
    // gs is set only to a live block (`install`, `lx_start`).
    gs as *mut Block
}

#[cold]
fn main_block() -> *mut Block {
    let b = &raw mut MAIN;
    // SAFETY: the first environment's block, before it is in use.
    unsafe {
        if (*b).stack.1 == 0 {
            let lo = (&raw const MAIN_STACK) as u64;
            (*b).stack = (lo, lo + STACK_SIZE as u64);
        }
    }
    b
}

/// The running thread's block, as a name (`proc::thread` compares it).
pub fn current_block() -> *mut Block {
    block()
}

/// The running thread's state (`proc::thread`).
#[inline]
pub fn thread() -> &'static Thread {
    // SAFETY: see `block`; `Thread` is made of `Cell`s.
    unsafe { &(*block()).thread }
}

/// The fs base a forked child starts with.
pub fn set_start_fs(fs: u64) {
    // SAFETY: see `block`.
    unsafe { (*block()).start_fs = fs };
}

/// Handles the event; false asks for the resume through the IRETQ record.
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
        // The resume path filled the record just before; nothing else
        // writes it.
        // SAFETY: see `block`.
        let r = unsafe { (*block()).iret };
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
    prepare_record(at)
}

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
    let f = unsafe { frame() };
    if crate::proc::thread::starting() {
        crate::proc::thread::start(f);
    } else {
        crate::proc::fork::child_start(f);
    }
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
    // SAFETY: the caller holds no other reference (above).
    unsafe { &mut (*block()).save.0 }
}

/// The running thread's exception stack: a forked child gets fresh pages.
pub fn stack_range() -> core::ops::Range<u64> {
    // SAFETY: see `block`.
    unsafe { (*block()).stack() }
}

/// Routes environment `env`'s exceptions (0 = this one) to lxrt, on the
/// running thread's block (a forked child's copy of it).
pub fn install(env: u64) -> Result<(), abi::Error> {
    let b = block();
    if env == 0 {
        // SAFETY: points the gs base at this environment's own block.
        unsafe { core::arch::asm!("wrgsbase {}", in(reg) b as u64, options(nomem, nostack)) };
    }
    // SAFETY: see `block`.
    install_block(env, unsafe { &*b })
}

/// Routes environment `env`'s exceptions to lxrt on block `b`.
pub fn install_block(env: u64, b: &Block) -> Result<(), abi::Error> {
    user::sys::set_exception_handler(env, lx_entry as *const () as u64, b.stack.1, (&raw const b.save) as u64)
        .map(|_| ())
}

/// The registers an environment starts with on block `b` (a forked
/// child on its copy of ours, a new thread on its own).
pub fn start_regs(b: &Block) -> Regs {
    Regs {
        rip: lx_start as *const () as u64,
        rsp: b.stack.1,
        rdi: b as *const Block as u64,
        ..Regs::default()
    }
}

/// The registers a forked child starts with: on its copy of our block.
pub fn child_start_regs() -> Regs {
    // SAFETY: see `block`.
    start_regs(unsafe { &*block() })
}

/// The interrupted program's saved x87/SSE state (FXSAVE image), restored
/// when it resumes.
pub fn fx() -> [u8; 512] {
    // SAFETY: see `block`.
    unsafe { (*block()).fx.0 }
}

/// Replaces the state the program resumes with.
pub fn set_fx(image: &[u8; 512]) {
    // SAFETY: see `block`.
    unsafe { (*block()).fx.0 = *image };
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
