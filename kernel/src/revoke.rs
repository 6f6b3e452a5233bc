//! Visible revocation of memory (paper 001 §3.3). The kernel asks an
//! environment to give frames back and lets it choose which (an upcall);
//! if it does not comply in time, the abort protocol takes frames by force,
//! lists each in the environment's repossession vector and tells it, so the
//! library can fix its mappings. A few frames are guaranteed and never
//! taken.

use crate::env::{Slot, State};
use crate::frames::Frame;
use crate::mm::{self, PhysTables};
use crate::pagetable;
use crate::state::Kernel;
use abi::exception::{vector, Repossessed, RepossessionVector};
use abi::syscall::GUARANTEED_FRAMES;
use abi::tables::frame_state;
use abi::Error;

/// Outstanding requests at once.
pub const MAX_REQUESTS: usize = 8;
/// Ticks an environment has to comply.
const DEADLINE_TICKS: u64 = 2;

/// A request to give frames back.
#[derive(Clone, Copy, Debug)]
pub struct Reclaim {
    /// Slot and id of the environment asked (`None`: unused entry).
    pub env: Option<Slot>,
    pub id: u32,
    /// The number of frames it should be down to.
    pub target: u64,
    pub deadline: u64,
}

impl Reclaim {
    pub const NONE: Reclaim = Reclaim { env: None, id: 0, target: 0, deadline: 0 };
}

impl Kernel {
    /// Frames of slot `s` that repossession may take: mappable user frames
    /// (not page tables).
    fn user_frames(&self, s: Slot) -> u64 {
        let id = self.envs[s].id().raw();
        self.frames
            .owned(id)
            .filter(|&f| self.frames.info(f).is_some_and(|i| i.state == frame_state::USER))
            .count() as u64
    }

    /// Asks slot `s` to give back `n` frames.
    pub fn reclaim(&mut self, s: Slot, n: u64) -> Result<u64, Error> {
        if n == 0 {
            return Err(Error::BadLength);
        }
        let i = self.reclaims.iter().position(|r| r.env.is_none()).ok_or(Error::NoMemory)?;
        let id = self.envs[s].id().raw();
        self.reclaims[i] = Reclaim {
            env: Some(s),
            id,
            target: self.frames.owned_count(id).saturating_sub(n),
            deadline: self.clock.ticks + DEADLINE_TICKS,
        };
        self.upcall(s, vector::REVOKE_REQUEST, n);
        Ok(0)
    }

    /// At each tick: requests met are dropped, overdue ones enforced.
    pub fn check_reclaims(&mut self) {
        for i in 0..MAX_REQUESTS {
            let r = self.reclaims[i];
            let Some(s) = r.env else {
                continue;
            };
            let e = &self.envs[s];
            let alive = e.id().raw() == r.id && !matches!(e.state(), State::Exited | State::Free);
            let owned = self.frames.owned_count(r.id);
            if !alive || owned <= r.target {
                self.reclaims[i] = Reclaim::NONE;
            } else if self.clock.ticks >= r.deadline {
                self.reclaims[i] = Reclaim::NONE;
                self.repossess(s, owned - r.target);
            }
        }
    }

    /// Takes up to `n` frames from slot `s` (never its last
    /// `GUARANTEED_FRAMES` user frames), the most recently allocated first —
    /// its newest data, not its program or stack — among frames mapped at
    /// most once (pinned ones, like its exception save area, are skipped).
    /// Records each in its repossession vector and raises `REPOSSESSED`.
    fn repossess(&mut self, s: Slot, n: u64) {
        let spare = self.user_frames(s).saturating_sub(GUARANTEED_FRAMES);
        let id = self.envs[s].id().raw();
        let mut chosen = [Frame::new(u64::MAX); 64];
        let candidates = self
            .frames
            .owned(id)
            .filter(|&f| self.frames.info(f).is_some_and(|i| i.state == frame_state::USER && i.refs <= 1));
        let mut nchosen = 0;
        for (slot, f) in chosen.iter_mut().zip(candidates.take(n.min(spare) as usize)) {
            *slot = f;
            nchosen += 1;
        }
        let chosen = &chosen[..nchosen];
        let mut taken: [Repossessed; 64] = [Repossessed::default(); 64];
        let mut count = 0;
        // Mapped ones: find where, unmap, free.
        let pml4 = self.envs[s].pml4;
        let current = self.space_is_current(s);
        let frames = &mut self.frames;
        pagetable::for_each_leaf(&mut PhysTables, pml4, mm::USER_SLOTS, &mut |va, pte| {
            let f = pagetable::frame_of(*pte);
            if chosen.contains(&f) && frames.info(f).is_some_and(|i| i.refs == 1) {
                *pte = 0;
                if current {
                    crate::arch::cpu::invlpg(va);
                }
                frames.drop_ref(f);
                if frames.free(f).is_ok() {
                    taken[count] = Repossessed { va, frame: f.number() };
                    count += 1;
                }
            }
            count < chosen.len()
        });
        // Unmapped ones: just free.
        for &f in chosen {
            if self.frames.info(f).is_some_and(|i| i.owner == id && i.refs == 0)
                && self.frames.free(f).is_ok()
            {
                taken[count] = Repossessed { va: 0, frame: f.number() };
                count += 1;
            }
        }
        crate::kprintln!("env {id:#x} did not give frames back in time: repossessed {count}");
        if let Some(v) = self.envs[s].repo_vector {
            // SAFETY: the registered vector page is pinned while registered
            // and only the kernel and its owner write it.
            let vec = unsafe { &mut *mm::frame_ptr::<RepossessionVector>(v) };
            for t in &taken[..count] {
                if let Some(slot) = vec.entries.get_mut(vec.count as usize) {
                    *slot = *t;
                    vec.count += 1;
                }
            }
        }
        self.kinfo.free_frames = self.frames.free_count();
        self.publish(s);
        self.upcall(s, vector::REPOSSESSED, count as u64);
    }
}
