//! A `Link` over a pair of packet rings (`pktring`): the kernel fills the
//! receive ring, the library consumes it; the library fills the transmit
//! ring and `flush` asks the kernel to send the batch.

use pktring::{Consumer, Producer, Push, RingMem, Slot};

use crate::link::Link;

pub struct RingLink<R: RingMem, T: RingMem, F: FnMut()> {
    rx_mem: R,
    rx: Consumer,
    tx_mem: T,
    tx: Producer,
    /// The transmit call (one per batch).
    kick: F,
    pending: bool,
}

impl<R: RingMem, T: RingMem, F: FnMut()> RingLink<R, T, F> {
    /// Attaches as consumer of `rx` and producer of `tx`, with the
    /// geometries the library chose for them.
    pub fn new(
        mut rx_mem: R,
        rx_geo: pktring::Geometry,
        mut tx_mem: T,
        tx_geo: pktring::Geometry,
        kick: F,
    ) -> Self {
        let rx = Consumer::attach(rx_geo, &mut rx_mem);
        let tx = Producer::attach(tx_geo, &mut tx_mem);
        RingLink { rx_mem, rx, tx_mem, tx, kick, pending: false }
    }
}

impl<R: RingMem, T: RingMem, F: FnMut()> Link for RingLink<R, T, F> {
    fn recv(&mut self, buf: &mut [u8]) -> Option<usize> {
        loop {
            match self.rx.pop(&mut self.rx_mem, buf) {
                Ok(Some(Slot::Frame { len, .. })) => return Some(len),
                Ok(Some(Slot::Malformed)) => continue,
                // The kernel is trusted to keep its counter sane; if it
                // does not, there is nothing to read.
                Ok(None) | Err(_) => return None,
            }
        }
    }

    fn send(&mut self, frame: &[u8]) -> bool {
        if self.tx.room(&self.tx_mem) == 0 {
            self.flush();
        }
        self.pending = true;
        self.tx.push(&mut self.tx_mem, frame, 0) != Push::Full
    }

    fn flush(&mut self) {
        if core::mem::take(&mut self.pending) {
            (self.kick)();
        }
    }
}
