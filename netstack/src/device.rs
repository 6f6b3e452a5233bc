//! smoltcp's view of one frame at a time: the dispatcher picks the frame
//! and the one connection it belongs to, then lets the interface process
//! exactly that frame against exactly that connection.

use alloc::collections::VecDeque;
use alloc::vec::Vec;

use smoltcp::phy::{self, DeviceCapabilities, Medium};
use smoltcp::time::Instant;

use crate::link::{Link, MAX_FRAME};

/// The loopback interface's MTU: the largest IPv4 packet, as Linux's `lo`
/// (65536) allows, so a loopback transfer takes few segments and few ACKs.
pub const LOOP_MTU: usize = 65535;

/// Where an interface's output goes.
pub enum Out<'a, L> {
    /// The Ethernet link.
    Wire(&'a mut L),
    /// The loopback queue (IP packets back into this stack).
    Loop(&'a mut VecDeque<Vec<u8>>),
}

pub struct OneFrame<'a, L> {
    pub frame: Option<&'a [u8]>,
    pub out: Out<'a, L>,
    pub medium: Medium,
    pub scratch: &'a mut Vec<u8>,
}

/// A received frame and its metadata (`parse::traffic_id`).
pub struct Rx<'a>(&'a [u8], u32);

pub struct Tx<'a, 'b, L> {
    out: &'b mut Out<'a, L>,
    scratch: &'b mut Vec<u8>,
}

impl phy::RxToken for Rx<'_> {
    fn consume<R, F: FnOnce(&[u8]) -> R>(self, f: F) -> R {
        f(self.0)
    }

    fn meta(&self) -> phy::PacketMeta {
        let mut m = phy::PacketMeta::default();
        m.id = self.1;
        m
    }
}

impl<L: Link> phy::TxToken for Tx<'_, '_, L> {
    fn consume<R, F: FnOnce(&mut [u8]) -> R>(self, len: usize, f: F) -> R {
        self.scratch.clear();
        self.scratch.resize(len, 0);
        let r = f(self.scratch);
        match self.out {
            Out::Wire(link) => _ = link.send(self.scratch),
            Out::Loop(q) => q.push_back(self.scratch.clone()),
        }
        r
    }
}

impl<'a, L: Link> phy::Device for OneFrame<'a, L> {
    type RxToken<'b>
        = Rx<'a>
    where
        Self: 'b;
    type TxToken<'b>
        = Tx<'a, 'b, L>
    where
        Self: 'b;

    fn receive(&mut self, _: Instant) -> Option<(Rx<'a>, Tx<'a, '_, L>)> {
        let frame = self.frame.take()?;
        let id = crate::parse::traffic_id(frame, self.medium == Medium::Ethernet);
        Some((Rx(frame, id), Tx { out: &mut self.out, scratch: self.scratch }))
    }

    fn transmit(&mut self, _: Instant) -> Option<Tx<'a, '_, L>> {
        Some(Tx { out: &mut self.out, scratch: self.scratch })
    }

    fn capabilities(&self) -> DeviceCapabilities {
        let mut caps = DeviceCapabilities::default();
        caps.medium = self.medium;
        caps.max_transmission_unit = match self.medium {
            Medium::Ethernet => MAX_FRAME,
            _ => LOOP_MTU,
        };
        caps.max_burst_size = None;
        caps
    }
}
