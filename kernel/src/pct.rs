//! Protected control transfer (paper 001 §4.6) and directed yield: moving
//! the CPU from one environment to another chosen one, atomically, without
//! touching the registers that carry the message.

use crate::cap::Rights;
use crate::env::{notify, Slot, State};
use crate::state::Kernel;
use abi::syscall::{PCT_INTERRUPT, PCT_QUEUE, PCT_SYNC};
use abi::Error;

impl Kernel {
    /// `yield_to`: the rest of this slice goes to `id`, which must be
    /// runnable (not waiting for a reply, not penalised).
    #[inline]
    pub fn yield_to(&mut self, id: u64) -> Result<u64, Error> {
        let t = self.env_slot(id)?;
        if self.envs[t].state() != State::Runnable {
            // Last, so that nothing lives across the call and the common
            // path saves no registers.
            return self.yield_to_sleeper(t);
        }
        self.sched.lend(self.current());
        self.switch_to(t);
        if self.envs[t].notify & notify::INTERRUPTS != 0 {
            // Bits queued for it are delivered as at a slice's start.
            self.deliver_interrupts(t);
        }
        Ok(0)
    }

    /// A sleeper whose predicate holds now would wake at its next slice:
    /// it wakes now and takes this one (a futex waker hands the CPU to the
    /// thread it woke).
    #[cold]
    #[inline(never)]
    fn yield_to_sleeper(&mut self, t: Slot) -> Result<u64, Error> {
        if self.envs[t].state() == State::Sleeping {
            self.wake_if_ready(t);
        }
        if self.envs[t].state() != State::Runnable {
            return Err(Error::BadState);
        }
        self.sched.lend(self.current());
        self.switch_to(t);
        self.deliver_interrupts(t);
        Ok(0)
    }

    /// `pct`: transfers control into `id`. `msg` holds the caller-saved
    /// message registers (rdx, r10, r8, r9) as they were at the call; the
    /// callee-saved ones are in the caller's frame already.
    pub fn pct(&mut self, id: u64, flags: u64, msg: [u64; 4]) -> Result<u64, Error> {
        if flags & !(PCT_SYNC | PCT_INTERRUPT | PCT_QUEUE | 0xff_ff00) != 0
            || flags & (PCT_QUEUE | PCT_INTERRUPT) == PCT_QUEUE
        {
            return Err(Error::BadFlags);
        }
        let (cred, grant) = ((flags >> 8) & 0xff, (flags >> 16) & 0xff);
        let t = self.env_slot(id)?;
        let c = self.current();
        if t == c {
            return Err(Error::BadEnv);
        }
        if flags & PCT_INTERRUPT != 0 {
            // Neither a reply nor a grant makes sense for an interrupt.
            if flags & PCT_SYNC != 0 || grant != 0 {
                return Err(Error::BadFlags);
            }
            return self.pct_interrupt(t, cred, msg[0], flags & PCT_QUEUE != 0);
        }
        // A reply to a caller held in its wait (`env_stop`) lands, but the
        // caller stays held: it goes on when released (paper 003 §3.2).
        let held = self.envs[t].state() == State::Stopped;
        let reply = matches!(self.envs[t].state(), State::Waiting | State::Stopped)
            && self.envs[t].waiting_on() == Some(c);
        if !reply {
            if self.envs[t].state() != State::Runnable || self.envs[t].pct_entry == 0 {
                return Err(Error::BadState);
            }
            // The callee decides who may call it.
            let guard = self.envs[t].pct_guard;
            if !guard.is_none() {
                self.mem.caps.check(self.cred(cred)?, guard, Rights::READ)?;
            }
        }
        let granted = if grant == 0 { u64::MAX } else { self.grant(grant - 1, t)? };
        let caller_id = self.envs[c].id().raw() as u64;
        let s = &self.envs[c].tf;
        let saved = [s.rbx, s.rbp, s.r12, s.r13, s.r14, s.r15];
        let (entry, stack) = (self.envs[t].pct_entry, self.envs[t].pct_stack);
        let dst = &mut self.envs[t].tf;
        (dst.rdx, dst.r10, dst.r8, dst.r9) = (msg[0], msg[1], msg[2], msg[3]);
        [dst.rbx, dst.rbp, dst.r12, dst.r13, dst.r14, dst.r15] = saved;
        dst.rax = caller_id;
        dst.rcx = granted;
        dst.vector = 0; // resume with every register from the frame
        if reply && held {
            self.envs[t].resume_as = State::Runnable;
            self.set_held_wait(t, None);
            if flags & PCT_SYNC != 0 {
                self.set_waiting(c, t);
                self.schedule();
            }
            return Ok(0);
        }
        if reply {
            self.set_state(t, State::Runnable);
        } else {
            dst.rip = entry;
            dst.rsp = stack;
            dst.rflags = crate::validate::FORCED_FLAGS;
        }
        if flags & PCT_SYNC != 0 {
            self.set_waiting(c, t);
        }
        self.switch_to(t);
        Ok(0)
    }

    /// `pct` with `PCT_INTERRUPT`: queues `bits` for slot `t`, wakes it if
    /// it sleeps, and, if it can run (and the sender does not just `queue`),
    /// delivers them as an upcall when its handler is free and gives it the
    /// rest of the slice.
    fn pct_interrupt(&mut self, t: Slot, cred: u64, bits: u64, queue: bool) -> Result<u64, Error> {
        if bits == 0 {
            return Err(Error::BadLength);
        }
        let e = &self.envs[t];
        if e.exc.save == 0 || e.state() == State::Exited {
            return Err(Error::BadState);
        }
        let guard = e.pct_guard;
        if !guard.is_none() {
            self.mem.caps.check(self.cred(cred)?, guard, Rights::READ)?;
        }
        let from = self.envs[self.current()].id().raw();
        self.queue_interrupt(t, bits, from);
        if queue || self.envs[t].state() != State::Runnable {
            return Ok(0);
        }
        let delivered = self.deliver_interrupts(t);
        self.switch_to(t);
        Ok(delivered as u64)
    }

    /// The parent of slot `s` (the caller), if it takes interrupts and its
    /// guard admits the caller's credential `cred` (for `exit`'s
    /// `parent_bits`).
    pub fn parent_hears(&self, s: Slot, cred: u64) -> Option<Slot> {
        let parent = self.envs[s].parent()?;
        let p = self.env_slot(parent.raw() as u64).ok()?;
        let e = &self.envs[p];
        if e.exc.save == 0 || e.state() == State::Exited {
            return None;
        }
        if !e.pct_guard.is_none() {
            self.mem.caps.check(self.cred(cred).ok()?, e.pct_guard, Rights::READ).ok()?;
        }
        Some(p)
    }

    /// ORs `bits` into slot `t`'s queued interrupts (sent by `from`), and
    /// wakes it if it sleeps (its `sleep` returns 2).
    pub fn queue_interrupt(&mut self, t: Slot, bits: u64, from: u32) {
        let e = &mut self.envs[t];
        e.interrupts |= bits;
        e.interrupt_from = from;
        e.notify |= notify::INTERRUPTS;
        if e.state() == State::Sleeping {
            e.tf.rax = 2;
            self.set_state(t, State::Runnable);
        } else {
            self.publish(t);
        }
    }

    /// Lends the caller's capability `slot` (it needs the grant right) to
    /// slot `s`'s environment: a loan derived from it lands in `s`'s list
    /// (see `Caps::lend`); returns the slot there.
    pub fn grant(&mut self, slot: u64, s: Slot) -> Result<u64, Error> {
        let loan = self.mem.caps.lend(self.cred(slot)?)?;
        let s = self.space_owner(s);
        self.envs[s].clist.insert(self.mem.caps, loan).inspect_err(|_| {
            let _ = self.mem.caps.revoke(loan);
        })
    }

    /// Slot `s` is going away: environments awaiting its reply get
    /// `BadEnv` as the result of their transfer and run again (a held one
    /// when released).
    pub fn end_waits_on(&mut self, s: Slot) {
        while let Some(w) = self.envs.waiter_on(s) {
            self.envs[w].tf.rax = Error::BadEnv.as_result() as u64;
            if self.envs[w].state() == State::Stopped {
                self.envs[w].resume_as = State::Runnable;
                self.set_held_wait(w, None);
            } else {
                self.set_state(w, State::Runnable);
            }
        }
    }
}
