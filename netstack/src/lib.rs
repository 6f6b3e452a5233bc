//! TCP/IP as a library (paper 000 §5.2.1: "user-level network libraries
//! for UDP and TCP ... implemented using Xok's timers, upcalls, and packet
//! rings"): `smoltcp` behind a socket API for the Linux personality, fed
//! frame by frame from a packet-ring-like [`Link`]. Around smoltcp's
//! limits: connections are found by hash, not by walking every socket; a
//! listening port keeps a backlog of handshakes; Nagle and delayed ACK are
//! options; DHCP with a static fallback; loopback. See `docs/network.md`.
#![no_std]

extern crate alloc;

pub mod cheetah;
pub mod cksum;
mod device;
pub mod errno;
mod hash;
pub mod link;
pub mod opts;
pub mod parse;
pub mod respond;
pub mod ring_link;
pub mod socket;
pub mod stack;

pub use errno::Errno;
pub use link::Link;
pub use opts::{Opt, OptName};
pub use ring_link::RingLink;
pub use socket::{ready, Received, Shutdown, SockType, SocketId};
pub use stack::{Addressing, NetInfo, NetStats, Source, Stack, StaticIp};
