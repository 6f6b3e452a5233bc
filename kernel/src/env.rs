//! Environments (paper 001 §4.2.2): an address space, saved registers,
//! FPU/SSE state and the entry points for event delivery. Each is charged to
//! its creator; destroying one destroys and reclaims its whole subtree.

use crate::arch::fpu::FpuState;
use crate::arch::gdt::{USER_CS, USER_SS};
use crate::arch::trap::TrapFrame;
use crate::cap::{CList, CapRef, Rights};
use crate::frames::Frame;
use crate::mm::{self, PhysTables};
use crate::pagetable::{self, Tables};
use crate::state::Kernel;
pub use crate::validate::FORCED_FLAGS;
use abi::tables::{env_slot, env_state, frame_state, ENV_SLOTS};
use abi::Error;

/// "No environment" in `Env::waiting_on`, which `pct_fast` reads as a raw
/// `u16` (everywhere else: `Option<Slot>`).
const NONE: u16 = u16::MAX;

/// The address space of an environment that has none (free, or an exited
/// zombie): frame 0 is never a page table (it is reserved below 1 MiB).
const NO_TABLES: Frame = Frame::new(0);

/// An index into the environment table, always below `ENV_SLOTS`: the
/// tables indexed by it need no bounds check.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Slot(u16);

const _: () = assert!(ENV_SLOTS.is_power_of_two() && ENV_SLOTS < NONE as usize);

impl Slot {
    /// The slot at index `i`, if there is one.
    pub fn new(i: usize) -> Option<Slot> {
        (i < ENV_SLOTS).then_some(Slot(i as u16))
    }

    pub fn index(self) -> usize {
        self.0 as usize
    }

    /// Every slot, in order.
    pub fn all() -> impl Iterator<Item = Slot> {
        (0..ENV_SLOTS as u16).map(Slot)
    }
}

/// An environment's id: its slot plus a generation, so an id outlives
/// its environment without ever naming the next one in the slot.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct EnvId(u32);

impl core::fmt::LowerHex for EnvId {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        core::fmt::LowerHex::fmt(&self.0, f)
    }
}

impl EnvId {
    /// The id as user space and the exposed tables see it.
    pub fn raw(self) -> u32 {
        self.0
    }

    /// The slot an environment with this id lives in (if it still does).
    pub fn slot(self) -> Slot {
        Slot(env_slot(self.0) as u16)
    }
}

/// The first environment awaiting slot `s`'s reply: a scan of the raw
/// field (it runs for every environment destroyed).
pub fn waiter_on(envs: &[Env; ENV_SLOTS], s: Slot) -> Option<Slot> {
    envs.iter().position(|e| e.waiting_on == s.0).map(|w| Slot(w as u16))
}

/// Indexing the environment table, and the exposed one, by slot.
macro_rules! index_by_slot {
    ($($t:ty),*) => {$(
        impl core::ops::Index<Slot> for [$t; ENV_SLOTS] {
            type Output = $t;
            fn index(&self, s: Slot) -> &$t {
                &self[s.index() & (ENV_SLOTS - 1)]
            }
        }
        impl core::ops::IndexMut<Slot> for [$t; ENV_SLOTS] {
            fn index_mut(&mut self, s: Slot) -> &mut $t {
                &mut self[s.index() & (ENV_SLOTS - 1)]
            }
        }
    )*};
}
index_by_slot!(Env, abi::tables::EnvInfo);

/// `Env::notify` bits: one byte the scheduler's fast path tests.
pub mod notify {
    /// Start-of-slice upcalls wanted (`slice_upcalls`).
    pub const SLICE_UPCALLS: u8 = 1;
    /// Interrupt bits are queued for delivery.
    pub const INTERRUPTS: u8 = 2;
    /// End-of-slice upcalls wanted too: the abort protocol applies.
    pub const SLICE_ENDS: u8 = 4;

    /// A `slice_upcalls` mode as these bits: 0 none, 1 both ends of each
    /// slice, 2 its start only (`None`: no such mode).
    pub fn of_mode(mode: u64) -> Option<u8> {
        match mode {
            0 => Some(0),
            1 => Some(SLICE_UPCALLS | SLICE_ENDS),
            2 => Some(SLICE_UPCALLS),
            _ => None,
        }
    }

    /// The `slice_upcalls` mode bits `n` hold.
    pub fn mode(n: u8) -> u64 {
        if n & SLICE_ENDS != 0 {
            1
        } else {
            (n & SLICE_UPCALLS != 0) as u64 * 2
        }
    }
}

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
    /// Always 0: the interposed view's exception stub reads it in place of
    /// `save`, so an interposed environment's exceptions take the general
    /// path, where its interposer sees them (`interpose.rs`).
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
    use super::Env;
    use core::mem::offset_of;
    pub const ID: usize = offset_of!(Env, id);
    pub const STATE: usize = offset_of!(Env, state);
    pub const WAITING_ON: usize = offset_of!(Env, waiting_on);
    pub const SWITCHED_OUT: usize = offset_of!(Env, switched_out);
}

/// An environment. The fields the exposed table shows (its identity,
/// parent, state, exit code, what it waits on, its published word) are
/// private: they change only through `Kernel` methods here, which publish
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

impl Kernel {
    /// The one way an environment's state changes; the exposed table shows
    /// the change at once. Leaving `Waiting` ends the wait, unless the
    /// environment is held (`Stopped`) in it (`nest.rs`).
    pub fn set_state(&mut self, s: Slot, state: State) {
        let e = &mut self.envs[s];
        e.state = state;
        if state != State::Waiting && state != State::Stopped {
            e.waiting_on = NONE;
        }
        self.publish(s);
    }

    /// Sets whose reply held slot `s` awaits (`None`: it came, or the
    /// wait was dropped).
    pub fn set_held_wait(&mut self, s: Slot, on: Option<Slot>) {
        self.envs[s].waiting_on = on.map_or(NONE, |o| o.0);
        self.publish(s);
    }

    /// Slot `s` waits for slot `on`'s reply.
    pub fn set_waiting(&mut self, s: Slot, on: Slot) {
        self.envs[s].waiting_on = on.0;
        self.set_state(s, State::Waiting);
    }

    /// Sets the word slot `s` shows in the exposed table.
    pub fn set_published(&mut self, s: Slot, word: u64) {
        self.envs[s].published = word;
        self.publish(s);
    }

    /// The live environment with id `id` (0 means the caller).
    pub fn env_slot(&self, id: u64) -> Result<Slot, Error> {
        if id == abi::syscall::ENV_SELF {
            return Ok(self.current);
        }
        let id = EnvId(u32::try_from(id).map_err(|_| Error::BadEnv)?);
        let s = id.slot();
        let e = &self.envs[s];
        if e.id == id && e.state != State::Free {
            Ok(s)
        } else {
            Err(Error::BadEnv)
        }
    }

    /// Creates a stopped environment with an empty address space, charged
    /// to slot `creator` (`None` for the first environment). Its guard is a
    /// capability derived from the creator's, so the creator dominates it.
    pub fn env_create(&mut self, creator: Option<Slot>) -> Result<Slot, Error> {
        self.env_new(creator, false, None)
    }

    /// `env_create`; with `share`, the new environment runs over its
    /// creator's page tables instead of a fresh address space (`aspace.rs`).
    /// With `again`, it takes that id again (`revivable`).
    pub(crate) fn env_new(
        &mut self,
        creator: Option<Slot>,
        share: bool,
        again: Option<EnvId>,
    ) -> Result<Slot, Error> {
        let (s, generation) = match again {
            Some(id) => (id.slot(), self.envs[id.slot()].generation),
            None => {
                // In turn from the last one taken (slot 0 is never used):
                // a slot, and so an id's generation, is reused only after
                // the others, as Linux hands out pids.
                let start = self.slot_next;
                let s = (0..ENV_SLOTS)
                    .filter_map(|i| Slot::new((start + i) % ENV_SLOTS))
                    .find(|&s| s.index() != 0 && self.envs[s].state == State::Free)
                    .ok_or(Error::NoEnvSlots)?;
                self.slot_next = s.index() + 1;
                (s, self.envs[s].generation.wrapping_add(1).max(1))
            }
        };
        let id = id_of(generation, s);
        let guard = match creator {
            None => self.caps.create_root(Rights::ALL)?,
            Some(c) => self.caps.derive(self.envs[c].guard, Rights::ALL)?,
        };
        let pml4 = match creator.filter(|_| share) {
            Some(c) => self.envs[c].pml4,
            None => match self.frames.alloc(None, id.0, frame_state::PAGE_TABLE) {
                Ok(f) => {
                    self.init_tables(f);
                    f
                }
                Err(e) => {
                    let _ = self.caps.revoke(guard);
                    return Err(e);
                }
            },
        };
        let parent = creator.map(|c| self.envs[c].id);
        let limited = creator.is_some_and(|c| self.envs[c].limited);
        let e = &mut self.envs[s];
        *e = Env::EMPTY;
        e.generation = generation;
        e.id = id;
        e.parent = parent;
        e.state = State::Stopped;
        e.pml4 = pml4;
        e.cr3 = pml4.addr();
        e.tf.cs = USER_CS as u64;
        e.tf.ss = USER_SS as u64;
        e.tf.rflags = FORCED_FLAGS;
        e.guard = guard;
        e.limited = limited;
        e.shares = share;
        e.clist.set(abi::syscall::CRED_SELF, guard).expect("slot CRED_SELF exists");
        if let Some(p) = parent.map(EnvId::slot) {
            self.link_child(s, p);
        }
        self.publish(s);
        Ok(s)
    }

    /// A fresh top-level table: the kernel's shared half and the self-map.
    fn init_tables(&mut self, pml4: Frame) {
        let shared = *PhysTables.table(self.kernel_pml4);
        let mut tables = PhysTables;
        let table = tables.table(pml4);
        table.fill(0);
        table[mm::SHARED_SLOTS].copy_from_slice(&shared[mm::SHARED_SLOTS]);
        table[mm::SELF_MAP_SLOT] =
            pagetable::entry(pml4, pagetable::PRESENT | pagetable::USER | pagetable::NO_EXEC);
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
        let e = &self.envs[s];
        let last = id_of(e.generation, s);
        if e.state != State::Free
            || last.0 != raw
            || e.generation == 0
            || e.parent != Some(self.envs[parent].id)
        {
            return Err(Error::BadState);
        }
        Ok(last)
    }

    /// Destroys the subtree rooted at slot `top`. With `exit_code` set, `top`
    /// itself stays as an exited zombie holding the code until its parent
    /// destroys it; everything it held is reclaimed either way.
    pub fn env_destroy(&mut self, top: Slot, exit_code: Option<i32>) {
        // Post-order: always destroy a leaf of the remaining subtree.
        loop {
            let mut s = top;
            while let Some(c) = self.envs[s].first_child {
                s = c;
            }
            if s == top {
                break;
            }
            // An exited descendant gave everything back when it ended.
            if self.envs[s].state != State::Exited {
                self.release(s);
            }
            self.free_slot(s);
        }
        if self.envs[top].state != State::Exited {
            self.release(top);
        }
        match exit_code {
            Some(code) => {
                self.envs[top].exit_code = code;
                self.set_state(top, State::Exited);
            }
            None => self.free_slot(top),
        }
        self.kinfo.free_frames = self.frames.free_count();
    }

    /// Gives back everything slot `s` holds: its address space, its pinned
    /// exception save area and every frame charged to it.
    fn release(&mut self, s: Slot) {
        self.slices_release(s);
        self.end_waits_on(s);
        self.end_event_waits_on(s);
        let id = self.envs[s].id;
        self.preds_release(s);
        let pml4 = self.envs[s].pml4;
        // A sharer's tables are its parent's, torn down with the parent,
        // which outlives it (post-order destruction).
        if !self.envs[s].shares {
            let frames = &mut self.frames;
            pagetable::teardown(
                &mut PhysTables,
                pml4,
                mm::USER_SLOTS,
                &mut |pte| frames.drop_ref(pagetable::frame_of(pte)),
                &mut |_| {},
            );
        }
        self.envs[s].exc.save = 0;
        for f in [self.envs[s].exc_frame.take(), self.envs[s].repo_vector.take()].into_iter().flatten() {
            self.frames.drop_ref(f);
        }
        self.frames.release_owner(id.0);
        self.envs[s].pml4 = NO_TABLES;
    }

    fn free_slot(&mut self, s: Slot) {
        self.unlink_child(s);
        // Its authority ends with it, and so does every capability it
        // derived and handed out, and every loan it held (each loan sits in
        // exactly one list: lending on makes a new one).
        let clist = self.envs[s].clist;
        for c in clist.refs() {
            if self.caps.is_loan(c) {
                let _ = self.caps.revoke(c);
            }
        }
        let _ = self.caps.revoke(self.envs[s].guard);
        let (generation, parent) = (self.envs[s].generation, self.envs[s].parent);
        self.envs[s] = Env::EMPTY;
        // A free slot keeps its last id's generation and parent
        // (`revivable`); nothing else reads a free slot's parent.
        (self.envs[s].generation, self.envs[s].parent) = (generation, parent);
        self.publish(s);
    }

    /// Takes slot `s` out of its parent's list of children.
    fn unlink_child(&mut self, s: Slot) {
        let Some(p) = self.envs[s].parent.map(EnvId::slot) else { return };
        let after = self.envs[s].next_sibling;
        if self.envs[p].first_child == Some(s) {
            self.envs[p].first_child = after;
        } else {
            let mut c = self.envs[p].first_child;
            while let Some(sib) = c.filter(|&sib| self.envs[sib].next_sibling != Some(s)) {
                c = self.envs[sib].next_sibling;
            }
            if let Some(before) = c {
                self.envs[before].next_sibling = after;
            }
        }
    }

    /// Makes slot `s` (with its subtree) a child of slot `to`
    /// (`lifetime.rs` checks that it may).
    pub(crate) fn set_parent(&mut self, s: Slot, to: Slot) {
        self.unlink_child(s);
        self.envs[s].parent = Some(self.envs[to].id);
        self.link_child(s, to);
        self.publish(s);
    }

    /// Puts slot `s` first in slot `p`'s list of children.
    fn link_child(&mut self, s: Slot, p: Slot) {
        self.envs[s].next_sibling = self.envs[p].first_child;
        self.envs[p].first_child = Some(s);
    }

    /// The slot after `s` in a pre-order walk of the subtree rooted at
    /// `top` (`None` when the walk is over).
    pub fn next_in_subtree(&self, top: Slot, s: Slot) -> Option<Slot> {
        if let Some(c) = self.envs[s].first_child {
            return Some(c);
        }
        let mut at = s;
        while at != top {
            if let Some(n) = self.envs[at].next_sibling {
                return Some(n);
            }
            at = self.envs[at].parent?.slot();
        }
        None
    }

    /// Copies slot `s` into the exposed environment table.
    pub fn publish(&mut self, s: Slot) {
        let e = &self.envs[s];
        self.env_info[s] = abi::tables::EnvInfo {
            id: if e.state == State::Free { 0 } else { e.id.0 },
            parent: if e.state == State::Free { 0 } else { e.parent.map_or(0, EnvId::raw) },
            state: e.state as u32,
            exit_code: e.exit_code,
            frames: self.frames.owned_count(e.id.0),
            slices: e.slices,
            waiting_on: if e.waiting_on == NONE { u32::MAX } else { e.waiting_on as u32 },
            interrupts: e.interrupts,
            published: e.published,
            ticks: e.ticks,
            interrupt_from: e.interrupt_from as u64,
        };
    }
}

/// Reached by name from `pct_fast`; everything else goes through the
/// kernel state.
pub static mut ENVS: [Env; ENV_SLOTS] = [Env::EMPTY; ENV_SLOTS];

/// The environment table (called once, at boot).
pub fn table() -> &'static mut [Env; ENV_SLOTS] {
    // SAFETY: handed out once, to the kernel state, which owns it from then.
    unsafe { &mut *(&raw mut ENVS).cast::<[Env; ENV_SLOTS]>() }
}

/// The id slot `s` has in `generation` (one of generation 1 if that would
/// be 0 or name another slot, after the generation wraps).
fn id_of(generation: u32, s: Slot) -> EnvId {
    let raw = generation.wrapping_mul(ENV_SLOTS as u32).wrapping_add(s.0 as u32);
    EnvId(if raw == 0 || env_slot(raw) != s.index() { s.0 as u32 + ENV_SLOTS as u32 } else { raw })
}
