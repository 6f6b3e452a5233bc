//! A packet ring as the kernel sees it: bytes spread over frames its
//! owner mapped and the kernel pinned, reached through the physical
//! window. The owner may change any of them at any moment (it is running
//! on another page table, or later): every access reads or writes each
//! byte once, and nothing here trusts what it reads (`pktring` keeps the
//! kernel's own counters and geometry).

use crate::frames::Frame;
use crate::mm::frame_ptr;
use pktring::RingMem;

const PAGE: usize = 4096;

/// The ring at byte 0 of `frames[0]`, continuing page by page.
pub struct Pages<'a>(pub &'a [Frame]);

impl Pages<'_> {
    /// Runs `f` on each piece of `off..off + len` that lies in one page:
    /// (kernel address, offset into the access). Bytes past the ring are
    /// skipped (`RingMem`'s rule: a caller's bug, never a fault).
    fn pieces(&self, off: usize, len: usize, mut f: impl FnMut(*mut u8, usize, usize)) {
        let mut done = 0;
        while done < len {
            let at = off + done;
            let Some(&frame) = self.0.get(at / PAGE) else { return };
            let n = (PAGE - at % PAGE).min(len - done);
            // SAFETY: `frame` is pinned for the ring's life and seen
            // through the physical window; `at % PAGE + n <= PAGE`.
            f(unsafe { frame_ptr::<u8>(frame).add(at % PAGE) }, done, n);
            done += n;
        }
    }
}

impl RingMem for Pages<'_> {
    fn read_u32(&self, off: usize) -> u32 {
        let mut b = [0; 4];
        self.read_bytes(off, &mut b);
        u32::from_le_bytes(b)
    }

    fn write_u32(&mut self, off: usize, v: u32) {
        self.write_bytes(off, &v.to_le_bytes());
    }

    fn write_u64(&mut self, off: usize, v: u64) {
        self.write_bytes(off, &v.to_le_bytes());
    }

    fn read_bytes(&self, off: usize, dst: &mut [u8]) {
        dst.fill(0);
        self.pieces(off, dst.len(), |p, at, n| {
            // SAFETY: `p..p + n` lies in one pinned frame (`pieces`); the
            // owner writing it meanwhile garbles only its own bytes.
            unsafe { core::ptr::copy_nonoverlapping(p, dst[at..].as_mut_ptr(), n) }
        });
        // Stores after this read are not moved before it.
        core::sync::atomic::compiler_fence(core::sync::atomic::Ordering::SeqCst);
    }

    fn write_bytes(&mut self, off: usize, src: &[u8]) {
        // The owner sees the bytes in program order (x86 keeps stores in
        // order; the fence keeps the compiler from reordering them).
        core::sync::atomic::compiler_fence(core::sync::atomic::Ordering::SeqCst);
        self.pieces(off, src.len(), |p, at, n| {
            // SAFETY: as in `read_bytes`.
            unsafe { core::ptr::copy_nonoverlapping(src[at..].as_ptr(), p, n) }
        });
    }
}
