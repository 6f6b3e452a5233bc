//! Full state visibility (paper 003 §3.1.2, §3.1.3; principle 6): a parent holds
//! a child's whole subtree and reads or replaces, as plain data, every
//! piece of a held environment's state that is not already visible in the
//! exposed tables (frames charged to it, slices it owns) or readable by
//! other calls (its memory, through its mappings; its capability list).
//! Nothing it holds is an absolute kernel reference in the record: the
//! PCT guard is a slot of its own list, the sleep predicate one of its own.

use crate::arch::frame::FpuState;
use crate::cap::{CapRef, Rights};
use crate::env::{notify, Slot, State};
use crate::interpose::SYSCALL_LEN;
use crate::mm::PhysTables;
use crate::pagetable;
use crate::predicate::MAX_PREDICATES;
use crate::state::Kernel;
use abi::layout::USER_END;
use abi::nest::{cap_kind, event, CapInfo, EnvState, Mapping, ENV_STATE_VERSION, GUARD_ELSEWHERE};
use abi::syscall::{map, rights, NO_GUARD};
use abi::tables::env_state;
use abi::Error;

/// Lowest canonical address of the upper half: user registers that become
/// addresses (fs/gs bases) must lie below it (`wrfsbase` faults otherwise).
const USER_HALF_END: u64 = 1 << 47;

impl Kernel {
    /// Holds slot `top` and its whole subtree: each runnable, sleeping or
    /// waiting environment in it becomes `Stopped`, remembering what it
    /// did. One waiting for a reply keeps waiting held (the reply lands
    /// but it does not run); one waiting for interposition events
    /// (`intercept_wait`) has its wait end with 0, "none yet".
    pub fn hold_subtree(&mut self, top: Slot) {
        let mut at = Some(top);
        while let Some(s) = at {
            let e = &self.envs[s];
            let resume_as = match e.state() {
                State::Waiting if e.waiting_on().is_none() => {
                    self.end_event_wait(s, 0);
                    Some(State::Runnable)
                }
                State::Runnable | State::Penalized => Some(State::Runnable),
                was @ (State::Sleeping | State::Waiting) => Some(was),
                _ => None,
            };
            if let Some(r) = resume_as {
                self.envs[s].resume_as = r;
                self.set_state(s, State::Stopped);
            }
            at = self.next_in_subtree(top, s);
        }
    }

    /// `env_run`: lets a held (or new) environment go on with what it did.
    /// One held on an interposed call waits for `intercept_answer`.
    pub fn release_held(&mut self, s: Slot) -> Result<(), Error> {
        if self.envs[s].state() != State::Stopped || self.envs[s].event.kind != abi::nest::event::NONE {
            return Err(Error::BadState);
        }
        let to = core::mem::replace(&mut self.envs[s].resume_as, State::Runnable);
        self.set_state(s, to);
        Ok(())
    }

    /// The state record of held slot `s`.
    pub fn state_of(&self, s: Slot) -> EnvState {
        let e = &self.envs[s];
        let guard = if e.pct_guard.is_none() {
            NO_GUARD
        } else {
            (0..crate::cap::CLIST_SLOTS as u64)
                .find(|&i| e.clist.get(i) == Ok(e.pct_guard))
                .unwrap_or(GUARD_ELSEWHERE)
        };
        let (run, waiting_on) = match (e.state(), e.resume_as) {
            (State::Waiting, _) | (State::Stopped, State::Waiting) => {
                (env_state::WAITING, e.waiting_on().map_or(0, |w| self.envs[w].id().raw()))
            }
            (_, State::Sleeping) => (env_state::SLEEPING, 0),
            _ => (env_state::RUNNABLE, 0),
        };
        EnvState {
            version: ENV_STATE_VERSION,
            run,
            regs: crate::trap::regs_of(&e.tf),
            in_syscall: (e.tf.vector == u64::MAX) as u64,
            fs_base: e.fs_base,
            gs_base: e.gs_base,
            exc_entry: e.exc.entry,
            exc_stack: e.exc.stack,
            exc_save: e.exc.user_save,
            pct_entry: e.pct_entry,
            pct_stack: e.pct_stack,
            pct_guard: guard,
            slice_upcalls: notify::mode(e.notify),
            interrupts: e.interrupts,
            interrupt_from: e.interrupt_from as u64,
            sleep_pred: e.sleep_pred as u64,
            sleep_until: e.sleep_until,
            waiting_on: waiting_on as u64,
            published: e.published(),
            event: e.event,
            fxsave: e.fpu.0,
        }
    }

    /// Gives held slot `s` the state `r`, checking every field before
    /// changing anything. Only the exception save area needs a change that
    /// can fail (pinning its frame): it is made first, through the same
    /// code as `set_exception_handler`, and the rest cannot fail after it.
    pub fn set_state_of(&mut self, s: Slot, r: &EnvState) -> Result<(), Error> {
        if r.version != ENV_STATE_VERSION || r.in_syscall > 1 || notify::of_mode(r.slice_upcalls).is_none() {
            return Err(Error::BadFlags);
        }
        if self.envs[s].state() != State::Stopped || self.envs[s].event.kind != abi::nest::event::NONE {
            return Err(Error::BadState);
        }
        if r.regs.rip >= USER_END || r.regs.rsp >= USER_HALF_END {
            return Err(Error::BadRegs);
        }
        let held_call = matches!(r.event.kind, event::SYSCALL | event::FOREIGN);
        if r.event.kind > event::EXCEPTION || (held_call && r.regs.rip < SYSCALL_LEN) {
            return Err(Error::BadFlags);
        }
        if r.fs_base >= USER_HALF_END || r.gs_base >= USER_HALF_END || !fxsave_valid(&r.fxsave) {
            return Err(Error::BadRegs);
        }
        if r.pct_entry >= USER_END || (r.pct_entry != 0 && r.pct_stack >= USER_END) {
            return Err(Error::BadAddress);
        }
        let guard = match r.pct_guard {
            NO_GUARD => CapRef::NONE,
            slot => self.envs[s].clist.get(slot)?,
        };
        let id = self.envs[s].id().raw();
        let mut waits_on = None;
        let resume_as = match r.run {
            env_state::RUNNABLE => State::Runnable,
            env_state::SLEEPING => {
                let p = usize::try_from(r.sleep_pred).ok().filter(|&p| p < MAX_PREDICATES);
                if p.is_none_or(|p| !self.preds.owned_by(p as u64, id)) {
                    return Err(Error::NotPermitted);
                }
                State::Sleeping
            }
            // A wait for a live environment's reply, not its own.
            env_state::WAITING => {
                let on = self
                    .env_slot(r.waiting_on)
                    .ok()
                    .filter(|&w| r.waiting_on != 0 && w != s && self.envs[w].state() != State::Exited);
                waits_on = Some(on.ok_or(Error::BadEnv)?);
                State::Waiting
            }
            _ => return Err(Error::BadState),
        };
        let interrupt_from = u32::try_from(r.interrupt_from).map_err(|_| Error::BadEnv)?;
        // The one fallible change, whole or not at all.
        self.set_exception_target(s, r.exc_entry, r.exc_stack, r.exc_save)?;
        let e = &mut self.envs[s];
        crate::trap::load_regs(&mut e.tf, &r.regs);
        if r.in_syscall == 1 {
            e.tf.vector = u64::MAX;
        }
        // What it was held on for its interposer: a call not yet made is
        // made again when it runs (the interposer, old or new, sees it
        // anew); a result is returned; a fault re-runs its instruction.
        let ev = &r.event;
        match ev.kind {
            event::SYSCALL | event::FOREIGN => {
                let t = &mut e.tf;
                (t.rip, t.rax, t.vector) = (r.regs.rip - SYSCALL_LEN, ev.number, 0);
                [t.rdi, t.rsi, t.rdx, t.r10, t.r8, t.r9] = ev.args;
            }
            event::RESULT => e.tf.rax = ev.value,
            event::EXCEPTION => e.tf.vector = 0,
            _ => {}
        }
        (e.fs_base, e.gs_base) = (r.fs_base, r.gs_base);
        e.fpu = FpuState(r.fxsave);
        (e.pct_entry, e.pct_stack, e.pct_guard) = (r.pct_entry, r.pct_stack, guard);
        let upcalls = notify::of_mode(r.slice_upcalls).unwrap_or(0);
        let queued = if r.interrupts != 0 { notify::INTERRUPTS } else { 0 };
        e.notify = upcalls | queued | (e.notify & notify::GROUP);
        (e.interrupts, e.interrupt_from) = (r.interrupts, interrupt_from);
        (e.sleep_pred, e.sleep_until) = (r.sleep_pred as u16, r.sleep_until);
        e.resume_as = resume_as;
        self.set_held_wait(s, waits_on);
        self.set_published(s, r.published);
        Ok(())
    }

    /// Up to `out.len()` mappings of slot `s` at or above `start`.
    pub fn mappings_of(&self, s: Slot, start: u64, out: &mut [Mapping]) -> usize {
        let mut n = 0;
        pagetable::for_each_leaf(
            &mut PhysTables,
            self.envs[s].pml4,
            crate::mm::USER_SLOTS,
            &mut |va, pte| {
                if va >= start && n < out.len() {
                    out[n] =
                        Mapping { va, frame: pagetable::frame_of(*pte).number(), flags: map::of_pte(*pte) };
                    n += 1;
                }
                n < out.len()
            },
        );
        n
    }

    /// Recreates capability `slot` of slot `from`'s list in the same slot
    /// of held slot `to`'s, relative to `to` (paper 003 §3.1.3): a loan is
    /// lent again from what it stands for; a derived capability is derived,
    /// with the same rights, from `to`'s own root if it came from `from`'s,
    /// or else from what `to` holds in the slot where `from` holds its
    /// parent (copied first). An environment's own root is not copied: the
    /// other has its own.
    pub fn copy_cap(&mut self, from: Slot, slot: u64, to: Slot) -> Result<(), Error> {
        let c = self.envs[from].clist.get(slot)?;
        if c == self.envs[from].guard {
            return Err(Error::NotPermitted);
        }
        if self.envs[to].state() != State::Stopped
            || self.envs[to].clist.get(slot).is_ok_and(|t| self.mem.caps.valid(t))
        {
            return Err(Error::BadState);
        }
        let new = if self.mem.caps.is_loan(c) {
            self.mem.caps.lend(c)?
        } else {
            let rights = self.mem.caps.rights(c).ok_or(Error::NotPermitted)?;
            let parent = self.mem.caps.parent_of(c).ok_or(Error::NotPermitted)?;
            let from_list = &self.envs[from].clist;
            let base = if parent == self.envs[from].guard {
                self.envs[to].guard
            } else {
                let at = (0..crate::cap::CLIST_SLOTS as u64)
                    .find(|&i| from_list.get(i) == Ok(parent))
                    .ok_or(Error::BadState)?;
                self.envs[to].clist.get(at).map_err(|_| Error::BadState)?
            };
            self.mem.caps.derive(base, rights)?
        };
        self.envs[to].clist.set(slot, new)
    }

    /// `env_cap_derive`: in held `to`'s empty `slot`, a capability derived
    /// from its own slot `from` with `rights`.
    pub fn derive_in(&mut self, to: Slot, slot: u64, from: u64, rights: Rights) -> Result<(), Error> {
        if slot >= crate::cap::CLIST_SLOTS as u64 {
            return Err(Error::BadLength);
        }
        let list = &self.envs[to].clist;
        if self.envs[to].state() != State::Stopped || list.get(slot).is_ok_and(|t| self.mem.caps.valid(t)) {
            return Err(Error::BadState);
        }
        let new = self.mem.caps.derive(list.get(from)?, rights)?;
        self.envs[to].clist.set(slot, new)
    }

    /// The live capabilities of slot `s`'s list, at most `out.len()`.
    pub fn caps_of(&self, s: Slot, out: &mut [CapInfo]) -> usize {
        let e = &self.envs[s];
        let mut n = 0;
        for slot in 0..crate::cap::CLIST_SLOTS as u64 {
            let Ok(c) = e.clist.get(slot) else { continue };
            let (Some(r), true) = (self.mem.caps.rights(c), n < out.len()) else { continue };
            let bits = [
                (Rights::READ, rights::READ),
                (Rights::WRITE, rights::WRITE),
                (Rights::GRANT, rights::GRANT),
            ]
            .iter()
            .filter(|(have, _)| r.contains(*have))
            .fold(0, |acc, (_, b)| acc | b);
            let kind = if c == e.guard {
                cap_kind::OWN
            } else if self.mem.caps.is_loan(c) {
                cap_kind::LOAN
            } else {
                cap_kind::DERIVED
            };
            let from = match kind {
                cap_kind::DERIVED => self
                    .mem
                    .caps
                    .parent_of(c)
                    .and_then(|p| (0..crate::cap::CLIST_SLOTS as u64).find(|&i| e.clist.get(i) == Ok(p))),
                _ => None,
            };
            out[n] = CapInfo { slot, rights: bits, kind, from: from.unwrap_or(abi::nest::NO_SLOT) };
            n += 1;
        }
        n
    }
}

/// An FXSAVE image FXRSTOR accepts: MXCSR's reserved bits clear (they
/// would fault in the kernel).
fn fxsave_valid(img: &[u8; 512]) -> bool {
    const MXCSR_MASK: u32 = 0xFFBF; // what every x86-64 CPU accepts
    let mxcsr = u32::from_le_bytes([img[24], img[25], img[26], img[27]]);
    mxcsr & !MXCSR_MASK == 0
}
