//! Veneer: an exokernel. The kernel only protects: it multiplexes physical
//! frames, the CPU and exceptions among environments, checks ownership when
//! a binding is made, and exposes its bookkeeping read-only. Everything
//! that manages lives in untrusted libraries (see `docs/`).
//!
//! Modules without hardware dependencies (`bootinfo`, `cap`, `frames`,
//! `pagetable`, the environment table `env` and the scheduler `sched`
//! over a fake processor, the device layer's parsers) are unit-tested on
//! the host; the rest is exercised by boot tests (`cargo xtask test`).
#![cfg_attr(not(test), no_std)]

#[cfg(target_os = "none")]
extern crate alloc;

pub mod bootinfo;
pub mod calendar;
pub mod cap;
pub mod charges;
pub mod dev;
pub mod frames;
mod group;
pub mod ident;
pub mod keys;
pub mod pagetable;
pub mod ranges;
pub mod section;
pub mod validate;

pub mod arch;
pub mod console;
pub mod env;
pub mod memory;
pub mod sched;

#[cfg(target_os = "none")]
#[macro_use]
mod log;

#[cfg(target_os = "none")]
mod aspace;
#[cfg(target_os = "none")]
mod audit;
#[cfg(target_os = "none")]
mod codemem;
#[cfg(target_os = "none")]
mod creds;
#[cfg(target_os = "none")]
mod event_wait;
#[cfg(target_os = "none")]
mod exposed;
#[cfg(target_os = "none")]
mod heap;
#[cfg(target_os = "none")]
mod hooks;
#[cfg(target_os = "none")]
mod init;
#[cfg(target_os = "none")]
mod interpose;
#[cfg(target_os = "none")]
mod life;
#[cfg(target_os = "none")]
mod lifetime;
#[cfg(target_os = "none")]
mod limits;
#[cfg(target_os = "none")]
mod loader;
#[cfg(target_os = "none")]
mod mm;
#[cfg(target_os = "none")]
mod nest;
#[cfg(target_os = "none")]
mod panic;
#[cfg(target_os = "none")]
mod pct;
#[cfg(target_os = "none")]
mod predicate;
#[cfg(target_os = "none")]
mod revoke;
#[cfg(target_os = "none")]
mod run;
#[cfg(target_os = "none")]
mod selftest;
#[cfg(target_os = "none")]
mod state;
#[cfg(target_os = "none")]
mod syscall;
#[cfg(target_os = "none")]
mod trap;
#[cfg(target_os = "none")]
mod uaccess;
#[cfg(target_os = "none")]
mod upcall;
#[cfg(target_os = "none")]
mod xn;
/// XN's exposed registry table (`xn/table.rs`), tested on the host.
#[cfg(test)]
#[path = "xn/table.rs"]
mod xn_table;

#[cfg(target_os = "none")]
use init::kmain;

/// Written to QEMU's debug-exit port: QEMU exits with 33 (success) or 35.
pub const EXIT_SUCCESS: u8 = 0x10;
pub const EXIT_FAILURE: u8 = 0x11;
