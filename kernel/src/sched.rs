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
use crate::group::Groups;
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
/// address space and its frame made the entry stubs'. One call for both
/// sides, so that the machine swaps the gs bases within one SWAPGS pair.
pub trait Cpu {
    fn switch(table: &mut [Env; ENV_SLOTS], old: Slot, new: Slot);
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
    /// How many slices are owned.
    owned: usize,
    /// The one environment that owns every owned slice, if one does (the
    /// first environment, in a system without slice-holding processes).
    sole: Option<Slot>,
    /// The slot told its slice is over, which must give up the CPU before
    /// the next tick, and its `switched_out` count then.
    grace: Option<(Slot, u32)>,
    /// Who runs in whose slices (`group.rs`).
    groups: &'static mut Groups,
    /// Who gave the rest of this tick's slice away (`yield_to`), to have
    /// it back if the one it went to ends before the tick.
    lender: Option<Slot>,
}

/// Offsets of the fields `pct_fast` (assembly) reads and writes.
pub mod offsets {
    pub const CURRENT: usize = core::mem::offset_of!(super::Sched, current);
}

impl Sched {
    /// No slice owned, slot 0 current and root (boot).
    pub fn new(
        slices: &'static mut SliceVector,
        clock: &'static mut Clock,
        groups: &'static mut Groups,
    ) -> Sched {
        let first = Slot::new(0).expect("slot 0 exists");
        Sched {
            current: first,
            root: first,
            slices,
            clock,
            slice_env: SliceOwners([SliceOwners::FREE; 256]),
            next_used: [NO_SLICE; 256],
            owned: 0,
            sole: None,
            grace: None,
            groups,
            lender: None,
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

    /// `n` more TSC counts halted until a device's interrupt.
    pub fn add_halted(&mut self, n: u64) {
        self.clock.halted_tsc += n;
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

    /// Publishes the wall time at the TSC's zero (boot), computed by `at`
    /// from the TSC's 32.32 nanoseconds-per-count factor.
    pub fn set_wall_epoch(&mut self, at: impl FnOnce(u64) -> u64) {
        self.clock.wall_epoch_ns = at(self.clock.tsc_ns_mult);
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
        self.owned += 1;
        // The positions whose next owned slice is now `p`: back from it to
        // the owned one before (all of them if `p` is the only one).
        self.point_back(p, p as u8);
        self.sole = (envs[s].slices as usize == self.owned).then_some(s);
        envs.publish(s, frames);
        if envs[s].slices == 1 {
            // Its subtree's members run in its slices from now on.
            self.groups.regroup(envs, s);
        }
        Ok(p as u64)
    }

    /// Frees slice `pos`.
    pub fn slice_free(&mut self, envs: &mut Envs, frames: &Frames, pos: usize) {
        let owner = self.slice_env.get(pos);
        self.slice_env.set(pos, None);
        self.slices.owner[pos] = 0;
        if let Some(s) = owner {
            envs[s].slices -= 1;
            self.owned -= 1;
            // The positions whose next owned slice was `pos` now go on to
            // the one after it; with none left, nothing follows anywhere.
            match self.owned {
                0 => self.next_used[..SLICES].fill(NO_SLICE),
                _ => self.point_back(pos, self.next_used[pos]),
            }
            self.sole = self
                .slice_env
                .get(self.next_used[pos] as usize)
                .filter(|&o| envs[o].slices as usize == self.owned);
            envs.publish(s, frames);
            if envs[s].slices == 0 {
                self.groups.regroup(envs, s);
            }
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

    /// Points `next_used` at `to` for the positions before `p`, going back
    /// circularly up to and including the first owned one (every position,
    /// `p` last, if none is): advancing never scans free slices, and a
    /// change of one slice's owner rewrites only the gap before it.
    fn point_back(&mut self, p: usize, to: u8) {
        for i in 1..=SLICES {
            let q = (p + SLICES - i) % SLICES;
            self.next_used[q] = to;
            if self.slice_env.get(q).is_some() {
                return;
            }
        }
    }

    /// `next_used` and `sole` computed afresh (the host tests' reference
    /// for the updates `slice_alloc` and `slice_free` make).
    #[cfg(test)]
    fn relink(&mut self) {
        let mut owners = (0..SLICES).filter_map(|p| self.slice_env.get(p));
        self.sole = owners.next().filter(|&o| owners.all(|x| x == o));
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
    pub fn donee(envs: &Envs, mut s: Slot) -> Option<Slot> {
        for _ in 0..MAX_DONATION_CHAIN {
            match envs[s].waiting_on() {
                Some(on) => s = on,
                None => break,
            }
        }
        (envs[s].state() == State::Runnable).then_some(s)
    }

    /// Slot `s` gives the rest of this slice away.
    #[inline(always)]
    pub fn lend(&mut self, s: Slot) {
        self.lender = Some(s);
    }

    /// Who gave the rest of this slice away, if anyone did since the last
    /// tick; forgotten.
    pub fn take_lender(&mut self) -> Option<Slot> {
        self.lender.take()
    }

    /// Who runs in whose slices.
    pub fn groups(&mut self) -> &mut Groups {
        self.groups
    }

    /// Group `h`'s turn (`None`: the environments without a holder): the
    /// first member from the group's cursor for whom `runner` names an
    /// environment to run (itself, or whom it waits on), which the cursor
    /// then moves past, so members take turns.
    pub fn turn(&mut self, h: Option<Slot>, mut runner: impl FnMut(Slot) -> Option<Slot>) -> Option<Slot> {
        let start = self.groups.first(h)?;
        let mut m = start;
        loop {
            let next = self.groups.next(m);
            if let Some(r) = runner(m) {
                self.groups.set_first(h, next);
                return Some(r);
            }
            m = next;
            if m == start {
                return None;
            }
        }
    }

    /// Makes slot `s` the running environment (`table`: `Envs::table_mut`).
    pub fn switch_to<C: Cpu>(&mut self, table: &mut [Env; ENV_SLOTS], s: Slot) {
        let cur = self.current;
        if s == cur {
            return;
        }
        // Saved even when the old environment just ended: harmless (its slot
        // is reset before reuse) and it keeps the common path branch-free.
        let old = &mut table[cur];
        old.switched_out = old.switched_out.wrapping_add(1);
        C::switch(table, cur, s);
        self.current = s;
    }
}

/// Why a group's turn ran nobody.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Nobody {
    /// Its members sleep, or wait on someone who cannot run: nothing
    /// changes that within one pass over the slices (interrupts are off
    /// and the clock stands still in the kernel).
    Waits,
    /// A penalised member served a slice of its penalty: each of its
    /// group's slices counts one, and a predicate may read the state the
    /// serving changed.
    Served,
}

/// One pass over the owned slices from the current position, as the
/// idle loop makes it when no slice's group could run at once. A group
/// whose turn found its members waiting has its other slices passed over:
/// nothing they wait for changes within the pass, and looking again would
/// evaluate every sleeper's predicate once per slice its holder has (the
/// first environment has all 64). A turn that served a penalty forgets
/// that group: every slice of a penalised member's group counts one.
pub struct Pass {
    p: usize,
    left: usize,
    waits: Option<Slot>,
}

impl Pass {
    pub fn new(k: &Sched) -> Pass {
        Pass { p: k.position(), left: SLICES, waits: None }
    }

    /// The next slice to start and its holder.
    pub fn next(&mut self, k: &Sched) -> Option<(usize, Slot)> {
        while self.left > 0 {
            self.left -= 1;
            self.p = k.next_owned(self.p);
            let holder = k.owner(self.p)?;
            if Some(holder) != self.waits {
                return Some((self.p, holder));
            }
        }
        None
    }

    /// The turn of `holder`'s group ran nobody, for `why`. When that
    /// group waits and holds every owned slice, the pass is over.
    pub fn found(&mut self, k: &Sched, holder: Slot, why: Nobody) {
        self.waits = (why == Nobody::Waits).then_some(holder);
        if self.waits.is_some() && k.sole == self.waits {
            self.left = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::env::fixture::{child, envs, frames};
    use abi::tables::ENV_SLOTS;
    use std::boxed::Box;
    use std::cell::RefCell;
    use std::vec::Vec;

    std::thread_local! {
        /// What the fake processor was asked to do: (left, entered) ids.
        static SWITCHES: RefCell<Vec<(u32, u32)>> = const { RefCell::new(Vec::new()) };
    }

    /// A processor that records each switch instead of making it.
    struct Fake;

    impl Cpu for Fake {
        fn switch(table: &mut [Env; ENV_SLOTS], old: Slot, new: Slot) {
            SWITCHES.with(|s| s.borrow_mut().push((table[old].id().raw(), table[new].id().raw())));
        }
    }

    fn sched() -> Sched {
        let slices = Box::leak(Box::new(SliceVector { position: 0, owner: [0; SLICES] }));
        Sched::new(slices, Box::leak(Box::new(Clock::default())), Box::leak(Box::new(Groups::EMPTY)))
    }

    /// A runnable environment under `parent` in its group, as `env_new`
    /// and `env_run` leave one.
    fn member(k: &mut Sched, envs: &mut Envs, fr: &Frames, parent: Option<Slot>) -> Slot {
        let s = child(envs, fr, parent);
        k.groups().join(envs, s);
        envs.set_state(s, State::Runnable, fr);
        s
    }

    /// One tick as `schedule` spends it: the next owned slice, and its
    /// group's turn among the members `can_run` accepts.
    fn tick(k: &mut Sched, can_run: impl Fn(Slot) -> bool) -> Option<Slot> {
        let mut pass = Pass::new(k);
        while let Some((p, h)) = pass.next(k) {
            match k.turn(Some(h), |m| can_run(m).then_some(m)) {
                Some(r) => {
                    k.set_position(p);
                    return Some(r);
                }
                None => pass.found(k, h, Nobody::Waits),
            }
        }
        None
    }

    fn runnable(envs: &mut Envs, fr: &Frames, n: usize) -> Vec<Slot> {
        (0..n)
            .map(|_| {
                let s = child(envs, fr, None);
                envs.set_state(s, State::Runnable, fr);
                s
            })
            .collect()
    }

    #[test]
    fn each_alloc_and_free_leaves_the_links_a_fresh_count_finds() {
        let (mut e, fr, mut k) = (envs(), frames(), sched());
        let owners = runnable(&mut e, &fr, 3);
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for step in 0..5_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let p = (x % SLICES as u64) as usize;
            match k.owner(p) {
                Some(_) => k.slice_free(&mut e, &fr, p),
                None => {
                    let o = owners[(x >> 8) as usize % owners.len()];
                    k.slice_alloc(&mut e, &fr, o, Some(p as u64)).unwrap();
                }
            }
            let (links, sole) = (k.next_used, k.sole);
            k.relink();
            assert_eq!((links, sole), (k.next_used, k.sole), "step {step}: slice {p}");
        }
    }

    #[test]
    fn slices_are_given_by_position_or_any_and_published() {
        let (mut e, fr, mut k) = (envs(), frames(), sched());
        let [a, b] = runnable(&mut e, &fr, 2)[..] else { unreachable!() };
        assert_eq!(k.slice_alloc(&mut e, &fr, a, Some(5)), Ok(5));
        assert_eq!(k.slice_alloc(&mut e, &fr, b, Some(5)), Err(Error::NoSlice), "taken");
        assert_eq!(k.slice_alloc(&mut e, &fr, b, Some(SLICES as u64)), Err(Error::NoSlice), "out of range");
        assert_eq!(k.slice_alloc(&mut e, &fr, b, None), Ok(0), "the first free one");
        assert_eq!((k.owner(5), k.owner(0)), (Some(a), Some(b)));
        assert_eq!(k.slices.owner[5], e[a].id().raw());
        assert_eq!((e[a].slices, e.as_slice()[a.index()].slices), (1, 1));
        k.slice_free(&mut e, &fr, 5);
        assert_eq!((k.owner(5), k.slices.owner[5], e[a].slices), (None, 0, 0));
    }

    #[test]
    fn owners_take_turns_and_the_fast_path_skips_no_one() {
        let (mut e, fr, mut k) = (envs(), frames(), sched());
        let s = runnable(&mut e, &fr, 3);
        for (i, &o) in s.iter().enumerate() {
            k.slice_alloc(&mut e, &fr, o, Some(10 * i as u64 + 3)).unwrap();
        }
        let mut order = Vec::new();
        for _ in 0..6 {
            let (p, o) = k.next_ready(&e).expect("all runnable");
            k.set_position(p);
            order.push(o);
        }
        assert_eq!(order, [s[0], s[1], s[2], s[0], s[1], s[2]]);
        // An owner that cannot run leaves the choice to the general path.
        e.set_state(s[0], State::Sleeping, &fr);
        assert_eq!(k.next_ready(&e), None);
        let p = k.position();
        assert_eq!(p, 23);
        assert_eq!((k.next_owned(p), k.next_owned(k.next_owned(p))), (3, 13), "circularly");
    }

    #[test]
    fn releasing_a_slot_frees_all_its_slices() {
        let (mut e, fr, mut k) = (envs(), frames(), sched());
        let [a, b] = runnable(&mut e, &fr, 2)[..] else { unreachable!() };
        for p in [1, 7, 40] {
            k.slice_alloc(&mut e, &fr, a, Some(p)).unwrap();
        }
        k.slice_alloc(&mut e, &fr, b, Some(2)).unwrap();
        k.slices_release(&mut e, &fr, a);
        assert_eq!(e[a].slices, 0);
        assert!((0..SLICES).all(|p| k.owner(p) != Some(a)));
        // Only b's slice is left: every position leads to it.
        assert!((0..SLICES).all(|p| k.next_owned(p) == 2));
        k.slices_release(&mut e, &fr, b);
        assert_eq!(k.next_owned(0), NO_SLICE as usize);
        assert_eq!(k.next_ready(&e), None, "nobody owns a slice");
    }

    #[test]
    fn donated_slices_run_the_callee() {
        let (mut e, fr) = (envs(), frames());
        let s = runnable(&mut e, &fr, 10);
        e.set_waiting(s[0], s[1], &fr);
        assert_eq!(Sched::donee(&e, s[0]), Some(s[1]));
        e.set_waiting(s[1], s[2], &fr);
        assert_eq!(Sched::donee(&e, s[0]), Some(s[2]), "transitively");
        e.set_state(s[2], State::Sleeping, &fr);
        assert_eq!(Sched::donee(&e, s[0]), None, "the callee cannot run");
        // A chain longer than MAX_DONATION_CHAIN is not followed to its end.
        for i in 2..9 {
            e.set_waiting(s[i], s[i + 1], &fr);
        }
        assert_eq!(Sched::donee(&e, s[0]), None);
    }

    #[test]
    fn threads_take_turns_in_their_process_slice_and_take_none_from_others() {
        let (mut e, fr, mut k) = (envs(), frames(), sched());
        let root = member(&mut k, &mut e, &fr, None);
        k.slice_alloc(&mut e, &fr, root, Some(0)).unwrap();
        // A process that makes threads until the table is full, and an
        // uninvolved one; each holds one slice.
        let (p, q) = (member(&mut k, &mut e, &fr, Some(root)), member(&mut k, &mut e, &fr, Some(root)));
        k.slice_alloc(&mut e, &fr, p, Some(20)).unwrap();
        k.slice_alloc(&mut e, &fr, q, Some(40)).unwrap();
        let mut threads = Vec::new();
        // (Slot 0 is never used.)
        while (e.used() as usize) < ENV_SLOTS - 1 {
            threads.push(member(&mut k, &mut e, &fr, Some(p)));
        }
        assert_eq!(threads.len(), ENV_SLOTS - 4);
        assert!(threads.iter().all(|&t| k.groups().holder(t) == Some(p)), "no thread took a slice");
        assert_ne!(e[p].notify & crate::env::notify::GROUP, 0, "p's slices leave the fast path");
        assert_eq!(e[q].notify, 0, "q's stay on it");
        // Every thread runs, in turn, once per round of p's group; q never
        // waits more than a round of the three owned slices.
        let mut last_q = 0;
        let mut runs = std::vec![0u32; ENV_SLOTS];
        let rounds = 2;
        let ticks = 3 * (threads.len() + 1) * rounds;
        for t in 1..=ticks {
            let r = tick(&mut k, |_| true).expect("someone runs");
            runs[r.index()] += 1;
            if r == q {
                assert!(t - last_q <= 3, "q waited {} ticks", t - last_q);
                last_q = t;
            }
        }
        assert!(threads.iter().all(|t| runs[t.index()] == rounds as u32), "each thread ran once a round");
        assert_eq!(runs[q.index()], ticks as u32 / 3);
        // A group that cannot run gives its slice to the next one.
        let only_q = |m: Slot| m == q;
        assert_eq!((tick(&mut k, only_q), tick(&mut k, only_q)), (Some(q), Some(q)));
        assert_eq!(tick(&mut k, |_| false), None);
    }

    #[test]
    fn a_member_skipped_in_its_turn_keeps_its_place_and_without_a_holder_the_time_is_spare() {
        let (mut e, fr, mut k) = (envs(), frames(), sched());
        let root = member(&mut k, &mut e, &fr, None);
        let [a, b, c] = [0; 3].map(|_| member(&mut k, &mut e, &fr, Some(root)));
        // Nobody holds a slice: one ring, spare time's.
        let asleep = |m: Slot| m != b;
        assert_eq!(k.turn(None, |m| asleep(m).then_some(m)), Some(root));
        assert_eq!(k.turn(None, |m| asleep(m).then_some(m)), Some(a));
        assert_eq!(k.turn(None, |m| asleep(m).then_some(m)), Some(c), "b sleeps: skipped");
        assert_eq!(k.turn(None, Some), Some(root));
        assert_eq!(k.turn(None, Some), Some(a));
        assert_eq!(k.turn(None, Some), Some(b), "woken: its turn comes in order");
        // The first environment takes a slice: everyone is its group's.
        k.slice_alloc(&mut e, &fr, root, Some(3)).unwrap();
        assert_eq!(k.groups().first(None), None);
        assert_eq!([a, b, c].map(|s| k.groups().holder(s)), [Some(root); 3]);
        k.slice_free(&mut e, &fr, 3);
        assert_eq!(k.groups().holder(a), None, "and back to spare time");
    }

    #[test]
    fn a_pass_looks_at_a_waiting_group_once_and_at_a_penalised_one_every_slice() {
        let (mut e, fr, mut k) = (envs(), frames(), sched());
        // The first environment holds every slice but one; its process
        // sleeps in them. Another group holds slice 40.
        let root = member(&mut k, &mut e, &fr, None);
        let q = member(&mut k, &mut e, &fr, None);
        for p in (0..SLICES).filter(|&p| p != 40) {
            k.slice_alloc(&mut e, &fr, root, Some(p as u64)).unwrap();
        }
        k.slice_alloc(&mut e, &fr, q, Some(40)).unwrap();
        let sleeper = member(&mut k, &mut e, &fr, Some(root));
        // One pass, as `schedule_slow` makes it: each group's turn, every
        // member looked at (a sleeper's predicate evaluated); `why` says
        // what the turn found.
        let pass = |k: &mut Sched, why: &dyn Fn(Slot) -> Nobody| {
            let (mut looked, mut pass, mut slices) = (Vec::new(), Pass::new(k), 0);
            while let Some((_, h)) = pass.next(k) {
                slices += 1;
                let mut found = Nobody::Waits;
                assert_eq!(
                    k.turn(Some(h), |m| {
                        looked.push(m);
                        if why(m) == Nobody::Served {
                            found = Nobody::Served;
                        }
                        None
                    }),
                    None
                );
                pass.found(k, h, found);
            }
            (looked, slices)
        };
        let count = |v: &[Slot], s: Slot| v.iter().filter(|&&m| m == s).count();
        let (looked, _) = pass(&mut k, &|_| Nobody::Waits);
        assert_eq!(count(&looked, sleeper), 2, "once before q's slice, once after it");
        assert_eq!(count(&looked, q), 1);
        // A penalised member's every slice counts: no slice passed over.
        let (looked, slices) = pass(&mut k, &|m| if m == sleeper { Nobody::Served } else { Nobody::Waits });
        assert_eq!((count(&looked, sleeper), slices), (SLICES - 1, SLICES));
        // With every slice the first environment's, a pass that finds its
        // group waiting ends there.
        k.slice_free(&mut e, &fr, 40);
        let (looked, slices) = pass(&mut k, &|_| Nobody::Waits);
        assert_eq!((count(&looked, sleeper), slices), (1, 1));
        k.slice_alloc(&mut e, &fr, q, Some(40)).unwrap();
        assert_eq!(pass(&mut k, &|_| Nobody::Waits).1, 3, "root's first, q's, root's after q's");
    }

    #[test]
    fn a_switch_saves_the_old_loads_the_new_and_counts() {
        let (mut e, fr, mut k) = (envs(), frames(), sched());
        let [a, b] = runnable(&mut e, &fr, 2)[..] else { unreachable!() };
        SWITCHES.with(|s| s.borrow_mut().clear());
        k.switch_to::<Fake>(e.table_mut(), a);
        k.switch_to::<Fake>(e.table_mut(), a);
        k.switch_to::<Fake>(e.table_mut(), b);
        assert_eq!(k.current(), b);
        let (ia, ib) = (e[a].id().raw(), e[b].id().raw());
        // From slot 0 (boot) to a, then a to b; the second switch to a
        // did nothing.
        assert_eq!(SWITCHES.with(|s| s.borrow().clone()), [(0, ia), (ia, ib)]);
        assert_eq!((e[a].switched_out, e[b].switched_out), (1, 0));
    }
}
