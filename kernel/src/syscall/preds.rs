//! Downloaded wakeup predicates (see `predicate.rs`).

use super::Args;
use crate::cap::Rights;
use crate::env::Slot;
use crate::state::Kernel;
use abi::Error;

pub fn pred_install(
    k: &mut Kernel,
    Args([insns, n, regions, nregions, cred, ..]): Args,
) -> Result<u64, Error> {
    let me = k.current();
    k.mem.caps.check(k.cred(cred)?, k.envs[me].guard, Rights::WRITE)?;
    k.pred_install(insns, n, regions, nregions)
}

pub fn pred_free(k: &mut Kernel, Args([id, ..]): Args) -> Result<u64, Error> {
    k.pred_free(id)
}

pub fn sleep(k: &mut Kernel, Args([pred, deadline, ..]): Args) -> Result<u64, Error> {
    k.sleep(pred, deadline)
}

impl Kernel {
    /// `pred_install`: verifies, compiles (or reuses) and installs a
    /// predicate of the caller's over its own memory.
    pub fn pred_install(&mut self, insns: u64, n: u64, regions: u64, nregions: u64) -> Result<u64, Error> {
        use abi::syscall::{Region, PRED_MAX_INSNS, PRED_REGIONS};
        if n == 0 || n > PRED_MAX_INSNS || nregions > PRED_REGIONS as u64 {
            return Err(Error::BadLength);
        }
        let mut descs = [Region::default(); PRED_REGIONS];
        for (i, d) in descs.iter_mut().take(nregions as usize).enumerate() {
            *d = crate::uaccess::read_value(
                self.pml4(),
                regions + (i * core::mem::size_of::<Region>()) as u64,
            )?;
        }
        // A sharer's predicates are its owner's (`aspace.rs`): any thread
        // of the address space may sleep on them.
        self.pred_install_for(self.space_owner(self.current()), None, insns, n, &descs[..nregions as usize])
    }

    /// `Predicates::install` for slot `owner`, the code in the caller's
    /// memory.
    pub fn pred_install_for(
        &mut self,
        owner: Slot,
        want: Option<u64>,
        insns: u64,
        n: u64,
        descs: &[abi::syscall::Region],
    ) -> Result<u64, Error> {
        let caller = self.pml4();
        self.preds.install(&mut self.mem, &mut self.envs, caller, owner, want, insns, n, descs)
    }

    /// Removes predicate `id`, which must belong to the caller.
    pub fn pred_free(&mut self, id: u64) -> Result<u64, Error> {
        let me = self.envs[self.space_owner(self.current())].id().raw();
        self.preds.free(&mut self.envs, &mut self.mem.frames, me, id)
    }

    /// Slot `s`'s first predicate with id `from` or above, with its
    /// instructions: (id, instructions, its regions as `s` named them).
    pub fn pred_of(&self, s: Slot, from: u64) -> Option<(u64, &[u8], &[abi::syscall::Region])> {
        self.preds.of(self.envs[self.space_owner(s)].id().raw(), from)
    }
}
