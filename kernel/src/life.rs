//! An environment's life as the whole kernel sees it: creation charges it
//! to its creator (a guard derived from the creator's, a page table);
//! destruction takes its whole subtree, post-order, and gives back
//! everything each member held — slices, waits, predicates, page tables,
//! pinned frames, capabilities (paper 001 §4.2.2).

use crate::arch::gdt::{USER_CS, USER_SS};
use crate::cap::Rights;
use crate::env::{id_of, EnvId, Slot, State, NO_TABLES};
use crate::frames::Frame;
use crate::mm::{self, PhysTables};
use crate::pagetable::{self, Tables};
use crate::state::Kernel;
use crate::validate::FORCED_FLAGS;
use abi::tables::frame_state;
use abi::Error;

impl Kernel {
    /// Creates a stopped environment with an empty address space, charged
    /// to slot `creator` (`None` for the first environment). Its guard is a
    /// capability derived from the creator's, so the creator dominates it.
    pub fn env_create(&mut self, creator: Option<Slot>) -> Result<Slot, Error> {
        self.env_new(creator, false, None)
    }

    /// `env_create`; with `share`, the new environment runs over its
    /// creator's page tables instead of a fresh address space (`aspace.rs`).
    /// With `again`, it takes that id again (`Envs::revivable`).
    pub(crate) fn env_new(
        &mut self,
        creator: Option<Slot>,
        share: bool,
        again: Option<EnvId>,
    ) -> Result<Slot, Error> {
        let (s, generation) = self.envs.vacancy(again)?;
        let caps = &mut self.mem.caps;
        let guard = match creator {
            None => caps.create_root(Rights::ALL)?,
            Some(c) => caps.derive(self.envs[c].guard, Rights::ALL)?,
        };
        let pml4 = match creator.filter(|_| share) {
            Some(c) => self.envs[c].pml4,
            // Charged to the id the slot is about to get.
            None => match self.mem.frames.alloc(None, id_of(generation, s).raw(), frame_state::PAGE_TABLE) {
                Ok(f) => {
                    self.init_tables(f);
                    f
                }
                Err(e) => {
                    let _ = self.mem.caps.revoke(guard);
                    return Err(e);
                }
            },
        };
        self.envs.install(s, generation, creator, pml4, guard, &self.mem.frames);
        self.idents.inherit(s, creator);
        // It runs in its creator's group's slices until it holds some.
        self.sched.groups().join(&mut self.envs, s);
        self.mem.publish_envs(self.envs.used());
        let e = &mut self.envs[s];
        e.tf.cs = USER_CS as u64;
        e.tf.ss = USER_SS as u64;
        e.tf.rflags = FORCED_FLAGS;
        e.shares = share;
        Ok(s)
    }

    /// A fresh top-level table: the kernel's shared half and the self-map.
    fn init_tables(&mut self, pml4: Frame) {
        let shared = *PhysTables.table(self.mem.kernel_pml4());
        let mut tables = PhysTables;
        let table = tables.table(pml4);
        table.fill(0);
        table[mm::SHARED_SLOTS].copy_from_slice(&shared[mm::SHARED_SLOTS]);
        table[mm::SELF_MAP_SLOT] =
            pagetable::entry(pml4, pagetable::PRESENT | pagetable::USER | pagetable::NO_EXEC);
    }

    /// Destroys the subtree rooted at slot `top`. With `exit_code` set, `top`
    /// itself stays as an exited zombie holding the code until its parent
    /// destroys it; everything it held is reclaimed either way.
    pub fn env_destroy(&mut self, top: Slot, exit_code: Option<i32>) {
        // Post-order: always destroy a leaf of the remaining subtree.
        loop {
            let s = self.envs.leaf_below(top);
            if s == top {
                break;
            }
            // An exited descendant gave everything back when it ended.
            if self.envs[s].state() != State::Exited {
                self.release(s);
            }
            self.free_slot(s);
        }
        if self.envs[top].state() != State::Exited {
            self.release(top);
        }
        match exit_code {
            Some(code) => self.envs.set_exited(top, code, &self.mem.frames),
            None => self.free_slot(top),
        }
        self.mem.publish_envs(self.envs.used());
    }

    /// Gives back everything slot `s` holds: its address space, its pinned
    /// exception save area and every frame charged to it.
    fn release(&mut self, s: Slot) {
        self.slices_release(s);
        self.end_waits_on(s);
        self.end_event_waits_on(s);
        let id = self.envs[s].id();
        self.preds.release(s, &mut self.envs, &mut self.mem.frames);
        (crate::hooks::get().released)(&mut self.mem, id.raw());
        let pml4 = self.envs[s].pml4;
        // A sharer's tables are its parent's, torn down with the parent,
        // which outlives it (post-order destruction).
        if !self.envs[s].shares {
            let frames = &mut self.mem.frames;
            pagetable::teardown(&mut PhysTables, pml4, mm::USER_SLOTS, &mut |pte| {
                frames.drop_ref(pagetable::frame_of(pte))
            });
        }
        self.envs[s].exc.save = 0;
        // Its claims go with its save area.
        self.sections.end(s.index());
        for f in [self.envs[s].exc_frame.take(), self.envs[s].repo_vector.take()].into_iter().flatten() {
            self.mem.frames.drop_ref(f);
        }
        self.mem.frames.release_owner(id.raw());
        // Its cached disk blocks stay, unowned; its bindings and locks go.
        if !self.envs[s].shares {
            self.xn.release(&mut self.mem, id.raw());
        }
        self.envs[s].pml4 = NO_TABLES;
        self.sched.groups().leave(&mut self.envs, s);
        // Before the slot's new state is published: a library that sees it
        // ended must also see its frames free (the OOM killer relies on it).
        self.mem.publish_free();
    }

    fn free_slot(&mut self, s: Slot) {
        // Its authority ends with it, and so does every capability it
        // derived and handed out, and every loan it held (each loan sits in
        // exactly one list: lending on makes a new one).
        let clist = self.envs[s].clist;
        for c in clist.refs() {
            if self.mem.caps.is_loan(c) {
                let _ = self.mem.caps.revoke(c);
            }
        }
        let _ = self.mem.caps.revoke(self.envs[s].guard);
        self.envs.vacate(s, &self.mem.frames);
    }
}
