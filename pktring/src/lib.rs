//! Packet rings (paper 000 §5.2.1: "packet rings, which allow protected
//! buffering of received network packets"): frames pass between the
//! kernel and an environment through slots in pages the environment
//! supplies, with no system call per frame. The layout is `abi::net`.
//!
//! Either side can be the producer: the kernel produces a receive ring and
//! consumes a transmit ring. The side that runs in the kernel must survive
//! anything the other side writes, so each side keeps its own counter and
//! the geometry in private memory, reads the other's counter once per
//! operation, and computes every offset from its private copies: no word
//! in the ring can make it touch memory outside the ring. The other side
//! can only hurt itself (lose or garble its own frames).
#![no_std]

extern crate alloc;

mod mem;
mod ring;
mod wake;

pub use mem::{RingMem, SliceMem};
pub use ring::{Consumer, Corrupt, Geometry, Producer, Push, RingError, Slot};
pub use wake::{nonempty_predicate, PREDICATE_CTX_SIZE};
