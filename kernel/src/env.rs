//! Environments (paper 001 §4.2.2): an address space, saved registers,
//! FPU/SSE state and the entry points for event delivery. Each is charged to
//! its creator; destroying one destroys and reclaims its whole subtree.

use crate::arch::frame::{FpuState, TrapFrame};
use crate::cap::{CList, CapRef};
use crate::frames::{Frame, Frames};
use abi::tables::{env_slot, env_state, EnvInfo, ENV_SLOTS};
use abi::Error;

/// "No environment" in `Env::waiting_on`, which `pct_fast` reads as a raw
/// `u16` (everywhere else: `Option<Slot>`).
const NONE: u16 = u16::MAX;

/// The address space of an environment that has none (free, or an exited
/// zombie): frame 0 is never a page table (it is reserved below 1 MiB).
pub const NO_TABLES: Frame = Frame::new(0);

#[macro_use]
mod id;
pub use id::{id_of, EnvId, Slot};

index_by_slot!(Env, abi::tables::EnvInfo);

/// `Env::notify` bits: one byte the scheduler's fast path tests.
pub mod notify;

/// Where an environment's exceptions go (see `abi::exception`). Read by
/// the exception stub at a fixed offset from the saved registers: keep it
/// right after `Env::tf`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ExcTarget {
    /// Kernel address of the save area (0: no handler).
    pub save: u64,
    pub entry: u64,
    pub stack: u64,
    /// The save area's user address (what `env_state_get` reports).
    pub user_save: u64,
    /// Always 0: the interposed view's exception and reflection stubs read
    /// it in place of `save`, so an interposed environment's exceptions and
    /// reflected calls take the general path, where its interposer sees
    /// them (`interpose.rs`).
    pub no_save: u64,
}

const _: () = assert!(core::mem::offset_of!(Env, exc) == 176);

impl ExcTarget {
    pub const NONE: ExcTarget = ExcTarget { save: 0, entry: 0, stack: 0, user_save: 0, no_save: 0 };
}

/// What an environment is doing; the exposed table shows it as
/// `EnvInfo::state` (`abi::tables::env_state`, the same numbers).
#[repr(u32)]
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum State {
    Free = env_state::FREE,
    /// Created (or stopped), not running.
    Stopped = env_state::STOPPED,
    Runnable = env_state::RUNNABLE,
    /// Ended; a zombie holding its exit code until its parent destroys it.
    Exited = env_state::EXITED,
    /// Runnable but skipping slices (the CPU abort protocol).
    Penalized = env_state::PENALIZED,
    /// Awaiting the reply to a synchronous transfer (`Env::waiting_on`).
    Waiting = env_state::WAITING,
    /// Asleep on a wakeup predicate (`sleep_pred`, `sleep_until`).
    Sleeping = env_state::SLEEPING,
}

/// Offsets of the fields `pct_fast` (assembly) reads and writes: the
/// fields stay private, the layout is named here.
pub mod offsets {
    use super::{Env, Envs};
    use core::mem::offset_of;
    pub const ID: usize = offset_of!(Env, id);
    pub const STATE: usize = offset_of!(Env, state);
    pub const WAITING_ON: usize = offset_of!(Env, waiting_on);
    pub const AWAITED: usize = offset_of!(Env, awaited);
    pub const SWITCHED_OUT: usize = offset_of!(Env, switched_out);
    /// The pointer to the exposed table, in [`Envs`].
    pub const INFO: usize = offset_of!(Envs, info);
}

/// An environment. The fields the exposed table shows (its identity,
/// parent, state, exit code, what it waits on, its published word) are
/// private: they change only through `Envs` methods here, which publish
/// them (principle 6). The rest is the kernel's working state.
#[repr(C, align(64))]
pub struct Env {
    /// Saved user registers. The CPU writes here directly on entry from
    /// user mode (it is the kernel entry stack, see `arch::trap`).
    pub tf: TrapFrame,
    pub exc: ExcTarget,
    /// The frame holding the save area, pinned while registered.
    pub exc_frame: Option<Frame>,
    /// The frame holding its repossession vector, pinned while registered.
    pub repo_vector: Option<Frame>,
    pub fpu: FpuState,
    pub fs_base: u64,
    pub gs_base: u64,
    id: EnvId,
    parent: Option<EnvId>,
    state: State,
    exit_code: i32,
    generation: u32,
    /// Frame of the top-level page table, and its physical address (the
    /// value loaded into CR3 on a switch).
    pub pml4: Frame,
    pub cr3: u64,
    /// The slot whose reply this environment awaits after a synchronous
    /// protected control transfer (`NONE` when not waiting).
    waiting_on: u16,
    /// Some environment has awaited its reply since it was made (never
    /// cleared): only then does its end look for waiters in the whole
    /// table (`Envs::waiter_on`), a scan of 4,096 slots on every fork's
    /// child otherwise.
    awaited: bool,
    /// Number of time slices it owns.
    pub slices: u32,
    /// What the scheduler must do when one of its slices starts
    /// ([`notify`] bits); abort-protocol offences so far; slices still to
    /// skip as a penalty.
    pub notify: u8,
    pub offences: u8,
    pub penalty: u8,
    /// While `SLEEPING`: the predicate it waits on and its deadline tick.
    pub sleep_pred: u16,
    pub sleep_until: u64,
    /// Times the CPU was switched away from it (how the abort protocol sees
    /// that it gave up the CPU, even if it got it straight back).
    pub switched_out: u32,
    /// Where protected control transfers into this environment start, and
    /// the guard a caller's credential must dominate (NONE: anyone).
    pub pct_entry: u64,
    pub pct_stack: u64,
    pub pct_guard: CapRef,
    /// The environment's guard: its root capability, derived from its
    /// creator's (slot `CRED_SELF` of its own list holds it too).
    pub guard: CapRef,
    /// Its capability list: the credentials it can name in calls.
    pub clist: CList,
    /// Interrupt bits sent to it (`PCT_INTERRUPT`) and not yet delivered,
    /// and who sent the last ones.
    pub interrupts: u64,
    pub interrupt_from: u32,
    /// The word it shows in the exposed table (`env_publish`).
    published: u64,
    /// Timer ticks that found it running.
    pub ticks: u64,
    /// Wakeup predicates it has installed: its quota is checked, and its
    /// release scans the predicate table, only by this count.
    pub predicates: u8,
    first_child: Option<Slot>,
    next_sibling: Option<Slot>,
    /// What a held environment (`Stopped` by `env_stop`) does when
    /// released: `Runnable` or `Sleeping` (paper 003 §3.2).
    pub resume_as: State,
    /// Its calls and faults stop for this interposer, the nearest
    /// ancestor that asked (`interpose.rs`).
    pub interposer: Option<EnvId>,
    /// The call it is held on for its interposer, and the address after the
    /// one system call let through (0: none).
    pub event: abi::nest::Event,
    pub bypass: u64,
    /// While it waits for an event of this subtree (`intercept_wait`,
    /// `Waiting` on nobody), and the buffer the event goes to.
    pub event_root: Option<EnvId>,
    pub event_buf: u64,
    /// Limits on what its subtree holds (`limits.rs`), and whether it or
    /// an ancestor has any.
    pub frame_quota: u64,
    pub slice_quota: u64,
    pub limited: bool,
    /// It runs over its parent's page tables (`aspace.rs`): they are not
    /// its own to tear down.
    pub shares: bool,
    /// Interrupt bits its parent asked for when it ends (`lifetime.rs`).
    pub exit_bits: u64,
}

/// The size of an environment. Indexing the table multiplies by it on
/// every measured path; an odd multiple of 64 such as 25 * 64 costs one
/// `imul`, where 24 * 64 cost a `lea` and a shift (one instruction more
/// on `null_syscall`, two on `yield`). Check the cost when it changes.
const ENV_SIZE: usize = 25 * 64;
const _: () = assert!(core::mem::size_of::<Env>() == ENV_SIZE);

impl Env {
    pub fn id(&self) -> EnvId {
        self.id
    }

    /// The parent's id (none for the first environment).
    pub fn parent(&self) -> Option<EnvId> {
        self.parent
    }

    pub fn state(&self) -> State {
        self.state
    }

    /// The slot whose reply it awaits, while `Waiting`.
    pub fn waiting_on(&self) -> Option<Slot> {
        (self.waiting_on != NONE).then_some(Slot(self.waiting_on))
    }

    /// The word it shows in the exposed table.
    pub fn published(&self) -> u64 {
        self.published
    }

    pub const EMPTY: Env = Env {
        tf: TrapFrame {
            r15: 0,
            r14: 0,
            r13: 0,
            r12: 0,
            r11: 0,
            r10: 0,
            r9: 0,
            r8: 0,
            rbp: 0,
            rdi: 0,
            rsi: 0,
            rdx: 0,
            rcx: 0,
            rbx: 0,
            rax: 0,
            vector: 0,
            error: 0,
            rip: 0,
            cs: 0,
            rflags: 0,
            rsp: 0,
            ss: 0,
        },
        exc: ExcTarget::NONE,
        exc_frame: None,
        repo_vector: None,
        fpu: FpuState::INITIAL,
        fs_base: 0,
        gs_base: 0,
        id: EnvId(0),
        parent: None,
        state: State::Free,
        exit_code: 0,
        generation: 0,
        pml4: NO_TABLES,
        cr3: 0,
        waiting_on: NONE,
        awaited: false,
        slices: 0,
        notify: 0,
        offences: 0,
        penalty: 0,
        switched_out: 0,
        sleep_pred: 0,
        sleep_until: 0,
        pct_entry: 0,
        pct_stack: 0,
        pct_guard: CapRef::NONE,
        guard: CapRef::NONE,
        interrupts: 0,
        interrupt_from: 0,
        published: 0,
        ticks: 0,
        predicates: 0,
        clist: CList::EMPTY,
        first_child: None,
        next_sibling: None,
        resume_as: State::Runnable,
        interposer: None,
        event: abi::nest::Event { kind: 0, to: 0, number: 0, args: [0; 6], value: 0 },
        bypass: 0,
        event_root: None,
        event_buf: 0,
        frame_quota: abi::syscall::NO_LIMIT,
        slice_quota: abi::syscall::NO_LIMIT,
        limited: false,
        shares: false,
        exit_bits: 0,
    };
}

/// The environment table and its exposed copy: the kernel state's part
/// that holds environments. Writers of what the exposed table shows go
/// through the methods here, which publish at once (principle 6).
pub struct Envs {
    table: &'static mut [Env; ENV_SLOTS],
    /// The exposed environment table (read-only to user space).
    info: &'static mut [EnvInfo; ENV_SLOTS],
    /// Where the search for a free slot starts: slots are taken in turn,
    /// so an id (and a library's pid) is not reused soon.
    next: usize,
    /// Slots in use (`KernelInfo::envs_used`).
    used: u64,
}

impl core::ops::Index<Slot> for Envs {
    type Output = Env;
    #[inline(always)]
    fn index(&self, s: Slot) -> &Env {
        &self.table[s]
    }
}

impl core::ops::IndexMut<Slot> for Envs {
    #[inline(always)]
    fn index_mut(&mut self, s: Slot) -> &mut Env {
        &mut self.table[s]
    }
}

impl Envs {
    pub fn new(table: &'static mut [Env; ENV_SLOTS], info: &'static mut [EnvInfo; ENV_SLOTS]) -> Envs {
        Envs { table, info, next: 1, used: 0 }
    }

    /// Slots in use, live or exited.
    pub fn used(&self) -> u64 {
        self.used
    }

    /// The table as a slice (indexed with a bounds check, which the null
    /// call prefers to `Slot`'s mask: see `syscall::console::self_id`).
    #[inline(always)]
    pub fn as_slice(&self) -> &[Env] {
        self.table.as_slice()
    }

    /// The table itself, for a caller that indexes it across assembly
    /// that may write memory (the switch's `fxsave`): its address, held in
    /// a local, is not read again from the kernel state after each block.
    #[inline(always)]
    pub fn table_mut(&mut self) -> &mut [Env; ENV_SLOTS] {
        self.table
    }

    /// Every environment, in slot order.
    pub fn iter(&self) -> impl Iterator<Item = &Env> {
        self.table.iter()
    }

    /// The one way an environment's state changes; the exposed table shows
    /// the change at once. Leaving `Waiting` ends the wait, unless the
    /// environment is held (`Stopped`) in it (`nest.rs`).
    pub fn set_state(&mut self, s: Slot, state: State, frames: &Frames) {
        let e = &mut self.table[s];
        e.state = state;
        if state != State::Waiting && state != State::Stopped {
            e.waiting_on = NONE;
        }
        self.publish(s, frames);
    }

    /// Sets whose reply held slot `s` awaits (`None`: it came, or the
    /// wait was dropped).
    pub fn set_held_wait(&mut self, s: Slot, on: Option<Slot>, frames: &Frames) {
        if let Some(o) = on {
            self.table[o].awaited = true;
        }
        self.table[s].waiting_on = on.map_or(NONE, |o| o.0);
        self.publish(s, frames);
    }

    /// Slot `s` waits for slot `on`'s reply.
    pub fn set_waiting(&mut self, s: Slot, on: Slot, frames: &Frames) {
        self.table[on].awaited = true;
        self.table[s].waiting_on = on.0;
        self.set_state(s, State::Waiting, frames);
    }

    /// Sets the word slot `s` shows in the exposed table.
    pub fn set_published(&mut self, s: Slot, word: u64, frames: &Frames) {
        self.table[s].published = word;
        self.publish(s, frames);
    }

    /// Shows slot `s`'s CPU time (the tick's one change, published alone).
    pub fn publish_ticks(&mut self, s: Slot) {
        self.info[s].ticks = self.table[s].ticks;
    }

    /// The slot environment id `id` names, and its state there (`Free`
    /// for an id of an environment that has gone).
    #[inline]
    fn named(&self, id: u64) -> Option<(Slot, State)> {
        let id = EnvId(u32::try_from(id).ok()?);
        let s = id.slot();
        let e = &self.table[s];
        Some((s, if e.id == id { e.state } else { State::Free }))
    }

    /// The live environment with id `id`.
    pub fn live(&self, id: u64) -> Result<Slot, Error> {
        match self.named(id) {
            Some((s, state)) if state != State::Free => Ok(s),
            _ => Err(Error::BadEnv),
        }
    }

    /// The environment with id `id` if it is runnable: one look for the
    /// directed yield's common case.
    #[inline]
    pub fn runnable(&self, id: u64) -> Option<Slot> {
        self.named(id).and_then(|(s, state)| (state == State::Runnable).then_some(s))
    }

    /// The first environment awaiting slot `s`'s reply: a scan of the raw
    /// field (it runs for every environment destroyed that was ever
    /// awaited).
    pub fn waiter_on(&self, s: Slot) -> Option<Slot> {
        if !self.table[s].awaited {
            return None;
        }
        self.table.iter().position(|e| e.waiting_on == s.0).map(|w| Slot(w as u16))
    }

    /// A slot for a new environment and the generation its id will have:
    /// with `again`, that id's slot (checked by `revivable`), otherwise
    /// the next free one after the last taken (slot 0 is never used): a
    /// slot, and so an id's generation, is reused only after the others,
    /// as Linux hands out pids.
    pub fn vacancy(&mut self, again: Option<EnvId>) -> Result<(Slot, u32), Error> {
        match again {
            Some(id) => Ok((id.slot(), self.table[id.slot()].generation)),
            None => {
                let start = self.next;
                let s = (0..ENV_SLOTS)
                    .filter_map(|i| Slot::new((start + i) % ENV_SLOTS))
                    .find(|&s| s.index() != 0 && self.table[s].state == State::Free)
                    .ok_or(Error::NoEnvSlots)?;
                self.next = s.index() + 1;
                Ok((s, self.table[s].generation.wrapping_add(1).max(1)))
            }
        }
    }

    /// Fills vacant slot `s` (from `vacancy`) with a stopped environment:
    /// id from `generation`, a child of `parent` (linked into its
    /// children), over `pml4`, guarded by `guard`. Its registers are left
    /// for the caller to set.
    pub fn install(
        &mut self,
        s: Slot,
        generation: u32,
        parent: Option<Slot>,
        pml4: Frame,
        guard: CapRef,
        frames: &Frames,
    ) -> EnvId {
        let id = id_of(generation, s);
        let parent_id = parent.map(|p| self.table[p].id);
        let limited = parent.is_some_and(|p| self.table[p].limited);
        self.used += 1;
        let e = &mut self.table[s];
        *e = Env::EMPTY;
        e.generation = generation;
        e.id = id;
        e.parent = parent_id;
        e.state = State::Stopped;
        e.pml4 = pml4;
        e.cr3 = pml4.addr();
        e.guard = guard;
        e.limited = limited;
        e.clist.set(abi::syscall::CRED_SELF, guard).expect("slot CRED_SELF exists");
        if let Some(p) = parent {
            self.link_child(s, p);
        }
        self.publish(s, frames);
        id
    }

    /// Whether `id` may be taken again by a new child of slot `parent`: it
    /// was the last id of a slot that is free now, and its environment was
    /// a child of an environment with `parent`'s id (the same one, or one
    /// that took that id again by this rule). Whoever creates under
    /// `parent` could so have held the environment that had the id, so
    /// taking it again names nothing outside the creator's control: a saved
    /// subtree restored under the same ids keeps the ids held in its
    /// memory (`docs/nesting.md`, the checkpointer).
    pub fn revivable(&self, id: u64, parent: Slot) -> Result<EnvId, Error> {
        let raw = u32::try_from(id).map_err(|_| Error::BadEnv)?;
        let s = Slot::new(env_slot(raw)).filter(|s| s.index() != 0).ok_or(Error::BadEnv)?;
        let e = &self.table[s];
        let last = id_of(e.generation, s);
        if e.state != State::Free
            || last.0 != raw
            || e.generation == 0
            || e.parent != Some(self.table[parent].id)
        {
            return Err(Error::BadState);
        }
        Ok(last)
    }

    /// A leaf of the subtree rooted at `top` (`top` itself when it has no
    /// children): post-order destruction takes these one by one.
    pub fn leaf_below(&self, top: Slot) -> Slot {
        let mut s = top;
        while let Some(c) = self.table[s].first_child {
            s = c;
        }
        s
    }

    /// Ends slot `s` for good: unlinks it from its parent's children and
    /// empties it, keeping its last id's generation and parent
    /// (`revivable`; nothing else reads a free slot's parent). Its
    /// capabilities are the caller's to revoke first.
    pub fn vacate(&mut self, s: Slot, frames: &Frames) {
        self.unlink_child(s);
        self.used -= 1;
        let (generation, parent) = (self.table[s].generation, self.table[s].parent);
        self.table[s] = Env::EMPTY;
        (self.table[s].generation, self.table[s].parent) = (generation, parent);
        self.publish(s, frames);
    }

    /// Takes slot `s` out of its parent's list of children.
    fn unlink_child(&mut self, s: Slot) {
        let Some(p) = self.table[s].parent.map(EnvId::slot) else { return };
        let after = self.table[s].next_sibling;
        if self.table[p].first_child == Some(s) {
            self.table[p].first_child = after;
        } else {
            let mut c = self.table[p].first_child;
            while let Some(sib) = c.filter(|&sib| self.table[sib].next_sibling != Some(s)) {
                c = self.table[sib].next_sibling;
            }
            if let Some(before) = c {
                self.table[before].next_sibling = after;
            }
        }
    }

    /// Puts slot `s` first in slot `p`'s list of children.
    fn link_child(&mut self, s: Slot, p: Slot) {
        self.table[s].next_sibling = self.table[p].first_child;
        self.table[p].first_child = Some(s);
    }

    /// Makes slot `s` (with its subtree) a child of slot `to`
    /// (`lifetime.rs` checks that it may).
    pub fn set_parent(&mut self, s: Slot, to: Slot, frames: &Frames) {
        self.unlink_child(s);
        self.table[s].parent = Some(self.table[to].id);
        self.link_child(s, to);
        self.publish(s, frames);
    }

    /// Slot `s` ends with `code` and stays as an exited zombie until its
    /// parent destroys it.
    pub fn set_exited(&mut self, s: Slot, code: i32, frames: &Frames) {
        self.table[s].exit_code = code;
        self.set_state(s, State::Exited, frames);
    }

    /// The slot after `s` in a pre-order walk of the subtree rooted at
    /// `top` (`None` when the walk is over).
    pub fn next_in_subtree(&self, top: Slot, s: Slot) -> Option<Slot> {
        if let Some(c) = self.table[s].first_child {
            return Some(c);
        }
        let mut at = s;
        while at != top {
            if let Some(n) = self.table[at].next_sibling {
                return Some(n);
            }
            at = self.table[at].parent?.slot();
        }
        None
    }

    /// Copies slot `s` into the exposed environment table.
    pub fn publish(&mut self, s: Slot, frames: &Frames) {
        let e = &self.table[s];
        self.info[s] = EnvInfo {
            id: if e.state == State::Free { 0 } else { e.id.0 },
            parent: if e.state == State::Free { 0 } else { e.parent.map_or(0, EnvId::raw) },
            state: e.state as u32,
            exit_code: e.exit_code,
            frames: frames.owned_count(e.id.0),
            slices: e.slices,
            waiting_on: if e.waiting_on == NONE { u32::MAX } else { e.waiting_on as u32 },
            interrupts: e.interrupts,
            published: e.published,
            ticks: e.ticks,
            interrupt_from: e.interrupt_from as u64,
        };
    }
}

/// The environment table: reached by name from `pct_fast` (assembly, the
/// value is at the static's address); everything else goes through the
/// kernel state, which takes it once at boot.
pub static ENVS: cell::Once<[Env; ENV_SLOTS]> = cell::Once::new([Env::EMPTY; ENV_SLOTS]);

/// A table to test on the host: leaked, like the kernel's statics.
#[cfg(test)]
pub mod fixture {
    extern crate std;
    use super::{Env, Envs, Slot};
    use crate::cap::CapRef;
    use crate::frames::{Frame, Frames, Link};
    use abi::tables::{EnvInfo, FrameInfo, ENV_SLOTS};
    use std::boxed::Box;
    use std::vec::Vec;

    pub fn envs() -> Envs {
        let table: Box<[Env]> = (0..ENV_SLOTS).map(|_| Env::EMPTY).collect::<Vec<_>>().into_boxed_slice();
        let table: Box<[Env; ENV_SLOTS]> = table.try_into().ok().expect("ENV_SLOTS entries");
        let info = Box::new([EnvInfo::default(); ENV_SLOTS]);
        Envs::new(Box::leak(table), Box::leak(info))
    }

    pub fn frames() -> Frames<'static> {
        let info = Box::leak(std::vec![FrameInfo::default(); 64].into_boxed_slice());
        let links = Box::leak(std::vec![Link::UNLINKED; 64].into_boxed_slice());
        Frames::new(info, links)
    }

    /// A new environment under `parent`, as `env_new` makes one.
    pub fn child(envs: &mut Envs, frames: &Frames, parent: Option<Slot>) -> Slot {
        let (s, generation) = envs.vacancy(None).expect("a free slot");
        envs.install(s, generation, parent, Frame::new(9), CapRef::NONE, frames);
        s
    }
}

#[cfg(test)]
mod tests {
    use super::fixture::{child, envs, frames};
    use super::*;

    #[test]
    fn ids_name_one_life_of_a_slot() {
        let (mut t, fr) = (envs(), frames());
        let a = child(&mut t, &fr, None);
        assert_eq!(a.index(), 1, "slot 0 is never handed out");
        let id = t[a].id();
        assert_eq!(t.live(id.raw() as u64), Ok(a));
        assert_eq!(t.info[a].id, id.raw());
        assert_eq!(t.info[a].state, env_state::STOPPED);
        assert_eq!(t.used(), 1);
        t.vacate(a, &fr);
        assert_eq!(t.used(), 0, "slots in use are counted");
        assert_eq!(t.live(id.raw() as u64), Err(Error::BadEnv), "a dead id names nothing");
        assert_eq!(t.info[a].id, 0);
        // Slots are taken in turn: a freed one only after a round.
        let mut round = Vec::new();
        for i in 2..ENV_SLOTS {
            let s = child(&mut t, &fr, None);
            assert_eq!(s.index(), i, "in turn, not the lowest free");
            round.push(s);
        }
        let b = child(&mut t, &fr, None);
        assert_eq!(b, a, "the slot is reused");
        assert_ne!(t[b].id(), id, "under a new id");
        assert_eq!(t.live(id.raw() as u64), Err(Error::BadEnv), "the old id does not name the new one");
        for s in round.into_iter().rev() {
            t.vacate(s, &fr);
        }
        assert_eq!(t.used(), 1, "b alone");
        t.vacate(b, &fr);
        assert_eq!(t.used(), 0);
        assert_eq!(t.live(u64::MAX), Err(Error::BadEnv));
    }

    #[test]
    fn id_of_never_zero_and_always_its_slot() {
        let s = Slot::new(3).unwrap();
        for generation in [0, 1, u32::MAX / ENV_SLOTS as u32, u32::MAX] {
            let id = id_of(generation, s);
            assert_ne!(id.raw(), 0);
            assert_eq!(id.slot(), s);
        }
    }

    #[test]
    fn state_changes_publish_and_end_waits() {
        let (mut t, fr) = (envs(), frames());
        let (a, b) = (child(&mut t, &fr, None), child(&mut t, &fr, None));
        t.set_waiting(a, b, &fr);
        assert_eq!(t[a].waiting_on(), Some(b));
        assert_eq!((t.info[a].state, t.info[a].waiting_on), (env_state::WAITING, b.index() as u32));
        assert_eq!(t.waiter_on(b), Some(a));
        // Held in its wait, it still waits.
        t.set_state(a, State::Stopped, &fr);
        assert_eq!(t[a].waiting_on(), Some(b));
        t.set_state(a, State::Runnable, &fr);
        assert_eq!(t[a].waiting_on(), None);
        assert_eq!((t.info[a].state, t.info[a].waiting_on), (env_state::RUNNABLE, u32::MAX));
        assert_eq!(t.waiter_on(b), None);
        // A held wait set from a saved state (`nest.rs`) is found too.
        let c = child(&mut t, &fr, None);
        t.set_held_wait(a, Some(c), &fr);
        assert_eq!(t.waiter_on(c), Some(a));
        t.set_held_wait(a, None, &fr);
        t.set_published(a, 77, &fr);
        assert_eq!(t.info[a].published, 77);
        t.set_exited(a, -3, &fr);
        assert_eq!((t.info[a].state, t.info[a].exit_code), (env_state::EXITED, -3));
    }

    #[test]
    fn subtree_walk_and_unlinking() {
        let (mut t, fr) = (envs(), frames());
        let root = child(&mut t, &fr, None);
        let a = child(&mut t, &fr, Some(root));
        let b = child(&mut t, &fr, Some(root));
        let a1 = child(&mut t, &fr, Some(a));
        assert_eq!(t.info[a1].parent, t[a].id().raw());
        // Pre-order: children newest first.
        let mut walk = vec![root];
        let mut at = root;
        while let Some(n) = t.next_in_subtree(root, at) {
            walk.push(n);
            at = n;
        }
        assert_eq!(walk, vec![root, b, a, a1]);
        assert_eq!(t.next_in_subtree(a, a1), None, "a walk stays inside its subtree");
        assert_eq!(t.leaf_below(root), b);
        // The middle of a sibling list.
        let c = child(&mut t, &fr, Some(root));
        t.vacate(b, &fr);
        let mut kids = vec![];
        let mut n = t[root].first_child;
        while let Some(k) = n {
            kids.push(k);
            n = t[k].next_sibling;
        }
        assert_eq!(kids, vec![c, a]);
    }

    #[test]
    fn only_the_last_id_under_the_same_parent_revives() {
        let (mut t, fr) = (envs(), frames());
        let (p, q) = (child(&mut t, &fr, None), child(&mut t, &fr, None));
        let c = child(&mut t, &fr, Some(p));
        let id = t[c].id();
        assert_eq!(t.revivable(id.raw() as u64, p), Err(Error::BadState), "still alive");
        t.vacate(c, &fr);
        assert_eq!(t.revivable(id.raw() as u64, q), Err(Error::BadState), "another parent");
        assert_eq!(
            t.revivable(id.raw() as u64 + ENV_SLOTS as u64, p),
            Err(Error::BadState),
            "not its last id"
        );
        assert_eq!(t.revivable(0, p), Err(Error::BadEnv), "slot 0");
        assert_eq!(t.revivable(id.raw() as u64, p), Ok(id));
        let (s, generation) = t.vacancy(Some(id)).unwrap();
        assert_eq!(t.install(s, generation, Some(p), Frame::new(9), CapRef::NONE, &fr), id);
    }

    #[test]
    fn a_full_table_is_refused() {
        let (mut t, fr) = (envs(), frames());
        for _ in 1..ENV_SLOTS {
            child(&mut t, &fr, None);
        }
        assert_eq!(t.vacancy(None).err(), Some(Error::NoEnvSlots));
    }
}
