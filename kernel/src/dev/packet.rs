//! The kernel's packet interface: transmit an Ethernet frame from a frame
//! its owner holds. Received frames go to the demultiplexer
//! (`client::demux`).

use super::driver::{self, Done, Span};
use crate::frames::Frames;
use drvapi::{op, Request};

/// Why a transmission was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PacketError {
    NoDevice,
    BadRange,
    NotOwner,
    Driver(i32),
}

fn device() -> Option<usize> {
    driver::find("virtio-net")
}

/// The NIC's MAC address.
pub fn mac() -> Option<[u8; 6]> {
    driver::facts("virtio-net").map(|f| f.mac)
}

/// How many requests the NIC's driver takes at once (0 without one).
pub fn queue_depth() -> u32 {
    driver::facts("virtio-net").map_or(0, |f| f.queue_depth)
}

/// Starts sending the Ethernet frame in `buf`, a frame `owner` (0: the
/// kernel) must hold.
pub fn transmit(frames: &Frames, owner: u32, buf: Span, done: Done, cookie: u64) -> Result<u64, PacketError> {
    let Span { frame, offset, len } = buf;
    let i = device().ok_or(PacketError::NoDevice)?;
    if !(14..=1514).contains(&len) || offset.checked_add(len).is_none_or(|e| e > 4096) {
        return Err(PacketError::BadRange);
    }
    if !driver::holds(frames, owner, frame) {
        return Err(PacketError::NotOwner);
    }
    let pa = [frame.addr() + offset as u64];
    driver::submit(i, Request { op: op::TRANSMIT, tag: 0, sector: 0, va: 0, len }, &pa, done, cookie)
        .map_err(PacketError::Driver)
}
