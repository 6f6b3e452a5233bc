//! XN's pages in the kernel: frames. A call names the frames its caller
//! offers (the system-call layer checked each is the caller's own and
//! mapped nowhere); XN may cache blocks only in those. What XN does with
//! them is recorded and applied to the frame table when the call ends
//! (`Xn::call`): a frame that caches a block leaves its owner's hands
//! (`Frames::to_cache`), one that stops comes back (`from_cache`).

use crate::frames::Frame;
use ::xn::{PageId, Principal, BLOCK};
use alloc::vec::Vec;

#[derive(Default)]
pub struct CachePages {
    /// The frames the running call's caller offers.
    offered: Vec<(Principal, Frame)>,
    /// What the call did: (frame, taken into the cache or let go).
    events: Vec<(Frame, bool)>,
}

impl CachePages {
    /// The frames of the call about to run.
    pub fn offer(&mut self, offered: &[(Principal, Frame)]) {
        self.offered.clear();
        self.offered.extend_from_slice(offered);
    }

    /// The call ended: what it did with frames, in order.
    pub fn finish(&mut self) -> Vec<(Frame, bool)> {
        self.offered.clear();
        core::mem::take(&mut self.events)
    }
}

fn frame(page: PageId) -> Frame {
    Frame::new(page.0)
}

impl ::xn::Pages for CachePages {
    fn holds(&self, who: Principal, page: PageId) -> bool {
        self.offered.contains(&(who, frame(page)))
    }

    fn bytes(&self, page: PageId) -> Option<&[u8; BLOCK]> {
        // SAFETY: XN names only frames offered in this call (RAM the
        // caller owns, checked) or frames in its cache, on which it holds
        // a reference (`Frames::to_cache`); the physical window maps both.
        Some(unsafe { &*crate::mm::frame_ptr::<[u8; BLOCK]>(frame(page)) })
    }

    fn bytes_mut(&mut self, page: PageId) -> Option<&mut [u8; BLOCK]> {
        // SAFETY: as in `bytes`; the kernel runs one call at a time, so no
        // other reference to the frame's bytes exists meanwhile.
        Some(unsafe { &mut *crate::mm::frame_ptr::<[u8; BLOCK]>(frame(page)) })
    }

    fn taken(&mut self, page: PageId) {
        self.events.push((frame(page), true));
    }

    fn released(&mut self, page: PageId) {
        self.events.push((frame(page), false));
    }
}
