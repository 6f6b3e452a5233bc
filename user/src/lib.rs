//! The user-side runtime shared by Veneer's own programs: system-call
//! wrappers, console output, exception handling, reading the exposed kernel
//! tables and the boot file system, and loading programs into child
//! environments. (The full library OS, `libos/`, builds on the same calls.)
#![no_std]

pub mod bootfs;
pub mod dev;
pub mod ebpf;
pub mod exc;
pub mod kinfo;
pub mod mem;
pub mod nest;
pub mod net;
pub mod pct;
pub mod print;
pub mod rng;
pub mod rt;
pub mod spawn;
pub mod sys;
pub mod verdict;
pub mod xn;

pub use abi;
