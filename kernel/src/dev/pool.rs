//! The device layer's own frames: one run taken from memory at boot
//! (`dev::init`), from which DMA pages and the IOMMU's tables come
//! afterwards. Code running inside a crossing — a wrapper the driver
//! called, or the trap handler that disables it — so allocates and frees
//! without reaching the kernel state, whose one way in is
//! `state::enter`.

use super::Global;
use crate::frames::{Frame, Frames};

/// Frames in the pool (2 MiB): two drivers use a few dozen.
const FRAMES: usize = 512;

struct Pool {
    first: Option<Frame>,
    /// Bit `i`: frame `first + i` is handed out.
    used: [u64; FRAMES / 64],
}

static POOL: Global<Pool> = Global::new(Pool { first: None, used: [0; FRAMES / 64] });

/// Takes the pool's frames from `frames` (boot); whether there were.
pub fn init(frames: &mut Frames) -> bool {
    let run = super::contig::alloc(frames, FRAMES as u64);
    POOL.with(|p| p.first = run);
    run.is_some()
}

impl Pool {
    fn taken(&self, i: usize) -> bool {
        self.used[i / 64] & 1 << (i % 64) != 0
    }

    fn mark(&mut self, i: usize, n: usize, on: bool) {
        for j in i..i + n {
            if on {
                self.used[j / 64] |= 1 << (j % 64);
            } else {
                self.used[j / 64] &= !(1 << (j % 64));
            }
        }
    }
}

/// `n` contiguous zeroed frames of the pool: the first.
pub fn alloc(n: u64) -> Option<Frame> {
    let n = usize::try_from(n).ok().filter(|&n| (1..=FRAMES).contains(&n))?;
    let first = POOL.with(|p| {
        let base = p.first?;
        let mut i = 0;
        while i + n <= FRAMES {
            match (i..i + n).find(|&j| p.taken(j)) {
                Some(j) => i = j + 1,
                None => {
                    p.mark(i, n, true);
                    return Some(base.add(i as u64));
                }
            }
        }
        None
    })?;
    // SAFETY: the run is the pool's, handed out to nobody else, in the
    // physical window.
    unsafe { core::ptr::write_bytes(crate::mm::frame_ptr::<u8>(first), 0, n * 4096) };
    Some(first)
}

/// Gives back `n` frames from `first` (from `alloc`).
pub fn free(first: Frame, n: u64) {
    POOL.with(|p| {
        let Some(base) = p.first else { return };
        let i = first.number().wrapping_sub(base.number()) as usize;
        if i < FRAMES && i + n as usize <= FRAMES {
            p.mark(i, n as usize, false);
        }
    })
}
