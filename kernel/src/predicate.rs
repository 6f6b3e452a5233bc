//! Wakeup predicates (paper 000 §5.1): small downloaded programs over memory
//! an environment may read, which the kernel evaluates when the sleeping
//! environment's slice comes round; it does not run while its predicate is
//! false. Predicates are verified and compiled by the `bpf` crate (see
//! `docs/downloaded-code.md`); identical ones share one compilation, and a
//! library changes a predicate's parameters by writing the memory it reads,
//! with no recompilation (paper 002 §4.6.12).

use crate::env::{Envs, Slot};
use crate::frames::{Frame, Frames};
use crate::memory::Memory;
use crate::mm::{self, PhysTables};
use crate::pagetable::{self, USER};
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

/// The installed predicates (a static, like the environment table), which
/// the kernel state takes once at boot.
pub static TABLE: cell::Once<[Predicate; MAX_PREDICATES]> =
    cell::Once::new([Predicate::FREE; MAX_PREDICATES]);

/// The kernel state's part that holds wakeup predicates.
pub struct Predicates {
    table: &'static mut [Predicate; MAX_PREDICATES],
    compiled: Vec<Compiled>,
}

/// An installed predicate.
#[derive(Clone, Copy)]
pub struct Predicate {
    /// Owner environment id (0: free entry).
    owner: u32,
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

impl Predicates {
    pub fn new(table: &'static mut [Predicate; MAX_PREDICATES]) -> Predicates {
        Predicates { table, compiled: Vec::new() }
    }

    /// Whether predicate `id` exists and is environment `owner`'s.
    pub fn owned_by(&self, id: u64, owner: u32) -> bool {
        usize::try_from(id).ok().and_then(|i| self.table.get(i)).is_some_and(|p| p.owner == owner)
    }

    /// How many predicates belong to environments `gone` says are gone
    /// (the audit).
    pub fn strays(&self, gone: impl Fn(u32) -> bool) -> usize {
        self.table.iter().filter(|p| p.owner != 0 && gone(p.owner)).count()
    }

    /// Installs, for slot `owner`, the predicate of `n` instructions at
    /// `insns` (in the address space of `caller_pml4`) over `descs`
    /// (`owner`'s memory), as id `want` if given (`BadState` if that id
    /// is taken). Verified and compiled (or a compilation reused) before
    /// anything changes.
    #[allow(clippy::too_many_arguments)]
    pub fn install(
        &mut self,
        mem: &mut Memory,
        envs: &mut Envs,
        caller_pml4: Frame,
        owner: Slot,
        want: Option<u64>,
        insns: u64,
        n: u64,
        descs: &[Region],
    ) -> Result<u64, Error> {
        if n == 0 || n > PRED_MAX_INSNS || descs.len() > PRED_REGIONS {
            return Err(Error::BadLength);
        }
        let me = envs[owner].id().raw();
        if envs[owner].predicates as usize >= PREDICATES_PER_ENV {
            return Err(Error::NoMemory);
        }
        let slot = match want {
            None => self.table.iter().position(|p| p.owner == 0).ok_or(Error::NoMemory)?,
            Some(id) => usize::try_from(id)
                .ok()
                .filter(|&i| i < MAX_PREDICATES && self.table[i].owner == 0)
                .ok_or(Error::BadState)?,
        };
        let mut code = alloc::vec![0u8; (n * 8) as usize];
        uaccess::read(caller_pml4, insns, &mut code)?;
        let pml4 = envs[owner].pml4;
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
        if !p.frames[..p.nregions].iter().all(|&f| mem.frames.can_add_refs(f, PRED_REGIONS as u64)) {
            return Err(Error::NoMemory);
        }
        self.compiled.try_reserve(1).map_err(|_| Error::NoMemory)?;
        p.compiled = match self.compiled.iter().position(|c| c.users > 0 && c.key == code) {
            Some(i) => i,
            None => {
                let native = bpf::compile(&verified);
                let addr = mem.code_install(&native)?;
                let c =
                    Compiled { key: code, code: addr, pages: (native.len() as u64).div_ceil(4096), users: 0 };
                match self.compiled.iter().position(|c| c.users == 0) {
                    Some(i) => {
                        mem.code_remove(self.compiled[i].code, self.compiled[i].pages);
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
            mem.frames.add_ref(f)?;
        }
        self.compiled[p.compiled].users += 1;
        envs[owner].predicates += 1;
        self.table[slot] = p;
        Ok(slot as u64)
    }

    /// Environment `owner`'s first predicate with id `from` or above, with
    /// its instructions: (id, instructions, its regions as the owner named
    /// them).
    pub fn of(&self, owner: u32, from: u64) -> Option<(u64, &[u8], &[Region])> {
        let from = usize::try_from(from).ok()?;
        let i = (from..MAX_PREDICATES).find(|&i| self.table[i].owner == owner)?;
        let p = &self.table[i];
        // The compilation's key is the instructions, then a size per region.
        let key = &self.compiled[p.compiled].key;
        Some((i as u64, &key[..key.len() - 4 * p.nregions], &p.descs[..p.nregions]))
    }

    /// Removes predicate `id`, which must belong to environment `owner`.
    pub fn free(&mut self, envs: &mut Envs, frames: &mut Frames, owner: u32, id: u64) -> Result<u64, Error> {
        let i = usize::try_from(id).ok().filter(|&i| i < MAX_PREDICATES).ok_or(Error::BadLength)?;
        if self.table[i].owner != owner {
            return Err(Error::NotPermitted);
        }
        self.remove(envs, frames, i);
        Ok(0)
    }

    fn remove(&mut self, envs: &mut Envs, frames: &mut Frames, i: usize) {
        let p = self.table[i];
        if let Some(owner) = Slot::new(abi::tables::env_slot(p.owner)) {
            let e = &mut envs[owner];
            e.predicates = e.predicates.saturating_sub(1);
        }
        for &f in &p.frames[..p.nregions] {
            frames.drop_ref(f);
        }
        self.compiled[p.compiled].users -= 1;
        self.table[i] = Predicate::FREE;
    }

    /// Removes every predicate of slot `s` (it is going away).
    pub fn release(&mut self, s: Slot, envs: &mut Envs, frames: &mut Frames) {
        if envs[s].predicates == 0 {
            return;
        }
        let id = envs[s].id().raw();
        for i in 0..MAX_PREDICATES {
            if self.table[i].owner == id {
                self.remove(envs, frames, i);
            }
        }
    }

    /// Runs predicate `i` (an id `owned_by` checked, or a sleeper's) for
    /// environment `env` at tick `ticks`.
    pub fn eval(&self, i: usize, ticks: u64, env: u32) -> bool {
        let p = &self.table[i % MAX_PREDICATES];
        let ctx = PredicateContext { ticks, env: env as u64 };
        let regions: [*const u8; PRED_REGIONS] = core::array::from_fn(|r| p.regions[r] as *const u8);
        // SAFETY: the code was produced by `bpf::compile` from a program the
        // verifier accepted for exactly this context size and these region
        // sizes; the regions are pinned frames in the physical window and
        // the context lives on this stack for the call.
        let f: bpf::JitFn = unsafe { core::mem::transmute(self.compiled[p.compiled].code) };
        // SAFETY: as above.
        (unsafe { f((&ctx as *const PredicateContext).cast(), regions.as_ptr(), core::ptr::null(), 0) }) != 0
    }
}
