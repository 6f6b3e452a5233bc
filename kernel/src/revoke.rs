//! Visible revocation of memory (paper 001 §3.3). The kernel asks an
//! environment to give frames back and lets it choose which (an upcall);
//! if it does not comply in time, the abort protocol takes frames by force,
//! lists each in the environment's repossession vector and tells it, so the
//! library can fix its mappings. A few frames are guaranteed and never
//! taken.

use crate::env::{Envs, Slot, State};
use crate::frames::{Frame, Frames};
use crate::memory::Memory;
use crate::mm::{self, PhysTables};
use crate::pagetable;
use abi::exception::{Repossessed, RepossessionVector};
use abi::syscall::GUARANTEED_FRAMES;
use abi::tables::frame_state;
use abi::Error;

/// Outstanding requests at once.
const MAX_REQUESTS: usize = 8;
/// Ticks an environment has to comply.
const DEADLINE_TICKS: u64 = 2;

/// A request to give frames back.
#[derive(Clone, Copy, Debug)]
struct Reclaim {
    /// Slot and id of the environment asked (`None`: unused entry).
    env: Option<Slot>,
    id: u32,
    /// The number of frames it should be down to.
    target: u64,
    deadline: u64,
}

impl Reclaim {
    const NONE: Reclaim = Reclaim { env: None, id: 0, target: 0, deadline: 0 };
}

/// The kernel state's part that holds the outstanding requests.
pub struct Reclaims([Reclaim; MAX_REQUESTS]);

impl Reclaims {
    pub const fn new() -> Reclaims {
        Reclaims([Reclaim::NONE; MAX_REQUESTS])
    }

    /// Records that slot `s` is asked, at tick `now`, to give back `n`
    /// frames (the caller tells it, by upcall).
    pub fn ask(&mut self, envs: &Envs, frames: &Frames, s: Slot, n: u64, now: u64) -> Result<(), Error> {
        if n == 0 {
            return Err(Error::BadLength);
        }
        let i = self.0.iter().position(|r| r.env.is_none()).ok_or(Error::NoMemory)?;
        let id = envs[s].id().raw();
        self.0[i] = Reclaim {
            env: Some(s),
            id,
            target: frames.owned_count(id).saturating_sub(n),
            deadline: now + DEADLINE_TICKS,
        };
        Ok(())
    }

    /// At each tick, for each request: dropped when met (or its
    /// environment gone); when overdue, dropped and returned as (slot,
    /// frames to take by force).
    pub fn overdue(&mut self, envs: &Envs, frames: &Frames, now: u64) -> [Option<(Slot, u64)>; MAX_REQUESTS] {
        core::array::from_fn(|i| {
            let r = self.0[i];
            let s = r.env?;
            let e = &envs[s];
            let alive = e.id().raw() == r.id && !matches!(e.state(), State::Exited | State::Free);
            let owned = frames.owned_count(r.id);
            if !alive || owned <= r.target {
                self.0[i] = Reclaim::NONE;
                None
            } else if now >= r.deadline {
                self.0[i] = Reclaim::NONE;
                Some((s, owned - r.target))
            } else {
                None
            }
        })
    }
}

/// Frames of slot `s` that repossession may take: mappable user frames
/// (not page tables).
fn user_frames(frames: &Frames, id: u32) -> u64 {
    frames.owned(id).filter(|&f| frames.info(f).is_some_and(|i| i.state == frame_state::USER)).count() as u64
}

/// Takes up to `n` frames from slot `s` (never its last
/// `GUARANTEED_FRAMES` user frames), the most recently allocated first —
/// its newest data, not its program or stack — among frames mapped at
/// most once (pinned ones, like its exception save area, are skipped).
/// Records each in its repossession vector; `current`: its address space
/// is the loaded one (its TLB entries go). Returns how many were taken,
/// for the caller's `REPOSSESSED` upcall.
pub fn repossess(mem: &mut Memory, envs: &mut Envs, s: Slot, n: u64, current: bool) -> u64 {
    let id = envs[s].id().raw();
    let spare = user_frames(&mem.frames, id).saturating_sub(GUARANTEED_FRAMES);
    let mut chosen = [Frame::new(u64::MAX); 64];
    let candidates = mem
        .frames
        .owned(id)
        .filter(|&f| mem.frames.info(f).is_some_and(|i| i.state == frame_state::USER && i.refs <= 1));
    let mut nchosen = 0;
    for (slot, f) in chosen.iter_mut().zip(candidates.take(n.min(spare) as usize)) {
        *slot = f;
        nchosen += 1;
    }
    let chosen = &chosen[..nchosen];
    let mut taken: [Repossessed; 64] = [Repossessed::default(); 64];
    let mut count = 0;
    // Mapped ones: find where, unmap, free.
    let pml4 = envs[s].pml4;
    let frames = &mut mem.frames;
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
        if mem.frames.info(f).is_some_and(|i| i.owner == id && i.refs == 0) && mem.frames.free(f).is_ok() {
            taken[count] = Repossessed { va: 0, frame: f.number() };
            count += 1;
        }
    }
    crate::kprintln!("env {id:#x} did not give frames back in time: repossessed {count}");
    if let Some(v) = envs[s].repo_vector {
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
    mem.publish_free();
    envs.publish(s, &mem.frames);
    count as u64
}
