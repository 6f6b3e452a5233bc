//! Who runs next, as the whole kernel sees it: the scheduler's decisions
//! (`sched.rs`) with what they need from other parts — a sleeper's
//! predicate (paper 000 §5.1), a penalised owner's skipped slice, the
//! upcall that tells an environment its slice starts — and the idle loop.

use crate::arch::{clock, cpu, fpu, percpu};
use crate::env::{notify, Env, Envs, Slot, State};
use crate::frames::Frames;
use crate::predicate::Predicates;
use crate::sched::{Cpu, Nobody, Pass, Sched};
use crate::state::Kernel;
use abi::tables::ENV_SLOTS;
use abi::Error;

/// The processor's side of a switch.
struct Machine;

impl Cpu for Machine {
    #[inline(always)]
    fn switch(table: &mut [Env; ENV_SLOTS], old: Slot, new: Slot) {
        let bases = (table[new].fs_base, table[new].gs_base);
        let out = &mut table[old];
        fpu::save(&mut out.fpu);
        (out.fs_base, out.gs_base) = fpu::swap_bases(bases);
        let new = &mut table[new];
        fpu::restore(&new.fpu);
        // SAFETY: every environment's PML4 shares the kernel's upper half.
        unsafe { cpu::set_cr3(new.cr3) };
        percpu::set_current(&mut new.tf);
    }
}

impl Kernel {
    /// Makes slot `s` the running environment.
    pub fn switch_to(&mut self, s: Slot) {
        self.sched.switch_to::<Machine>(self.envs.table_mut(), s);
    }

    /// Gives slice `pos` (or any free one) to slot `s`.
    pub fn slice_alloc(&mut self, s: Slot, pos: Option<u64>) -> Result<u64, Error> {
        self.sched.slice_alloc(&mut self.envs, &self.mem.frames, s, pos)
    }

    /// Frees slice `pos`.
    pub fn slice_free(&mut self, pos: usize) {
        self.sched.slice_free(&mut self.envs, &self.mem.frames, pos);
    }

    /// Frees every slice slot `s` owns (it is being destroyed).
    pub fn slices_release(&mut self, s: Slot) {
        self.sched.slices_release(&mut self.envs, &self.mem.frames, s);
    }

    /// Ends the current slice: runs whoever runs the next owned slice,
    /// delivering its queued interrupts or telling it its slice starts.
    /// Inlined: it is the body of `yield`, a measured fast path.
    #[inline(always)]
    pub fn schedule(&mut self) {
        // Fast path: the next owned slice's owner can run itself, and
        // nothing needs doing at its start: no upcall, no interrupt, no
        // group sharing the slice (one byte says so).
        match self.sched.next_ready(&self.envs) {
            Some((p, s)) if self.envs[s].notify == 0 => {
                // The table is taken before the position is stored: the
                // compiler cannot tell the two apart, and would load the
                // table again after the store.
                let table = self.envs.table_mut();
                self.sched.set_position(p);
                self.sched.switch_to::<Machine>(table, s);
            }
            Some((p, s)) => {
                // Someone runs: the owner is runnable and in its own group.
                let _ = self.start_slice(p, Some(s));
            }
            None => self.schedule_slow(),
        }
    }

    /// Slice `p`, whose owner is `s` (`None`: spare time), starts: its
    /// group's turn says who runs (`s` itself when alone), who is then
    /// told, if it asked. An error if nobody in the group can run.
    #[inline(never)]
    fn start_slice(&mut self, p: usize, s: Option<Slot>) -> Result<(), Nobody> {
        let r = self.turn(s)?;
        if s.is_some() {
            self.sched.set_position(p);
        }
        self.switch_to(r);
        if self.envs[r].notify & !notify::GROUP != 0 {
            self.slice_starts(r);
        }
        Ok(())
    }

    /// Group `h`'s turn (`group.rs`): the first member, from its cursor,
    /// that can run, or whom its synchronous calls wait on; the cursor
    /// moves past it. Penalised members skip a turn, sleepers are woken if
    /// their predicate holds or their deadline passed.
    fn turn(&mut self, h: Option<Slot>) -> Result<Slot, Nobody> {
        let now = self.sched.ticks();
        let (envs, preds, frames) = (&mut self.envs, &self.preds, &self.mem.frames);
        let mut nobody = Nobody::Waits;
        let r = self.sched.turn(h, |m| match envs[m].state() {
            State::Penalized => {
                serve_penalty(envs, frames, m);
                nobody = Nobody::Served;
                None
            }
            State::Sleeping if !wake_if_ready(envs, preds, frames, now, m) => None,
            _ => Sched::donee(envs, m),
        });
        r.ok_or(nobody)
    }

    /// The general case of `schedule`: donated and penalised slices, and
    /// idling when nobody can run.
    #[inline(never)]
    fn schedule_slow(&mut self) {
        // Since when the processor has been idle, through ticks that did
        // not end the wait (see `idle`).
        let mut idle_since = None;
        loop {
            let mut pass = Pass::new(&self.sched);
            while let Some((p, h)) = pass.next(&self.sched) {
                match self.start_slice(p, Some(h)) {
                    Ok(()) => {
                        self.end_idle(idle_since);
                        return;
                    }
                    Err(why) => pass.found(&self.sched, h, why),
                }
            }
            // No group can run in any slice: the time is spare, for the
            // environments with no holder above them (none while the
            // first environment keeps a slice).
            if self.start_slice(0, None).is_ok() {
                self.end_idle(idle_since);
                return;
            }
            let t0 = idle_since.take().unwrap_or_else(clock::rdtsc);
            idle_since = self.idle(t0);
        }
    }

    /// An idle stretch that began at `since` ends now: someone runs.
    fn end_idle(&mut self, since: Option<u64>) {
        if let Some(t0) = since {
            self.sched.add_halted(clock::rdtsc() - t0);
        }
    }

    /// Waits for an interrupt (unless a device interrupted while a driver
    /// ran: that is served at once), then serves the devices and accounts
    /// the ticks that passed. The idle stretch that began at `t0` is
    /// halted time (`Clock::halted_tsc`) until a device's interrupt ended
    /// the halt, or until the pending interrupt was found — never the
    /// drivers' work that follows; woken by the timer, the processor is
    /// still idle and the stretch goes on (returned).
    fn idle(&mut self, t0: u64) -> Option<u64> {
        let hooks = crate::hooks::get();
        let end = if (hooks.pending)() {
            Some(clock::rdtsc())
        } else {
            cpu::idle();
            Some((hooks.woke)()).filter(|&woke| woke > t0)
        };
        if let Some(end) = end {
            self.sched.add_halted(end - t0);
        }
        (hooks.service)(&mut self.mem);
        let ticks = percpu::take_idle_ticks();
        self.count_ticks(ticks);
        // Typed input wakes its listener even when everyone sleeps.
        if ticks != 0 {
            self.check_console();
        }
        end.is_none().then_some(t0)
    }

    /// `ticks` timer ticks passed: on the information page and the clock.
    pub fn count_ticks(&mut self, ticks: u64) {
        self.mem.add_ticks(ticks);
        self.mem.publish_block(crate::dev::block::counts());
        self.sched.add_ticks(ticks);
        (crate::hooks::get().clock)(self.mem.ticks());
    }

    /// `sleep`: returns 1 at once if the predicate holds, 2 if an interrupt
    /// is queued (`PCT_INTERRUPT`), 0 if the deadline has passed; otherwise
    /// the caller sleeps (the result arrives when it wakes, see
    /// `wake_if_ready`).
    pub fn sleep(&mut self, id: u64, deadline: u64) -> Result<u64, Error> {
        let c = self.current();
        // A sharer's predicates are its owner's (`aspace.rs`).
        if !self.preds.owned_by(id, self.envs[self.space_owner(c)].id().raw()) {
            return Err(if usize::try_from(id).is_ok_and(|i| i < crate::predicate::MAX_PREDICATES) {
                Error::NotPermitted
            } else {
                Error::BadLength
            });
        }
        let i = id as usize;
        if self.preds.eval(i, self.sched.ticks(), self.envs[c].id().raw()) {
            return Ok(1);
        }
        // An interrupt is already queued: it would have woken the sleeper.
        if self.envs[c].interrupts != 0 {
            return Ok(2);
        }
        if deadline != 0 && self.sched.ticks() >= deadline {
            return Ok(0);
        }
        let e = &mut self.envs[c];
        (e.sleep_pred, e.sleep_until) = (i as u16, deadline);
        self.set_state(c, State::Sleeping);
        self.schedule();
        // Woken within this very call (nobody else could run): the result
        // was left in its frame.
        Ok(self.envs[c].tf.rax)
    }

    /// A sleeping slot's turn came round: wake it if its predicate holds
    /// or its deadline passed.
    pub fn wake_if_ready(&mut self, s: Slot) -> bool {
        wake_if_ready(&mut self.envs, &self.preds, &self.mem.frames, self.sched.ticks(), s)
    }
}

/// Wakes sleeping slot `s` if its predicate holds or its deadline passed
/// at tick `now` (the result goes in its `rax`).
fn wake_if_ready(envs: &mut Envs, preds: &Predicates, frames: &Frames, now: u64, s: Slot) -> bool {
    let (i, until) = (envs[s].sleep_pred as usize, envs[s].sleep_until);
    // The predicate may have gone since the sleep began (a sharer's is
    // its owner's, which may free it meanwhile): the sleeper wakes, and
    // its library looks again, rather than running a freed entry.
    let owner = match envs[s].parent() {
        Some(p) if envs[s].shares => p.raw(),
        _ => envs[s].id().raw(),
    };
    let result = if until != 0 && now >= until {
        0
    } else if !preds.owned_by(i as u64, owner) || preds.eval(i, now, envs[s].id().raw()) {
        1
    } else {
        return false;
    };
    envs[s].tf.rax = result;
    envs.set_state(s, State::Runnable, frames);
    true
}

/// A penalised slot's turn came round: it is skipped; the last skipped
/// one restores it.
pub fn serve_penalty(envs: &mut Envs, frames: &Frames, s: Slot) {
    let e = &mut envs[s];
    e.penalty = e.penalty.saturating_sub(1);
    if e.penalty == 0 {
        envs.set_state(s, State::Runnable, frames);
    }
}
