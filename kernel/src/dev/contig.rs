//! Runs of physically contiguous frames, taken from the frame table at
//! boot: driver images and the device layer's pool (`pool.rs`; a device
//! sees one physical address for a whole buffer).

use crate::frames::{Frame, Frames};
use abi::tables::frame_state;

/// Frames below 1 MiB stay with the firmware.
const FIRST: u64 = 256;

/// `n` contiguous zeroed frames for the kernel: the first.
pub fn alloc(frames: &mut Frames, n: u64) -> Option<Frame> {
    let free =
        |frames: &Frames, f: u64| frames.info(Frame::new(f)).is_some_and(|i| i.state == frame_state::FREE);
    let mut f = FIRST;
    while n > 0 && f + n <= frames.len() {
        match (0..n).find(|&i| !free(frames, f + i)) {
            Some(i) => f += i + 1,
            None => {
                let first = Frame::new(f);
                for i in 0..n {
                    frames.alloc(Some(first.add(i)), 0, frame_state::KERNEL).ok()?;
                }
                // SAFETY: the run was free RAM and is now the kernel's,
                // visible in the physical window.
                unsafe { core::ptr::write_bytes(crate::mm::frame_ptr::<u8>(first), 0, (n * 4096) as usize) };
                return Some(first);
            }
        }
    }
    None
}
