//! Interposition, Fluke's border control (paper 003 §3.2): a parent asks
//! to see each system call of a subtree before the kernel acts on it, and
//! answers it itself or lets it through.
//!
//! The cost falls only on interposed environments. They get their own view
//! of one kernel page: the page holding the system-call entry, copied with
//! the dispatch instruction's table address changed to [`ITABLE`], whose
//! every entry is `syscall_intercept`. Every interposed address space maps
//! that copy in place of the original (its top PML4 slot points at a copy
//! of the kernel image's tables differing in that one entry), so the
//! switch of address space every change of environment makes anyway is
//! what selects the entry: the common path gains no instruction. The page
//! is not global in either view, so a CR3 load drops it from the TLB.
//!
//! A call stops the environment (`Stopped`, the call in `Env::event`) for
//! its interposer, which reads it with `env_state_get` and answers with
//! `intercept_answer`: a value to return, or "pass", which backs the
//! environment up onto its `syscall` instruction and lets exactly that one
//! call (the same `rip`) through to the real table. Foreign calls are
//! caught where the kernel would reflect them.

use crate::arch::cpu;
use crate::env::{Env, EnvId, ExcTarget, Slot, State};
use crate::frames::Frame;
use crate::mm::{self, PhysTables, KERNEL_BASE};
use crate::pagetable::{self, Tables, GLOBAL};
use crate::state::Kernel;
use abi::nest::{answer, event, Event};
use abi::syscall::BASE;
use abi::tables::frame_state;
use abi::Error;
use core::arch::global_asm;
use core::mem::offset_of;
use core::sync::atomic::{AtomicU64, Ordering};

/// The length of the `syscall` instruction (a held call is re-executed).
pub const SYSCALL_LEN: u64 = 2;
/// The PML4 slot of the kernel image, and the PDPT slot below it.
const IMAGE_PML4_SLOT: usize = 511;
const IMAGE_PDPT_SLOT: usize = 510;

global_asm!(
    r#"
    .section .rodata
    .balign 8
    .global interpose_table
interpose_table:
    .rept {count}
    .quad syscall_intercept
    .endr

    .section .text
    /* Reached from the interposed view's dispatch, as a handler: rax =
     * number - BASE, arguments in rdi rsi rdx rcx r8 r9, the caller's frame
     * (the start of its Env) at gs:cur_tf; r10 = rcx. The one call let
     * through goes on to the real table; any other is held. */
    .global syscall_intercept
syscall_intercept:
    movq %gs:{cur_tf}, %r11
    movq %rax, {number}(%r11)
    movq {rip}(%r11), %r10
    cmpq %r10, {bypass}(%r11)
    jne 2f
    /* The call let through: the real handler, then the result is held
     * too, unless the call switched environments (it is then reported
     * as having no result). */
    movq $0, {bypass}(%r11)
    movq %rcx, %r10 /* PCT's message register, as the stub left it */
    subq $8, %rsp
    call *{table}(, %rax, 8)
    addq $8, %rsp
    movq %gs:{cur_tf}, %rcx
    cmpq %rcx, %gs:{caller_tf}
    jne 1f
    movq %rax, %rdi
    jmp {returned}
1:  ret
2:  jmp {held}
    "#,
    count = const abi::syscall::END - abi::syscall::BASE,
    cur_tf = const offset_of!(crate::arch::percpu::PerCpu, cur_tf),
    rip = const offset_of!(crate::arch::frame::TrapFrame, rip),
    bypass = const offset_of!(Env, bypass),
    number = const offset_of!(Env, event) + offset_of!(Event, number),
    table = sym crate::syscall::TABLE,
    held = sym held_call,
    returned = sym held_result,
    caller_tf = const offset_of!(crate::arch::percpu::PerCpu, caller_tf),
    options(att_syntax)
);

unsafe extern "C" {
    static interpose_table: u8;
    static syscall_dispatch: u8;
    static exc_fast_save: u8;
    static syscall_reflect_save: u8;
}

/// `exc_fast` addresses the environment from the frame's `vector` word.
const SAVE_BASE: isize = offset_of!(crate::arch::frame::TrapFrame, vector) as isize;

/// `call *disp32(,%rax,8)` (a byte of padding).
fn dispatch(table: i32) -> [u8; 8] {
    let d = table.to_le_bytes();
    [0xFF, 0x14, 0xC5, d[0], d[1], d[2], d[3], 0]
}

/// `movq disp8(%rsp), %rax` (three bytes of padding).
fn load_rax(disp: u8) -> [u8; 8] {
    [0x48, 0x8B, 0x44, 0x24, disp, 0, 0, 0]
}

/// `movq disp32(%rsp), %r11`.
fn load_r11(disp: u32) -> [u8; 8] {
    let d = disp.to_le_bytes();
    [0x4C, 0x8B, 0x9C, 0x24, d[0], d[1], d[2], d[3]]
}

/// Makes `to` a copy of table `from` whose entry `slot` points at `below`
/// instead, with the same flags.
fn copy_table(t: &mut PhysTables, from: Frame, to: Frame, slot: usize, below: Frame) {
    let src = *t.table(from);
    let dst = t.table(to);
    *dst = src;
    dst[slot] = pagetable::entry(below, src[slot] & !pagetable::FRAME_MASK);
}

/// The PML4 entry of the interposed view (0 before `interposition_init`).
static VIEW: AtomicU64 = AtomicU64::new(0);

/// A held kernel call, from `syscall_intercept` (the number, less `BASE`,
/// is already in the frame's `event.number`).
extern "sysv64" fn held_call(a0: u64, a1: u64, a2: u64, a3: u64, a4: u64, a5: u64) -> i64 {
    // SAFETY: reached only from `syscall_intercept`, which the system-call
    // stub calls from ring 3, in place of any handler.
    unsafe {
        crate::state::enter(|k| {
            let c = k.current();
            let number = k.envs[c].event.number + BASE;
            let e = &mut k.envs[c];
            if e.interposer.is_none() {
                // A sharer of an interposed address space, itself outside
                // the interposed subtree: its call is nobody's to see. The
                // stub returns to the `syscall` instruction with the
                // number in rax (every argument register comes back from
                // the frame), and the call, made again, is let through.
                e.bypass = e.tf.rip;
                e.tf.rip -= SYSCALL_LEN;
                return number as i64;
            }
            k.hold(
                c,
                Event { kind: event::SYSCALL, to: 0, number, args: [a0, a1, a2, a3, a4, a5], value: 0 },
            );
            0 // the interposer's answer replaces it
        })
    }
}

/// The result of a call let through, from `syscall_intercept`: held
/// (`event::RESULT`) for the interposer to read, and to change if it
/// answers `RETURN`. The stub stores the returned value in the frame.
extern "sysv64" fn held_result(value: u64) -> i64 {
    // SAFETY: reached only from `syscall_intercept`, after the handler it
    // called returned without switching environments: no `enter` is live.
    unsafe {
        crate::state::enter(|k| {
            let c = k.current();
            if k.envs[c].interposer.is_none() {
                return; // a call `held_call` let through: nobody's to see
            }
            let tf = &k.envs[c].tf;
            let args = [tf.rdi, tf.rsi, tf.rdx, tf.r10, tf.r8, tf.r9];
            let number = k.envs[c].event.number + BASE;
            k.hold(c, Event { kind: event::RESULT, to: 0, number, args, value });
        })
    };
    value as i64
}

impl Kernel {
    /// Builds the interposed view of the kernel image (boot): each patched
    /// page is copied, and the tables above it, down from the image's PDPT.
    pub fn interposition_init(&mut self) {
        let table = crate::syscall::TABLE.as_ptr() as u64 as i32;
        let view_table = (&raw const interpose_table) as u64 as i32;
        let disp8 = |field: usize| (field as isize - SAVE_BASE) as u8;
        let in_env = |field: usize| (offset_of!(Env, exc) + field) as u32;
        let patches: [(u64, [u8; 8], [u8; 8], usize); 3] = [
            // call *TABLE(,%rax,8) -> call *interpose_table(,%rax,8)
            ((&raw const syscall_dispatch) as u64, dispatch(table), dispatch(view_table), 7),
            // movq save(%rsp), %rax -> movq no_save(%rsp), %rax
            (
                (&raw const exc_fast_save) as u64,
                load_rax(disp8(offset_of!(Env, exc) + offset_of!(ExcTarget, save))),
                load_rax(disp8(offset_of!(Env, exc) + offset_of!(ExcTarget, no_save))),
                5,
            ),
            // The reflection stub's: movq save(%rsp), %r11 -> movq no_save(%rsp), %r11
            (
                (&raw const syscall_reflect_save) as u64,
                load_r11(in_env(offset_of!(ExcTarget, save))),
                load_r11(in_env(offset_of!(ExcTarget, no_save))),
                8,
            ),
        ];
        let mut t = PhysTables;
        let kpml4e = t.table(self.mem.kernel_pml4())[IMAGE_PML4_SLOT];
        let kpdpt = pagetable::frame_of(kpml4e);
        let kpd = pagetable::frame_of(t.table(kpdpt)[IMAGE_PDPT_SLOT]);
        let mut new =
            || self.mem.frames.alloc(None, 0, frame_state::KERNEL).expect("frames for the interposed view");
        let (pdpt, pd) = (new(), new());
        copy_table(&mut t, kpdpt, pdpt, IMAGE_PDPT_SLOT, pd);
        *t.table(pd) = *t.table(kpd);
        for (at, old, patched, len) in patches {
            let page = at & !0xFFF;
            let (off, within) = (page - KERNEL_BASE, (at - page) as usize);
            // SAFETY: the kernel text is mapped readable, and each label
            // names an instruction inside its stub (5 to 8 bytes) that more
            // of the stub follows: 8 bytes from it are all text.
            let insn: [u8; 8] = unsafe { core::ptr::read(at as *const [u8; 8]) };
            assert!(
                insn[..len] == old[..len] && within + len <= 4096,
                "an instruction interposition patches is not what it expects"
            );
            let (pdi, pti) = ((off >> 21) as usize, pagetable::index(off, 0));
            // This 2 MiB region's table: copied once, then shared by patches.
            let kpt = pagetable::frame_of(t.table(kpd)[pdi]);
            // (Compared by the frame they name: the CPU sets accessed bits.)
            let pt = if pagetable::frame_of(t.table(pd)[pdi]) == kpt {
                let pt = new();
                let (src, flags) = (*t.table(kpt), t.table(kpd)[pdi] & !pagetable::FRAME_MASK);
                *t.table(pt) = src;
                t.table(pd)[pdi] = pagetable::entry(pt, flags);
                pt
            } else {
                pagetable::frame_of(t.table(pd)[pdi])
            };
            // The page: copied once; it stops being global in both views.
            let code = if pagetable::frame_of(t.table(pt)[pti]) == pagetable::frame_of(t.table(kpt)[pti]) {
                let code = new();
                // SAFETY: `code` is a fresh kernel frame nobody maps yet;
                // `page` is kernel text, readable.
                unsafe { core::ptr::copy_nonoverlapping(page as *const u8, mm::frame_ptr::<u8>(code), 4096) };
                t.table(kpt)[pti] &= !GLOBAL;
                cpu::invlpg(page);
                t.table(pt)[pti] = pagetable::entry(code, t.table(kpt)[pti] & !pagetable::FRAME_MASK);
                code
            } else {
                pagetable::frame_of(t.table(pt)[pti])
            };
            assert_ne!(
                code,
                pagetable::frame_of(t.table(kpt)[pti]),
                "the view never writes the kernel's own text"
            );
            // SAFETY: `code` is the view's copy of the page, mapped nowhere
            // writable; the patch lies within it.
            unsafe {
                core::ptr::copy_nonoverlapping(patched.as_ptr(), mm::frame_ptr::<u8>(code).add(within), len)
            };
        }
        VIEW.store(pagetable::entry(pdpt, kpml4e & !pagetable::FRAME_MASK), Ordering::Relaxed);
    }

    /// Slot `by` interposes (or stops interposing) on slot `top` and its
    /// subtree: on environments that already have a nearer interposer
    /// (one below `by`) that one stays.
    pub fn interpose(&mut self, top: Slot, by: Slot, on: bool) {
        let me = self.envs[by].id();
        let mut at = Some(top);
        while let Some(s) = at {
            let now = self.envs[s].interposer;
            let to = match (on, now) {
                (true, None) => Some(me),
                (true, Some(i)) if self.is_ancestor(i, by) => Some(me),
                (false, Some(i)) if i == me => None,
                _ => now,
            };
            self.set_interposer(s, to);
            at = self.next_in_subtree(top, s);
        }
    }

    /// The interposer of the (live) interposer `to`, if any.
    fn outer_interposer(&self, to: u64) -> Option<EnvId> {
        let s = self.env_slot(to).ok().filter(|_| to != 0)?;
        self.envs[s].interposer
    }

    /// Whether `a` is a proper ancestor of slot `s`.
    pub fn is_ancestor(&self, a: EnvId, s: Slot) -> bool {
        let mut p = self.envs[s].parent();
        while let Some(id) = p {
            if id == a {
                return true;
            }
            p = self.envs[id.slot()].parent();
        }
        false
    }

    /// An environment created in an interposed subtree is interposed on by
    /// the same interposer.
    pub fn inherit_interposition(&mut self, creator: Slot, child: Slot) {
        if let Some(i) = self.envs[creator].interposer {
            self.set_interposer(child, Some(i));
        }
    }

    fn set_interposer(&mut self, s: Slot, to: Option<EnvId>) {
        let entry = if to.is_some() {
            VIEW.load(Ordering::Relaxed)
        } else {
            PhysTables.table(self.mem.kernel_pml4())[IMAGE_PML4_SLOT]
        };
        PhysTables.table(self.envs[s].pml4)[IMAGE_PML4_SLOT] = entry;
        self.envs[s].interposer = to;
    }

    /// Holds slot `c` (the caller) on `ev` for its interposer.
    fn hold(&mut self, c: Slot, ev: Event) {
        let to = self.envs[c].interposer.map_or(0, |i| i.raw() as u64);
        self.envs[c].event = Event { to, ..ev };
        self.envs[c].resume_as = State::Runnable;
        self.set_state(c, State::Stopped);
        match self.offer_event(c) {
            Some(w) => self.switch_to(w),
            None => self.schedule(),
        }
    }

    /// A foreign system call of the current environment, about to be
    /// reflected: held if it is interposed, unless it is the one let
    /// through. Returns whether it was held.
    pub fn hold_foreign(&mut self) -> bool {
        let c = self.current();
        let e = &mut self.envs[c];
        if e.interposer.is_none() {
            return false;
        }
        if e.bypass == e.tf.rip {
            e.bypass = 0;
            return false;
        }
        let tf = &e.tf;
        let ev = Event {
            to: 0,
            kind: event::FOREIGN,
            number: tf.rax,
            args: [tf.rdi, tf.rsi, tf.rdx, tf.r10, tf.r8, tf.r9],
            value: 0,
        };
        self.hold(c, ev);
        true
    }

    /// An exception of the current environment that the stub could not
    /// deliver (an interposed one's never can: see `no_save`): held if it
    /// is interposed. Returns whether it was held.
    pub fn hold_exception(&mut self, fault_addr: u64) -> bool {
        let c = self.current();
        if self.envs[c].interposer.is_none() {
            return false;
        }
        let tf = &self.envs[c].tf;
        let ev = Event {
            to: 0,
            kind: event::EXCEPTION,
            number: tf.vector,
            args: [tf.error, fault_addr, 0, 0, 0, 0],
            value: 0,
        };
        self.hold(c, ev);
        true
    }

    /// Lets held exception `ev` of slot `s` through: what the stub would
    /// have done, delivery to its handler, or its end.
    /// The exception upcall the stub makes, made by the kernel: whether
    /// slot `s`'s handler was free to take it.
    pub fn upcall_exception(&mut self, s: Slot, vector: u64, error: u64, addr: u64) -> bool {
        let taken = self.upcall(s, vector, error);
        if let Some(frame) = self.save_area(s).filter(|_| taken) {
            frame.fault_addr = addr;
        }
        taken
    }

    fn deliver_exception(&mut self, s: Slot, ev: Event) {
        let (vector, error, addr) = (ev.number, ev.args[0], ev.args[1]);
        if self.upcall_exception(s, vector, error, addr) {
            self.set_state(s, State::Runnable);
        } else {
            let context = if self.envs[s].exc.save != 0 { " inside its exception handler" } else { "" };
            self.kill_slot(s, addr, context);
        }
    }

    /// `intercept_answer`: ends the wait of held slot `s`.
    /// What one interposer lets through goes on to the interposer around
    /// it, if there is one, before the kernel acts on it: a nester inside
    /// an interposed subtree cannot pass its children's calls around it.
    /// Returns the outer interposer if that woke it (`intercept_wait`).
    pub fn answer(&mut self, s: Slot, mode: u64, value: u64) -> Result<Option<Slot>, Error> {
        let e = &self.envs[s];
        if e.state() != State::Stopped || e.event.kind == event::NONE {
            return Err(Error::BadState);
        }
        if mode == answer::PASS {
            if let Some(outer) = self.outer_interposer(e.event.to) {
                self.envs[s].event.to = outer.raw() as u64;
                return Ok(self.offer_event(s));
            }
        }
        let e = &mut self.envs[s];
        let ev = e.event;
        match (mode, ev.kind) {
            (answer::PASS, event::EXCEPTION) => {
                e.event = Event::default();
                self.deliver_exception(s, ev);
                return Ok(None);
            }
            // The faulting instruction again (a trap's next one).
            (answer::RETURN | answer::HOLD, event::EXCEPTION) => e.tf.vector = 0,
            // A result passes as it is; a call goes on to the kernel (or,
            // held, is made again when released, seen anew).
            (answer::PASS | answer::HOLD, event::RESULT) => {}
            (answer::PASS | answer::HOLD, _) => {
                if mode == answer::PASS {
                    e.bypass = e.tf.rip;
                }
                e.tf.rip -= SYSCALL_LEN;
                e.tf.rax = e.event.number;
                e.tf.vector = 0; // every register back, the arguments too
            }
            (answer::RETURN, _) => e.tf.rax = value,
            _ => return Err(Error::BadFlags),
        }
        e.event = Event::default();
        if mode == answer::HOLD {
            // Held still, now without an event: `env_run` releases it.
            e.resume_as = State::Runnable;
        } else {
            self.set_state(s, State::Runnable);
        }
        Ok(None)
    }
}
