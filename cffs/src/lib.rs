//! C-FFS, the co-locating fast file system (paper 000 §4.5; Ganger and
//! Kaashoek 1997), as an untrusted library over XN.
#![no_std]

extern crate alloc;
#[cfg(test)]
extern crate std;

pub mod templates;
