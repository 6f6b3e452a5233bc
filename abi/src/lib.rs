//! The Veneer system-call ABI, shared by the kernel and every user program.
//!
//! This crate holds numbers, structure layouts and error codes only: no
//! logic. See `docs/abi.md` for the calling convention.
#![no_std]

pub mod dev;
pub mod error;
pub mod exception;
pub mod layout;
pub mod nest;
pub mod net;
pub mod pte;
pub mod syscall;
pub mod tables;
pub mod xn;

pub use error::Error;
