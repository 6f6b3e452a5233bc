//! Upcalls: asynchronous events delivered to an environment's exception
//! handler like exceptions (paper 001 §4.2.1, §3.3): the start and end of
//! its time slices, and requests to give memory back. On top of them, the
//! CPU's abort protocol: an environment told its slice is over must give up
//! the CPU before the next tick, or it is preempted by force and skips its
//! next slices; after repeated offences it is destroyed.

use crate::arch::frame::TrapFrame;
use crate::env::{notify, Slot, State};
use crate::state::Kernel;
use abi::exception::{critical, vector, ExceptionFrame};
use abi::tables::FAULT_EXIT_BASE;

/// The rflags bits a handler is entered with cleared, whatever the
/// program had: the trap flag (a single-stepped program's handler is not
/// stepped) and the direction flag. The frame keeps the program's own.
pub const HANDLER_CLEARS: u64 = 0x100 | 0x400;

/// Slices an offender skips.
const PENALTY_SLICES: u8 = 4;
/// Offences after which an environment is destroyed.
const MAX_OFFENCES: u8 = 3;

impl Kernel {
    /// The save area of slot `s`, if it has a handler.
    pub fn save_area(&mut self, s: Slot) -> Option<&'static mut ExceptionFrame> {
        let save = self.envs[s].exc.save;
        // SAFETY: `exc.save` is the kernel address of the registered save
        // area, in a frame pinned while it is registered.
        (save != 0).then(|| unsafe { &mut *(save as *mut ExceptionFrame) })
    }

    /// Delivers pseudo-vector `vector` (with `code` as its error code) to
    /// slot `s`'s handler, the way the exception stub delivers a fault: the
    /// frame gets rax, rcx, rip, rsp and rflags; the other registers reach
    /// the handler live. Returns false if it cannot be delivered now (no
    /// handler, handler busy, or upcalls off for a critical section).
    #[inline(never)] // off the yield fast path, which only tests for it
    pub fn upcall(&mut self, s: Slot, vector: u64, code: u64) -> bool {
        let Some(frame) = self.save_area(s) else { return false };
        let asynchronous = vector != vector::SYSCALL;
        if asynchronous && frame.upcalls_off & critical::IN_SECTION != 0 {
            frame.upcalls_off |= critical::DEFERRED;
            return false;
        }
        if frame.busy != 0 {
            return false;
        }
        let e = &mut self.envs[s];
        let tf: &TrapFrame = &e.tf;
        frame.busy = 1;
        frame.vector = vector;
        frame.error_code = code;
        frame.fault_addr = 0;
        // Only what the handler cannot see live; it saves the rest itself
        // (`user::save_registers!`), so copying them here would be undone.
        (frame.regs.rax, frame.regs.rcx, frame.regs.rsp) = (tf.rax, tf.rcx, tf.rsp);
        (frame.regs.rip, frame.regs.rflags) = (tf.rip, tf.rflags);
        e.tf.rip = e.exc.entry;
        e.tf.rsp = e.exc.stack;
        e.tf.rflags &= !HANDLER_CLEARS;
        e.tf.vector = 0; // resume with every register from the frame
        true
    }

    /// One of slot `s`'s slices starts and it has asked to be told: queued
    /// interrupts go first; otherwise (or if they cannot be delivered) the
    /// start-of-slice upcall.
    #[inline(never)] // off the yield fast path, which only tests for it
    pub fn slice_starts(&mut self, s: Slot) {
        // A new slice for one in its end-of-slice grace: it gave up the
        // CPU, even if it comes straight back (nobody else wanted it, and
        // `switch_to` counts no switch). Here, not in `yield`'s fast path.
        if self.sched.grace().is_some_and(|(g, _)| g == s) {
            self.sched.set_grace(None);
        }
        if self.deliver_interrupts(s) {
            return;
        }
        if self.envs[s].notify & notify::SLICE_UPCALLS != 0 {
            self.upcall(s, vector::START_OF_SLICE, 0);
        }
    }

    /// Delivers slot `s`'s queued interrupt bits as an `INTERRUPT` upcall if
    /// its handler can take one now (see `PCT_INTERRUPT`).
    pub fn deliver_interrupts(&mut self, s: Slot) -> bool {
        let e = &self.envs[s];
        if e.interrupts == 0 || e.state() != State::Runnable {
            return false;
        }
        let (bits, from) = (e.interrupts, e.interrupt_from as u64);
        if !self.upcall(s, vector::INTERRUPT, bits) {
            return false;
        }
        if let Some(frame) = self.save_area(s) {
            frame.fault_addr = from;
        }
        self.clear_interrupts(s);
        true
    }

    fn clear_interrupts(&mut self, s: Slot) {
        let e = &mut self.envs[s];
        e.interrupts = 0;
        e.notify &= !notify::INTERRUPTS;
        self.publish(s);
    }

    /// `interrupts_take`: the caller's queued bits, now cleared.
    pub fn interrupts_take(&mut self) -> u64 {
        let c = self.current();
        let bits = self.envs[c].interrupts;
        if bits != 0 {
            self.clear_interrupts(c);
        }
        bits
    }

    /// Console input waits: tell whoever asked (`console_notify`).
    pub fn check_console(&mut self) {
        let Some((id, bits)) = self.console.listener() else { return };
        if !crate::arch::serial::input_ready() {
            return;
        }
        match self.env_slot(id as u64) {
            Ok(s) if self.envs[s].state() != State::Exited => self.queue_interrupt(s, bits, 0),
            _ => self.console.listen(0, 0),
        }
    }

    /// A timer tick ends the current slice.
    pub fn timer(&mut self) {
        // (The checks below may end the current environment; repossession
        // comes first so it sees the state the tick found.)
        self.count_ticks(1);
        // A slice lent before this tick is over.
        self.sched.take_lender();
        // The tick is charged to whoever it found running.
        let c = self.current();
        self.envs[c].ticks += 1;
        self.envs.publish_ticks(c);
        let holds = self.save_area(c).is_some_and(|f| f.upcalls_off & critical::HOLDS != 0);
        self.sections.tick(c.index(), self.envs[c].id().raw(), holds);
        self.check_reclaims();
        self.check_console();
        let c = self.current();
        let offender = self.sched.grace() == Some((c, self.envs[c].switched_out));
        self.sched.set_grace(None);
        if offender && self.offend(c) {
            return;
        }
        // A handler busy with another event (a reflected call, say) cannot
        // be told: it is preempted as if it had not asked, not punished.
        // One still in its end-of-slice upcall was told and keeps the CPU.
        let busy = self.save_area(c).is_some_and(|f| f.busy != 0 && f.vector != vector::END_OF_SLICE);
        if !offender
            && !busy
            && self.envs[c].notify & notify::SLICE_ENDS != 0
            && self.envs[c].state() == State::Runnable
        {
            // Its slice is over: tell it, and give it until the next tick.
            // (A critical section defers the upcall; the deadline stands.)
            self.upcall(c, vector::END_OF_SLICE, 0);
            self.sched.set_grace(Some((c, self.envs[c].switched_out)));
            return;
        }
        self.schedule();
    }

    /// Slot `c` kept the CPU past its grace period: it skips its next
    /// slices, or ends after repeated offences. Returns true if it ended
    /// (another environment then runs).
    fn offend(&mut self, c: Slot) -> bool {
        let e = &mut self.envs[c];
        e.offences += 1;
        let (id, n) = (e.id(), e.offences);
        if n >= MAX_OFFENCES {
            crate::kprintln!("env {id:#x} destroyed: it kept the CPU after {n} end-of-slice upcalls");
            self.exit_current(FAULT_EXIT_BASE - vector::END_OF_SLICE as i32);
            return true;
        }
        crate::kprintln!("env {id:#x} kept the CPU after its end-of-slice upcall ({n} of {MAX_OFFENCES}); it skips {PENALTY_SLICES} slices");
        e.penalty = PENALTY_SLICES;
        self.set_state(c, State::Penalized);
        false
    }

    /// Asks slot `s` to give back `n` frames (visible revocation, paper
    /// 001 §3.3): recorded, then told by upcall.
    pub fn reclaim(&mut self, s: Slot, n: u64) -> Result<u64, abi::Error> {
        self.reclaims.ask(&self.envs, &self.mem.frames, s, n, self.sched.ticks())?;
        self.upcall(s, vector::REVOKE_REQUEST, n);
        Ok(0)
    }

    /// At each tick: requests met are dropped, overdue ones enforced (the
    /// abort protocol takes the frames and tells the environment).
    pub fn check_reclaims(&mut self) {
        for (s, n) in
            self.reclaims.overdue(&self.envs, &self.mem.frames, self.sched.ticks()).into_iter().flatten()
        {
            let current = self.space_is_current(s);
            let count = crate::revoke::repossess(&mut self.mem, &mut self.envs, s, n, current);
            self.upcall(s, vector::REPOSSESSED, count);
        }
    }
}
