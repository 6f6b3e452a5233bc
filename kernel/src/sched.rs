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
//!
//! This is the scheduler's part of the kernel state and its decisions,
//! over the environment table and a [`Cpu`] that does the switch (the
//! machine's in `run.rs`, a recording fake in the host tests); `run.rs`
//! puts them together with wakeups, penalties and idling.

use crate::env::{Env, Envs, Slot, State};
use crate::frames::Frames;
use abi::tables::{Clock, SliceVector, ENV_SLOTS, SLICES};
use abi::Error;

/// In `next_used`: no owned slice follows (it indexes a free entry of
/// `slice_env`, so the yield path needs no test for it).
pub const NO_SLICE: u8 = u8::MAX;

/// Which environment owns each slice position. Kept as one `u16` per
/// position (a free one holds a number no slot has), so that the yield path
/// reads an owner with one load and one compare; everything else sees
/// `Option<Slot>`.
struct SliceOwners([u16; 256]);

impl SliceOwners {
    const FREE: u16 = u16::MAX;

    #[inline(always)]
    fn get(&self, p: usize) -> Option<Slot> {
        Slot::new(self.0[p & 255] as usize)
    }

    fn set(&mut self, p: usize, owner: Option<Slot>) {
        self.0[p & 255] = owner.map_or(Self::FREE, |s| s.index() as u16);
    }
}

/// Longest chain of synchronous calls followed to find who runs a slice.
const MAX_DONATION_CHAIN: usize = 8;

/// What a switch between environments does to the processor: the old
/// one's FPU state and TLS bases saved, the new one's loaded with its
/// address space and its frame made the entry stubs'.
pub trait Cpu {
    fn leave(old: &mut Env);
    fn enter(new: &mut Env);
}

/// The scheduler's part of the kernel state.
pub struct Sched {
    /// Slot of the running environment (`pct_fast` writes it too:
    /// `offsets::CURRENT`).
    current: Slot,
    /// Slot of the first environment.
    root: Slot,
    /// The exposed time-slice vector and clock.
    slices: &'static mut SliceVector,
    clock: &'static mut Clock,
    /// Environment slot owning each slice, and for each position the next
    /// owned position after it (`NO_SLICE`: none). Both have 256 entries so
    /// that a `u8` position indexes them without a bounds check on the yield
    /// path; entries past `SLICES` stay free.
    slice_env: SliceOwners,
    next_used: [u8; 256],
    /// The slot told its slice is over, which must give up the CPU before
    /// the next tick, and its `switched_out` count then.
    grace: Option<(Slot, u32)>,
    /// Where the search for an environment to run in spare time starts
    /// next, so such environments take turns.
    spare_next: usize,
}

/// Offsets of the fields `pct_fast` (assembly) reads and writes.
pub mod offsets {
    pub const CURRENT: usize = core::mem::offset_of!(super::Sched, current);
}

impl Sched {
    /// No slice owned, slot 0 current and root (boot).
    pub fn new(slices: &'static mut SliceVector, clock: &'static mut Clock) -> Sched {
        let first = Slot::new(0).expect("slot 0 exists");
        Sched {
            current: first,
            root: first,
            slices,
            clock,
            slice_env: SliceOwners([SliceOwners::FREE; 256]),
            next_used: [NO_SLICE; 256],
            grace: None,
            spare_next: 0,
        }
    }

    #[inline(always)]
    pub fn current(&self) -> Slot {
        self.current
    }

    pub fn root(&self) -> Slot {
        self.root
    }

    /// Names the first environment (boot).
    pub fn set_root(&mut self, s: Slot) {
        self.root = s;
    }

    /// Timer ticks since boot, as the clock page shows them.
    #[inline(always)]
    pub fn ticks(&self) -> u64 {
        self.clock.ticks
    }

    pub fn add_ticks(&mut self, n: u64) {
        self.clock.ticks += n;
    }

    /// Publishes the clock's rates (boot): nanoseconds per tick, and the
    /// TSC's rate with its 32.32 nanoseconds-per-count factor (0: unknown).
    pub fn set_rates(&mut self, tick_ns: u64, tsc_hz: u64) {
        self.clock.tick_ns = tick_ns;
        if tsc_hz != 0 {
            self.clock.tsc_hz = tsc_hz;
            self.clock.tsc_ns_mult = ((1_000_000_000u128 << 32) / tsc_hz as u128) as u64;
        }
    }

    /// Who owns slice `p`.
    pub fn owner(&self, p: usize) -> Option<Slot> {
        self.slice_env.get(p)
    }

    /// The slot in its end-of-slice grace and its `switched_out` count
    /// when told.
    pub fn grace(&self) -> Option<(Slot, u32)> {
        self.grace
    }

    pub fn set_grace(&mut self, g: Option<(Slot, u32)>) {
        self.grace = g;
    }

    /// Gives slice `pos` (or any free one) to slot `s`.
    pub fn slice_alloc(
        &mut self,
        envs: &mut Envs,
        frames: &Frames,
        s: Slot,
        pos: Option<u64>,
    ) -> Result<u64, Error> {
        let p = match pos {
            None => (0..SLICES).find(|&p| self.slice_env.get(p).is_none()).ok_or(Error::NoSlice)?,
            Some(p) if (p as usize) < SLICES && self.slice_env.get(p as usize).is_none() => p as usize,
            Some(_) => return Err(Error::NoSlice),
        };
        self.slice_env.set(p, Some(s));
        self.slices.owner[p] = envs[s].id().raw();
        envs[s].slices += 1;
        self.relink();
        envs.publish(s, frames);
        Ok(p as u64)
    }

    /// Frees slice `pos`.
    pub fn slice_free(&mut self, envs: &mut Envs, frames: &Frames, pos: usize) {
        let owner = self.slice_env.get(pos);
        self.slice_env.set(pos, None);
        self.slices.owner[pos] = 0;
        self.relink();
        if let Some(s) = owner {
            envs[s].slices -= 1;
            envs.publish(s, frames);
        }
    }

    /// Frees every slice slot `s` owns (it is being destroyed).
    pub fn slices_release(&mut self, envs: &mut Envs, frames: &Frames, s: Slot) {
        if envs[s].slices == 0 {
            return;
        }
        for p in 0..SLICES {
            if self.slice_env.get(p) == Some(s) {
                self.slice_free(envs, frames, p);
            }
        }
    }

    /// Recomputes, for every position, the next owned position after it
    /// (circularly), so advancing never scans free slices.
    fn relink(&mut self) {
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

    /// The yield path's question: the next owned slice and its owner, if
    /// that owner can run itself. The slice position lives only in the
    /// exposed vector.
    #[inline(always)]
    pub fn next_ready(&self, envs: &Envs) -> Option<(usize, Slot)> {
        let p = self.next_used[self.slices.position as u8 as usize] as usize;
        match self.slice_env.get(p) {
            Some(s) if envs[s].state() == State::Runnable => Some((p, s)),
            _ => None,
        }
    }

    /// The current slice position.
    pub fn position(&self) -> usize {
        self.slices.position as usize % SLICES
    }

    /// The next owned position after `p`, circularly (`SLICES` or more:
    /// no slice is owned).
    pub fn next_owned(&self, p: usize) -> usize {
        self.next_used[p & 255] as usize
    }

    /// Makes slice `p` the current one.
    #[inline(always)]
    pub fn set_position(&mut self, p: usize) {
        self.slices.position = p as u64;
    }

    /// Who runs for owner `s`: `s`, or the environment its synchronous
    /// calls wait on (transitively) — if that one can run.
    pub fn donee(&self, envs: &Envs, mut s: Slot) -> Option<Slot> {
        for _ in 0..MAX_DONATION_CHAIN {
            match envs[s].waiting_on() {
                Some(on) => s = on,
                None => break,
            }
        }
        (envs[s].state() == State::Runnable).then_some(s)
    }

    /// The next runnable environment that owns no slice, taking turns.
    pub fn spare(&mut self, envs: &Envs) -> Option<Slot> {
        let start = self.spare_next;
        let s = (0..ENV_SLOTS).filter_map(|i| Slot::new((start + i) % ENV_SLOTS)).find(|&s| {
            let e = &envs[s];
            e.state() == State::Runnable && e.slices == 0
        })?;
        self.spare_next = (s.index() + 1) % ENV_SLOTS;
        Some(s)
    }

    /// Makes slot `s` the running environment.
    pub fn switch_to<C: Cpu>(&mut self, envs: &mut Envs, s: Slot) {
        if s == self.current {
            return;
        }
        // Saved even when the old environment just ended: harmless (its slot
        // is reset before reuse) and it keeps the common path branch-free.
        let old = &mut envs[self.current];
        old.switched_out = old.switched_out.wrapping_add(1);
        C::leave(old);
        C::enter(&mut envs[s]);
        self.current = s;
    }
}
