//! What happens when user mode is interrupted: timer ticks preempt, and
//! exceptions the entry stub could not forward to the environment's own
//! handler (paper 001 §4.4; see `arch::trap`) end the environment with a
//! console message.

use crate::arch::{apic, cpu, frame::TrapFrame, percpu};
use crate::env::State;
use crate::hooks::TrapView;
use crate::state::Kernel;
use abi::exception::{vector, Regs};
use abi::tables::FAULT_EXIT_BASE;

/// Entry from user mode. The stub passes the frame, which is the current
/// environment's own; it is reached through the kernel state instead so
/// that there is only one path to it.
pub extern "C" fn from_user(_frame: *mut TrapFrame) {
    // SAFETY: the stub calls this only for traps taken in ring 3.
    unsafe { crate::state::enter(Kernel::trap) }
}

/// Entry while the kernel itself was running: only the idle loop and
/// drivers (inside a crossing, reached through `hooks`) take interrupts;
/// anything else is a kernel bug. The idle loop holds the kernel state,
/// so a tick is only counted here, for the loop to account
/// (`Kernel::idle`).
/// RFLAGS.IF.
const INTERRUPTS_ON: u64 = 1 << 9;

pub extern "C" fn from_kernel(tf: &mut TrapFrame) {
    let _kernel_tables = TrapView::enter();
    let hooks = crate::hooks::get();
    match tf.vector {
        2 => (hooks.nmi)(tf.rip, tf.rsp, tf.rflags & INTERRUPTS_ON != 0),
        v if v < 32 && (hooks.fault)(v, tf.rip, tf.rsp) => {}
        v if v == apic::TIMER_VECTOR as u64 => {
            apic::eoi();
            percpu::count_idle_tick();
            (hooks.tick)();
        }
        v if v == apic::SPURIOUS_VECTOR as u64 => {}
        v if (hooks.note)(v) => {}
        v if v >= 32 => apic::eoi(),
        _ => {
            crate::log::print(format_args!(
                "\nKERNEL PANIC: {} in the kernel at rip {:#x}, error {:#x}, cr2 {:#x}\n",
                exception_name(tf.vector),
                tf.rip,
                tf.error,
                cpu::cr2()
            ));
            crate::panic::backtrace(tf.rbp);
            cpu::qemu_exit(crate::EXIT_FAILURE);
        }
    }
}

fn exception_name(v: u64) -> &'static str {
    match v {
        2 => "non-maskable interrupt",
        8 => "double fault",
        18 => "machine check",
        v => vector::name(v),
    }
}

impl Kernel {
    /// A trap from user mode: a tick, a device interrupt or an exception.
    fn trap(&mut self) {
        let vector = self.envs[self.current()].tf.vector;
        match vector {
            v if v == apic::TIMER_VECTOR as u64 => {
                apic::eoi();
                self.timer();
            }
            v if v == apic::SPURIOUS_VECTOR as u64 => {}
            v if (crate::hooks::get().note)(v) => (crate::hooks::get().service)(&mut self.mem),
            v if v >= 32 => apic::eoi(),
            2 | 8 | 18 => panic!("{} in user mode", exception_name(vector)),
            _ => self.exception(),
        }
    }

    /// An exception the stub could not deliver (`arch::trap` delivers
    /// whenever a handler is registered and not busy, except in an
    /// interposed address space): held for the interposer, or delivered
    /// here to a sharer of that space outside the interposed subtree;
    /// else the environment ends.
    fn exception(&mut self) {
        let c = self.current();
        let tf = &self.envs[c].tf;
        let (vector, error) = (tf.vector, tf.error);
        let fault_addr = if vector == vector::PAGE_FAULT { cpu::cr2() } else { 0 };
        if self.hold_exception(fault_addr) || self.upcall_exception(c, vector, error, fault_addr) {
            return;
        }
        let context =
            if self.envs[self.current()].exc.save != 0 { " inside its exception handler" } else { "" };
        self.kill(fault_addr, context)
    }

    /// Ends the current environment for an exception it cannot handle.
    fn kill(&mut self, addr: u64, context: &str) {
        self.kill_slot(self.current(), addr, context);
    }

    /// Ends slot `s` for the exception in its frame.
    pub fn kill_slot(&mut self, s: crate::env::Slot, addr: u64, context: &str) {
        let e = &self.envs[s];
        let tf = &e.tf;
        crate::kprintln!(
            "env {:#x} killed by {}{} at rip {:#x} (address {:#x}, error {:#x})",
            e.id(),
            vector::name(tf.vector),
            context,
            tf.rip,
            addr,
            tf.error
        );
        // A fault in a handler is a library's bug (or its memory
        // overwritten): the registers are what a post-mortem has.
        if !context.is_empty() {
            crate::kprintln!(
                "  rax {:#x} rbx {:#x} rcx {:#x} rdx {:#x} rsi {:#x} rdi {:#x} rbp {:#x} rsp {:#x}",
                tf.rax,
                tf.rbx,
                tf.rcx,
                tf.rdx,
                tf.rsi,
                tf.rdi,
                tf.rbp,
                tf.rsp
            );
            crate::kprintln!(
                "  r8 {:#x} r9 {:#x} r10 {:#x} r11 {:#x} r12 {:#x} r13 {:#x} r14 {:#x} r15 {:#x}",
                tf.r8,
                tf.r9,
                tf.r10,
                tf.r11,
                tf.r12,
                tf.r13,
                tf.r14,
                tf.r15
            );
        }
        let code = FAULT_EXIT_BASE - tf.vector as i32;
        if s == self.current() {
            self.exit_current(code);
        } else {
            self.env_end(s, code);
        }
    }

    /// Ends the current environment with `code` and runs another. The first
    /// environment's end powers the machine off with its code.
    pub fn exit_current(&mut self, code: i32) {
        if self.current() == self.root() {
            crate::kprintln!("first environment exited with code {code}; powering off");
            self.power_off(code as i64);
        }
        let s = self.current();
        self.env_end(s, code);
        self.after_end();
    }

    /// `exit_current`, and then interrupt `bits` for the parent if it takes
    /// them from credential `cred` (decided before the environment's
    /// capabilities go).
    pub fn exit_telling_parent(&mut self, code: i32, bits: u64, cred: u64) {
        let c = self.current();
        let parent = if bits == 0 || c == self.root() { None } else { self.parent_hears(c, cred, bits) };
        let Some(p) = parent else {
            return self.exit_current(code);
        };
        let id = self.envs[c].id().raw();
        self.env_end(c, code);
        self.queue_interrupt(p, bits, id);
        self.after_end();
    }

    /// The current environment has ended: the rest of the slice goes back
    /// to whoever lent it (`yield_to`), if it can run, else to the next
    /// owned slice. A sender of SIGKILL yields to each target until it has
    /// ended, and a thousand targets each ending early in the lent slice
    /// would otherwise cost it a round of every slice apiece.
    fn after_end(&mut self) {
        match self.sched.take_lender() {
            Some(l) if self.envs[l].state() == State::Runnable => self.switch_to(l),
            _ => self.schedule(),
        }
    }
}

/// The user-visible register set of a frame.
pub fn regs_of(tf: &TrapFrame) -> Regs {
    Regs {
        rax: tf.rax,
        rbx: tf.rbx,
        rcx: tf.rcx,
        rdx: tf.rdx,
        rsi: tf.rsi,
        rdi: tf.rdi,
        rbp: tf.rbp,
        rsp: tf.rsp,
        r8: tf.r8,
        r9: tf.r9,
        r10: tf.r10,
        r11: tf.r11,
        r12: tf.r12,
        r13: tf.r13,
        r14: tf.r14,
        r15: tf.r15,
        rip: tf.rip,
        rflags: tf.rflags,
    }
}

/// Loads `r` into a frame (rflags sanitised) to resume with every
/// register restored.
pub fn load_regs(tf: &mut TrapFrame, r: &Regs) {
    (tf.rax, tf.rbx, tf.rcx, tf.rdx, tf.rsi, tf.rdi, tf.rbp, tf.rsp) =
        (r.rax, r.rbx, r.rcx, r.rdx, r.rsi, r.rdi, r.rbp, r.rsp);
    (tf.r8, tf.r9, tf.r10, tf.r11, tf.r12, tf.r13, tf.r14, tf.r15) =
        (r.r8, r.r9, r.r10, r.r11, r.r12, r.r13, r.r14, r.r15);
    tf.rip = r.rip;
    tf.rflags = crate::validate::user_rflags(r.rflags);
    tf.vector = 0;
}
