//! The network in the library (`docs/network.md`): packet endpoints as a
//! program uses them, frame builders for the tests.

pub mod endpoint;
pub mod frame;
pub mod ifreq;
pub mod rtnetlink;
pub mod stack;
