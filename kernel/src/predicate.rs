//! Wakeup predicates (paper 000 §5.1): small downloaded programs over memory
//! an environment may read, which the kernel evaluates when the sleeping
//! environment's slice comes round; it does not run while its predicate is
//! false. Predicates are verified and compiled by the `bpf` crate (see
//! `docs/downloaded-code.md`); identical ones share one compilation, and a
//! library changes a predicate's parameters by writing the memory it reads,
//! with no recompilation (paper 002 §4.6.12).

use crate::env::{Slot, State};
use crate::frames::Frame;
use crate::mm::{self, PhysTables};
use crate::pagetable::{self, USER};
use crate::state::Kernel;
use crate::uaccess;
use abi::syscall::{PredicateContext, Region, PRED_MAX_INSNS, PRED_REGIONS};
use abi::Error;
use alloc::vec::Vec;

/// Predicates at once (all environments together).
pub const MAX_PREDICATES: usize = 1024;
/// Predicates one environment may hold, so that no environment can take
/// the table from the others (a sleeper without a predicate can only poll).
pub const PREDICATES_PER_ENV: usize = 8;

/// One compilation, shared by identical predicates.
pub struct Compiled {
    /// The instructions and region sizes it was compiled from.
    key: Vec<u8>,
    code: u64,
    pages: u64,
    users: u32,
}

/// The installed predicates (a static, like the environment table).
static mut TABLE: [Predicate; MAX_PREDICATES] = [Predicate::FREE; MAX_PREDICATES];

/// The predicate table (called once, at boot).
pub fn table() -> &'static mut [Predicate; MAX_PREDICATES] {
    // SAFETY: handed out once, to the kernel state, which owns it from then.
    unsafe { &mut *(&raw mut TABLE).cast::<[Predicate; MAX_PREDICATES]>() }
}

/// An installed predicate.
#[derive(Clone, Copy)]
pub struct Predicate {
    /// Owner environment id (0: free entry).
    pub owner: u32,
    compiled: usize,
    /// Kernel addresses of its regions, and the pinned frames under them.
    regions: [u64; PRED_REGIONS],
    frames: [Frame; PRED_REGIONS],
    nregions: usize,
    /// The regions as its owner named them (addresses in its own space), so
    /// a checkpointer can read the predicate back (`env_pred_get`).
    descs: [Region; PRED_REGIONS],
}

impl Predicate {
    pub const FREE: Predicate = Predicate {
        owner: 0,
        compiled: 0,
        regions: [0; PRED_REGIONS],
        frames: [Frame::new(0); PRED_REGIONS],
        nregions: 0,
        descs: [Region { va: 0, len: 0 }; PRED_REGIONS],
    };
}

impl Kernel {
    /// `pred_install`: verifies, compiles (or reuses) and installs a
    /// predicate of the caller's over its own memory.
    pub fn pred_install(&mut self, insns: u64, n: u64, regions: u64, nregions: u64) -> Result<u64, Error> {
        if n == 0 || n > PRED_MAX_INSNS || nregions > PRED_REGIONS as u64 {
            return Err(Error::BadLength);
        }
        let mut descs = [Region::default(); PRED_REGIONS];
        for (i, d) in descs.iter_mut().take(nregions as usize).enumerate() {
            *d = uaccess::read_value(self.pml4(), regions + (i * core::mem::size_of::<Region>()) as u64)?;
        }
        // A sharer's predicates are its owner's (`aspace.rs`): any thread
        // of the address space may sleep on them.
        self.pred_install_for(self.space_owner(self.current), None, insns, n, &descs[..nregions as usize])
    }

    /// Installs, for slot `owner`, the predicate of `n` instructions at
    /// `insns` (the caller's memory) over `descs` (`owner`'s memory), as id
    /// `want` if given (`BadState` if that id is taken).
    pub fn pred_install_for(
        &mut self,
        owner: Slot,
        want: Option<u64>,
        insns: u64,
        n: u64,
        descs: &[Region],
    ) -> Result<u64, Error> {
        if n == 0 || n > PRED_MAX_INSNS || descs.len() > PRED_REGIONS {
            return Err(Error::BadLength);
        }
        let me = self.envs[owner].id().raw();
        if self.envs[owner].predicates as usize >= PREDICATES_PER_ENV {
            return Err(Error::NoMemory);
        }
        let slot = match want {
            None => self.predicates.iter().position(|p| p.owner == 0).ok_or(Error::NoMemory)?,
            Some(id) => usize::try_from(id)
                .ok()
                .filter(|&i| i < MAX_PREDICATES && self.predicates[i].owner == 0)
                .ok_or(Error::BadState)?,
        };
        let mut code = alloc::vec![0u8; (n * 8) as usize];
        uaccess::read(self.pml4(), insns, &mut code)?;
        let pml4 = self.envs[owner].pml4;
        // Each region within one page the owner can read.
        let mut p = Predicate { owner: me, ..Predicate::FREE };
        p.descs[..descs.len()].copy_from_slice(descs);
        let mut sizes = [0u32; PRED_REGIONS];
        for (i, d) in descs.iter().enumerate() {
            if d.len == 0 || d.len > 4096 - d.va % 4096 {
                return Err(Error::BadLength);
            }
            let pte = pagetable::lookup(&mut PhysTables, pml4, d.va & !4095).ok_or(Error::BadPointer)?;
            if pte & USER == 0 {
                return Err(Error::BadPointer);
            }
            p.frames[i] = pagetable::frame_of(pte);
            p.regions[i] = mm::phys::<u8>(p.frames[i].addr() + d.va % 4096) as u64;
            sizes[i] = d.len as u32;
        }
        p.nregions = descs.len();
        let spec = bpf::ProgramSpec::new(core::mem::size_of::<PredicateContext>() as u32)
            .with_regions(&sizes[..descs.len()]);
        let verified = bpf::verify_bytes(&code, &spec).map_err(|r| {
            crate::kprintln!("predicate from env {:#x} rejected: {r}", p.owner);
            Error::BadProgram
        })?;
        for &s in &sizes[..descs.len()] {
            code.extend_from_slice(&s.to_le_bytes());
        }
        // Everything that can fail happens before anything changes: room
        // for one more count on each region's frame and for the
        // compilation, then the code pages (the last step that can fail).
        if !p.frames[..p.nregions].iter().all(|&f| self.frames.can_add_refs(f, PRED_REGIONS as u64)) {
            return Err(Error::NoMemory);
        }
        self.compiled.try_reserve(1).map_err(|_| Error::NoMemory)?;
        p.compiled = match self.compiled.iter().position(|c| c.users > 0 && c.key == code) {
            Some(i) => i,
            None => {
                let native = bpf::compile(&verified);
                let addr = self.code_install(&native)?;
                let c =
                    Compiled { key: code, code: addr, pages: (native.len() as u64).div_ceil(4096), users: 0 };
                match self.compiled.iter().position(|c| c.users == 0) {
                    Some(i) => {
                        self.code_remove(self.compiled[i].code, self.compiled[i].pages);
                        self.compiled[i] = c;
                        i
                    }
                    None => {
                        self.compiled.push(c);
                        self.compiled.len() - 1
                    }
                }
            }
        };
        for &f in &p.frames[..p.nregions] {
            self.frames.add_ref(f)?;
        }
        self.compiled[p.compiled].users += 1;
        self.envs[owner].predicates += 1;
        self.predicates[slot] = p;
        Ok(slot as u64)
    }

    /// Slot `s`'s first predicate with id `from` or above, with its
    /// instructions: (id, instructions, its regions as `s` named them).
    pub fn pred_of(&self, s: Slot, from: u64) -> Option<(u64, &[u8], &[Region])> {
        let me = self.envs[self.space_owner(s)].id().raw();
        let from = usize::try_from(from).ok()?;
        let i = (from..MAX_PREDICATES).find(|&i| self.predicates[i].owner == me)?;
        let p = &self.predicates[i];
        // The compilation's key is the instructions, then a size per region.
        let key = &self.compiled[p.compiled].key;
        Some((i as u64, &key[..key.len() - 4 * p.nregions], &p.descs[..p.nregions]))
    }

    /// Removes predicate `id`, which must belong to the caller.
    pub fn pred_free(&mut self, id: u64) -> Result<u64, Error> {
        let me = self.envs[self.space_owner(self.current)].id().raw();
        let i = usize::try_from(id).ok().filter(|&i| i < MAX_PREDICATES).ok_or(Error::BadLength)?;
        if self.predicates[i].owner != me {
            return Err(Error::NotPermitted);
        }
        self.pred_remove(i);
        Ok(0)
    }

    fn pred_remove(&mut self, i: usize) {
        let p = self.predicates[i];
        if let Some(owner) = Slot::new(abi::tables::env_slot(p.owner)) {
            let e = &mut self.envs[owner];
            e.predicates = e.predicates.saturating_sub(1);
        }
        for &f in &p.frames[..p.nregions] {
            self.frames.drop_ref(f);
        }
        self.compiled[p.compiled].users -= 1;
        self.predicates[i] = Predicate::FREE;
    }

    /// Removes every predicate of slot `s` (it is going away).
    pub fn preds_release(&mut self, s: Slot) {
        if self.envs[s].predicates == 0 {
            return;
        }
        let id = self.envs[s].id().raw();
        for i in 0..MAX_PREDICATES {
            if self.predicates[i].owner == id {
                self.pred_remove(i);
            }
        }
    }

    /// Runs predicate `i` for slot `s`.
    fn pred_eval(&self, i: usize, s: Slot) -> bool {
        let p = &self.predicates[i];
        let ctx = PredicateContext { ticks: self.clock.ticks, env: self.envs[s].id().raw() as u64 };
        let regions: [*const u8; PRED_REGIONS] = core::array::from_fn(|r| p.regions[r] as *const u8);
        // SAFETY: the code was produced by `bpf::compile` from a program the
        // verifier accepted for exactly this context size and these region
        // sizes; the regions are pinned frames in the physical window and
        // the context lives on this stack for the call.
        let f: bpf::JitFn = unsafe { core::mem::transmute(self.compiled[p.compiled].code) };
        // SAFETY: as above.
        (unsafe { f((&ctx as *const PredicateContext).cast(), regions.as_ptr(), core::ptr::null(), 0) }) != 0
    }

    /// `sleep`: returns 1 at once if the predicate holds, 2 if an interrupt
    /// is queued (`PCT_INTERRUPT`), 0 if the deadline has passed; otherwise the caller sleeps (the result arrives when it
    /// wakes, see `wake_if_ready`).
    pub fn sleep(&mut self, id: u64, deadline: u64) -> Result<u64, Error> {
        let c = self.current;
        let i = usize::try_from(id).ok().filter(|&i| i < MAX_PREDICATES).ok_or(Error::BadLength)?;
        if self.predicates[i].owner != self.envs[self.space_owner(c)].id().raw() {
            return Err(Error::NotPermitted);
        }
        if self.pred_eval(i, c) {
            return Ok(1);
        }
        // An interrupt is already queued: it would have woken the sleeper.
        if self.envs[c].interrupts != 0 {
            return Ok(2);
        }
        if deadline != 0 && self.clock.ticks >= deadline {
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

    /// A sleeping slot's slice came round: wake it if its predicate holds
    /// or its deadline passed (the result goes in its `rax`).
    pub fn wake_if_ready(&mut self, s: Slot) -> bool {
        let (i, until) = (self.envs[s].sleep_pred as usize, self.envs[s].sleep_until);
        let result = if until != 0 && self.clock.ticks >= until {
            0
        } else if self.pred_eval(i, s) {
            1
        } else {
            return false;
        };
        self.envs[s].tf.rax = result;
        self.set_state(s, State::Runnable);
        true
    }
}
