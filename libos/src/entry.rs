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
//!
//! This file is the block and what finds it (the bottom of the library:
//! it names no other module); the assembly stub that enters and leaves
//! through it, and the code it calls, are at the top (`trap.rs`). Each
//! module's per-thread words are its own `Local` part of the block.

use crate::layout::PAGE;
use abi::exception::{ExceptionFrame, Handover, Regs};
use core::marker::PhantomData;
use core::mem::offset_of;

/// The save area the kernel writes events into, and after it the thread's
/// hand-over record (a blocked pipe read's buffer, `obj::handover`).
#[repr(C, align(256))]
pub struct Save(pub ExceptionFrame, Handover);

#[repr(C, align(64))]
struct FxArea([u8; 512]);

/// The first thread's exception stack, above a page left unmapped
/// (`install`): an overflow faults, and the kernel ends the process,
/// instead of overwriting the statics below.
#[repr(C, align(4096))]
struct MainStack([u8; PAGE as usize + STACK_SIZE]);

/// The size of every thread's exception stack: between four and five times
/// the deepest lxrt was seen to go (13.8 KiB, a dynamically linked
/// program's exit in root_dynamic). Each is backed at once and a fork maps
/// a fresh one into the child: at 256 KiB for the first thread, a forked
/// process cost 516 KiB, half of it this stack; at 256 KiB for every
/// thread, 17 processes of 200 threads ran 512 MiB out of memory.
pub const STACK_SIZE: usize = 64 * 1024;

/// What lxrt's entry keeps per thread: the save area the kernel writes
/// the event into (first: the gs base points at it), the interrupted
/// program's FPU image, the IRETQ record, the fs base a new thread or
/// forked child starts with, its exception stack, and the modules'
/// per-thread words (`Local`).
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
    locals: Locals,
}

/// Bytes of per-thread words the modules may claim (`Local`).
pub const LOCALS: usize = 256;

#[repr(C, align(16))]
struct Locals([u8; LOCALS]);

/// A module's per-thread words: a part of every thread's block, at a
/// place the module claims after the part of a module below it
/// (`Local::after(lower.end())`), so the parts never overlap and no module
/// names one above it. Every part starts all zero in a new block (the
/// first thread's, a new thread's); a forked child's is a copy.
pub struct Local<T> {
    at: usize,
    part: PhantomData<T>,
}

impl<T> Local<T> {
    /// The part placed at the first suitably aligned byte from `from`.
    ///
    /// # Safety
    /// `T` is valid all zero and made of `Cell`s (the part is shared by
    /// reference: only its thread uses it, one use at a time), and no
    /// other part lies in `[from, end())` (`from` is the `end` of the
    /// part below, or 0 for the lowest).
    pub const unsafe fn after(from: usize) -> Local<T> {
        let at = from.next_multiple_of(align_of::<T>());
        assert!(align_of::<T>() <= 16 && at + size_of::<T>() <= LOCALS, "the per-thread words fit the block");
        Local { at, part: PhantomData }
    }

    /// The first byte past this part (where the next may start).
    pub const fn end(&self) -> usize {
        self.at + size_of::<T>()
    }

    /// The running thread's part.
    #[inline]
    pub fn get(&self) -> &'static T {
        // SAFETY: see `block` (a live block); the part lies inside its
        // `locals` and is valid as zero bytes and made of `Cell`s (`after`).
        unsafe { self.of(&*block()) }
    }

    /// The running thread's part and its critical word (`critical_word`)
    /// from one look at the block: the lock needs both at every call.
    #[inline]
    pub fn get_with_critical(&self) -> (&'static T, &'static core::sync::atomic::AtomicU64) {
        let b = block();
        // SAFETY: as in `get`.
        (unsafe { self.of(&*b) }, critical_of(b))
    }

    /// Block `b`'s part (a new thread's, set up before it runs).
    #[inline]
    pub fn of<'a>(&self, b: &'a Block) -> &'a T {
        // SAFETY: as in `get`.
        unsafe { &*((&raw const b.locals.0).cast::<u8>().add(self.at).cast::<T>()) }
    }
}

impl Block {
    pub const fn initial() -> Block {
        Block {
            save: Save(ExceptionFrame::EMPTY, Handover::closed()),
            fx: FxArea([0; 512]),
            iret: [0; 5],
            start_fs: 0,
            stack: (0, 0),
            locals: Locals([0; LOCALS]),
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
// Where the kernel looks for the record (`abi::syscall::HAND_OVER`).
const _: () = assert!(offset_of!(Save, 1) == size_of::<ExceptionFrame>());

/// Where the assembly stub (`trap.rs`) finds the FPU image, the IRETQ
/// record and the fs base in a block.
pub const FX_AT: usize = offset_of!(Block, fx);
pub const IRET_AT: usize = offset_of!(Block, iret);
pub const START_FS_AT: usize = offset_of!(Block, start_fs);

/// The first environment's block (each other thread's is on the heap,
/// `proc::thread`).
static mut MAIN: Block = Block::initial();
static mut MAIN_STACK: MainStack = MainStack([0; PAGE as usize + STACK_SIZE]);

unsafe extern "C" {
    fn lx_entry();
    fn lx_start();
    fn lx_tail();
    fn lx_tail_iret();
}

/// The running thread's block. Only its own environment uses it, and
/// lxrt's handler is not re-entered, so each use below (a copy in or out,
/// never a lasting reference but to the `Cell`s of `Thread`) is alone.
/// No test for an unset gs: every way a thread starts sets it before any
/// lookup (`begin` for the first, `lx_start` for a forked child or a new
/// thread; an exec keeps the environment and its gs), and the entry stub
/// writes through it before `dispatch` anyway.
#[inline]
fn block() -> *mut Block {
    let gs: u64;
    // SAFETY: CR4.FSGSBASE is enabled for user code.
    unsafe { core::arch::asm!("rdgsbase {}", out(reg) gs, options(nomem, nostack, preserves_flags)) };
    gs as *mut Block
}

/// Points the gs base at the first thread's block, its exception stack
/// above the guard page (`install` unmaps the guard): the first thing
/// `native::init` does, so every later lookup (`block`) finds it.
pub fn begin() {
    let b = &raw mut MAIN;
    let lo = (&raw const MAIN_STACK) as u64 + PAGE;
    // SAFETY: the first environment's block, before it is in use; the gs
    // base then points at it.
    unsafe {
        (*b).stack = (lo, lo + STACK_SIZE as u64);
        core::arch::asm!("wrgsbase {}", in(reg) b as u64, options(nomem, nostack));
    }
}

/// The running thread's block, as a name (`proc::thread` compares it).
pub fn current_block() -> *mut Block {
    block()
}

/// The fs base a forked child starts with.
pub fn set_start_fs(fs: u64) {
    // SAFETY: see `block`.
    unsafe { (*block()).start_fs = fs };
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
    let (start, end) = crate::layout::image();
    !(start..end).contains(&f.regs.rip)
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

/// The running thread's critical word (`upcalls_off` in its save area),
/// which the kernel reads while the thread is switched out and writes only
/// then (`lock.rs` claims its hold there; the kernel may mark it broken).
pub fn critical_word() -> &'static core::sync::atomic::AtomicU64 {
    critical_of(block())
}

/// Block `b`'s critical word (`critical_word`).
#[inline]
fn critical_of(b: *mut Block) -> &'static core::sync::atomic::AtomicU64 {
    // SAFETY: see `block` (`b` is the running thread's); the word is shared
    // with the kernel, which reaches it only while this thread does not
    // run, so an atomic view of it is sound; nothing else in lxrt writes it.
    unsafe { core::sync::atomic::AtomicU64::from_ptr(&raw mut (*b).save.0.upcalls_off) }
}

/// The running thread's hand-over record (`obj::handover`), which the
/// kernel fills while the thread does not run (`abi::syscall::HAND_OVER`).
pub fn handover() -> &'static Handover {
    // SAFETY: see `block`; the record is made of atomics, shared with the
    // kernel.
    unsafe { &(*block()).save.1 }
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
    if env == 0 && b == &raw mut MAIN {
        // The first thread's guard: lxrt's image maps the page and nothing
        // else is in it. (A forked child, installed for its parent's
        // `env`, maps only present pages: it has the guard too.)
        let _ = user::sys::unmap(abi::syscall::ENV_SELF, &raw const MAIN_STACK as u64);
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
