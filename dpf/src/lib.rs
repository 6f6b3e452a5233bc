//! Packet filters as secure bindings (paper 001 §3.2; DPF, Engler and
//! Kaashoek, SIGCOMM '96): environments claim the frames they own with
//! eBPF filters; filters in canonical form (a conjunction of masked
//! equalities on packet bytes at constant offsets) are merged into one
//! decision tree whose branches are hash lookups, so demultiplexing costs
//! the same with one filter or thousands; the rest run one by one,
//! charged to their owner. No filter may claim frames another owner
//! claims, and transmission is checked against the sender's filters. Plain
//! `no_std` Rust, host-tested, for the kernel to link. See
//! `docs/network.md`.
#![no_std]

extern crate alloc;

pub mod bench;
pub mod cube;
pub mod demux;
pub mod mirror;
pub mod pattern;
pub mod shape;
pub mod table;
pub mod trie;

pub use cube::Cube;
pub use demux::{
    filter_spec, Deliveries, Delivery, Demux, FilterError, FilterId, Grantee, InstallError, Owner, Sink,
    Stats, TxError,
};
pub use pattern::Pattern;
pub use shape::{shape, Shape};
