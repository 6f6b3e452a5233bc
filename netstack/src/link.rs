//! Where frames come from and go to: a packet ring pair in Veneer (the
//! kernel fills the receive ring, the library batches into the transmit
//! ring), a simulated wire in tests.

/// A packet-ring-like Ethernet device.
pub trait Link {
    /// Copies the next received frame into `buf` and returns its length.
    fn recv(&mut self, buf: &mut [u8]) -> Option<usize>;
    /// Queues one frame for transmission; false if it was dropped.
    fn send(&mut self, frame: &[u8]) -> bool;
    /// Hands queued frames to the kernel (one crossing per batch).
    fn flush(&mut self) {}
}

/// Largest Ethernet frame the stack sends or takes (no FCS).
pub const MAX_FRAME: usize = 1514;
