//! Hierarchical resource limits (principle 7; paper 003 §3.1.1): a
//! parent caps the frames and time slices a whole subtree holds. Every
//! place that charges a frame or a slice to an environment asks
//! `within_limits` first, before changing anything, so a subtree cannot
//! exceed a limit whatever it does (allocate frames, make page tables by
//! mapping, create descendants, take slices). Environments with no limit
//! above them (`Env::limited` false) pay one test.

use crate::env::{EnvId, Slot};
use crate::state::Kernel;
use abi::syscall::NO_LIMIT;
use abi::Error;

impl Kernel {
    /// Whether slot `s` may be charged `frames` more frames and `slices`
    /// more slices under its own limits and every ancestor's.
    pub fn within_limits(&self, s: Slot, frames: u64, slices: u64) -> Result<(), Error> {
        if !self.envs[s].limited {
            return Ok(());
        }
        let mut at = Some(s);
        while let Some(a) = at {
            let e = &self.envs[a];
            let (fq, sq) = (e.frame_quota, e.slice_quota);
            if frames > 0
                && fq != NO_LIMIT
                && self.subtree_sum(a, |k, x| k.mem.frames.owned_count(k.envs[x].id().raw())) + frames > fq
            {
                return Err(Error::OverQuota);
            }
            if slices > 0
                && sq != NO_LIMIT
                && self.subtree_sum(a, |k, x| k.envs[x].slices as u64) + slices > sq
            {
                return Err(Error::OverQuota);
            }
            at = e.parent().map(EnvId::slot);
        }
        Ok(())
    }

    /// `f` summed over the subtree rooted at `top`.
    fn subtree_sum(&self, top: Slot, f: impl Fn(&Kernel, Slot) -> u64) -> u64 {
        let mut sum = 0;
        let mut at = Some(top);
        while let Some(s) = at {
            sum += f(self, s);
            at = self.next_in_subtree(top, s);
        }
        sum
    }

    /// `env_limit`: caps slot `top`'s subtree; its members (and those
    /// created later, see `env_create`) check their ancestors' limits.
    pub fn set_limits(&mut self, top: Slot, frames: u64, slices: u64) {
        (self.envs[top].frame_quota, self.envs[top].slice_quota) = (frames, slices);
        let mut at = Some(top);
        while let Some(s) = at {
            self.envs[s].limited = true;
            at = self.next_in_subtree(top, s);
        }
    }
}
