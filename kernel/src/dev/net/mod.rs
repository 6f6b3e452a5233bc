//! Packet endpoints (issue 24; paper 001 §3.2, paper 000 §5.2.1): the
//! kernel only protects the network. An environment attaches an
//! *endpoint*, a receive ring and a transmit ring in pages of its own,
//! and installs eBPF packet filters that claim the frames it owns; the
//! filters are merged into one decision tree (`dpf`), so that received
//! frames find their endpoint with a hash lookup per field however many
//! filters there are, and go straight into its receive ring, where its
//! library reads them without a system call (it sleeps on the ring's
//! wakeup predicate when it is empty). Transmission takes frames from the
//! transmit ring and lets out only those whose reply the endpoint's own
//! filters claim (the secure binding on transmit). No filter may claim a
//! frame another endpoint's filter claims unless that one consented.
//! See `docs/network.md`.
//!
//! The state is the device layer's (`Global`): frames arrive inside the
//! network driver's crossing, where the kernel state is out of reach.

mod endpoint;
mod pages;
mod tx;

pub use endpoint::{attach, consent, detach, guard, install, released, stats, uninstall, Attach};
pub use tx::transmit;

use super::Global;
use endpoint::Net;

static NET: Global<Net> = Global::new(Net::new());

/// A received frame, from the driver's `receive` (inside its crossing):
/// copied into the receive ring of each endpoint whose filter claims it.
/// Whether one did (a frame nobody claims is counted and dropped).
pub fn receive(frame: &[u8]) -> bool {
    // Only a bug could find the state lent here (no system call holds it
    // across a crossing); the frame is then dropped, not the kernel.
    NET.try_with(|n| n.receive(frame)).unwrap_or(false)
}
