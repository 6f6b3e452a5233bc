//! The CPU as a vector of time slices (paper 001 §4.2.1). Environments own
//! slices by position; each timer tick ends a slice and the scheduler runs
//! the owner of the next owned slice, skipping owners that cannot run. A
//! synchronous protected control transfer donates the caller's slices to
//! its callee until the reply (`Env::waiting_on`). Switching keeps the
//! registers in place (they live in the environment's frame) and swaps
//! FPU/SSE state, the TLS bases and the address space.
//!
//! Time that no slice owner can use (every owner is asleep, waiting or
//! gone) is *spare*: rather than idle, the CPU runs, in turn, runnable
//! environments that own no slice (a library OS with more processes than
//! slices), one tick at a time. Owned time is never taken from an owner.

use crate::arch::{cpu, fpu, percpu};
use crate::env::{Slot, State};
use crate::state::Kernel;
use abi::tables::{ENV_SLOTS, SLICES};
use abi::Error;

/// In `next_used`: no owned slice follows (it indexes a free entry of
/// `slice_env`, so the yield path needs no test for it).
pub const NO_SLICE: u8 = u8::MAX;

/// Which environment owns each slice position. Kept as one `u16` per
/// position (a free one holds a number no slot has), so that the yield path
/// reads an owner with one load and one compare; everything else sees
/// `Option<Slot>`.
pub struct SliceOwners([u16; 256]);

impl SliceOwners {
    const FREE: u16 = u16::MAX;

    pub const fn new() -> SliceOwners {
        SliceOwners([Self::FREE; 256])
    }

    #[inline(always)]
    pub fn get(&self, p: usize) -> Option<Slot> {
        Slot::new(self.0[p & 255] as usize)
    }

    pub fn set(&mut self, p: usize, owner: Option<Slot>) {
        self.0[p & 255] = owner.map_or(Self::FREE, |s| s.index() as u16);
    }
}

/// Longest chain of synchronous calls followed to find who runs a slice.
const MAX_DONATION_CHAIN: usize = 8;

impl Kernel {
    /// Gives slice `pos` (or any free one) to slot `s`.
    pub fn slice_alloc(&mut self, s: Slot, pos: Option<u64>) -> Result<u64, Error> {
        let p = match pos {
            None => (0..SLICES).find(|&p| self.slice_env.get(p).is_none()).ok_or(Error::NoSlice)?,
            Some(p) if (p as usize) < SLICES && self.slice_env.get(p as usize).is_none() => p as usize,
            Some(_) => return Err(Error::NoSlice),
        };
        self.slice_env.set(p, Some(s));
        self.slices.owner[p] = self.envs[s].id().raw();
        self.envs[s].slices += 1;
        self.relink_slices();
        self.publish(s);
        Ok(p as u64)
    }

    /// Frees slice `pos`.
    pub fn slice_free(&mut self, pos: usize) {
        let owner = self.slice_env.get(pos);
        self.slice_env.set(pos, None);
        self.slices.owner[pos] = 0;
        self.relink_slices();
        if let Some(s) = owner {
            self.envs[s].slices -= 1;
            self.publish(s);
        }
    }

    /// Frees every slice slot `s` owns (it is being destroyed).
    pub fn slices_release(&mut self, s: Slot) {
        if self.envs[s].slices == 0 {
            return;
        }
        for p in 0..SLICES {
            if self.slice_env.get(p) == Some(s) {
                self.slice_free(p);
            }
        }
    }

    /// Recomputes, for every position, the next owned position after it
    /// (circularly), so advancing never scans free slices.
    fn relink_slices(&mut self) {
        let Some(first) = (0..SLICES).find(|&p| self.slice_env.get(p).is_some()) else {
            self.next_used = [NO_SLICE; 256];
            return;
        };
        let mut next = first;
        for p in (0..SLICES).rev() {
            self.next_used[p] = next as u8;
            if self.slice_env.get(p).is_some() {
                next = p;
            }
        }
    }

    /// Who runs in slice `p`: its owner, or the environment its synchronous
    /// calls wait on (transitively) — if that one can run. A penalised
    /// owner's slice is skipped (and counted).
    fn runner(&mut self, p: usize) -> Option<Slot> {
        let mut s = self.slice_env.get(p)?;
        match self.envs[s].state() {
            State::Penalized => {
                self.serve_penalty(s);
                return None;
            }
            State::Sleeping if !self.wake_if_ready(s) => return None,
            _ => {}
        }
        for _ in 0..MAX_DONATION_CHAIN {
            match self.envs[s].waiting_on() {
                Some(on) => s = on,
                None => break,
            }
        }
        (self.envs[s].state() == State::Runnable).then_some(s)
    }

    /// Ends the current slice: runs whoever runs the next owned slice,
    /// delivering its queued interrupts or telling it its slice starts.
    /// Inlined: it is the body of `yield`, a measured fast path.
    #[inline(always)]
    pub fn schedule(&mut self) {
        // Fast path: the next owned slice's owner can run itself. The slice
        // position lives only in the exposed vector.
        let p = self.next_used[self.slices.position as u8 as usize];
        match self.slice_env.get(p as usize) {
            Some(s) if self.envs[s].state() == State::Runnable => {
                let notify = self.envs[s].notify;
                self.slices.position = p as u64;
                self.switch_to(s);
                if notify != 0 {
                    self.slice_starts(s);
                }
            }
            _ => self.schedule_slow(),
        }
    }

    /// The general case of `schedule`: donated and penalised slices, and
    /// idling when nobody can run.
    #[inline(never)]
    fn schedule_slow(&mut self) {
        loop {
            let mut p = self.slices.position as usize % SLICES;
            for _ in 0..SLICES {
                p = self.next_used[p] as usize;
                if p >= SLICES {
                    break;
                }
                if let Some(s) = self.runner(p) {
                    self.slices.position = p as u64;
                    self.switch_to(s);
                    if self.envs[s].notify != 0 {
                        self.slice_starts(s);
                    }
                    return;
                }
            }
            // Nobody can run in any slice (every owner gave its slices
            // away, sleeps or exited): the time is spare.
            if let Some(s) = self.spare() {
                self.switch_to(s);
                if self.envs[s].notify != 0 {
                    self.slice_starts(s);
                }
                return;
            }
            self.idle();
        }
    }

    /// Waits for an interrupt, then accounts the ticks that passed.
    pub fn idle(&mut self) {
        // A device that interrupted while a driver ran is served at once.
        if !crate::dev::pending() {
            cpu::idle();
        }
        crate::dev::service(self);
        let ticks = percpu::take_idle_ticks();
        self.kinfo.ticks += ticks;
        self.clock.ticks += ticks;
        // Typed input wakes its listener even when everyone sleeps.
        if ticks != 0 {
            self.check_console();
        }
    }

    /// The next runnable environment that owns no slice, taking turns. A
    /// sleeper that owns none is woken here if its predicate holds or its
    /// deadline passed: no slice of its own comes round to look (before,
    /// a process forked once the slices were gone slept for ever).
    fn spare(&mut self) -> Option<Slot> {
        let start = self.spare_next;
        let s = (0..ENV_SLOTS).filter_map(|i| Slot::new((start + i) % ENV_SLOTS)).find(|&s| {
            self.envs[s].slices == 0
                && match self.envs[s].state() {
                    State::Runnable => true,
                    State::Sleeping => self.wake_if_ready(s),
                    _ => false,
                }
        })?;
        self.spare_next = (s.index() + 1) % ENV_SLOTS;
        Some(s)
    }

    /// Makes slot `s` the running environment.
    pub fn switch_to(&mut self, s: Slot) {
        if s == self.current {
            return;
        }
        // Saved even when the old environment just ended: harmless (its slot
        // is reset before reuse) and it keeps the common path branch-free.
        let old = &mut self.envs[self.current];
        old.switched_out = old.switched_out.wrapping_add(1);
        fpu::save(&mut old.fpu);
        (old.fs_base, old.gs_base) = fpu::save_bases();
        let new = &mut self.envs[s];
        fpu::restore(&new.fpu);
        fpu::restore_bases(new.fs_base, new.gs_base);
        // SAFETY: every environment's PML4 shares the kernel's upper half.
        unsafe { cpu::set_cr3(new.cr3) };
        percpu::set_current(&mut new.tf);
        self.current = s;
    }
}
