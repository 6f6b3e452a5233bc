//! Checked, allocation-free parsers for the formats Veneer loads: ELF64
//! executables and cpio "newc" archives (the boot file system). Any byte
//! string is safe input: malformed data yields an error, never a panic or an
//! out-of-bounds read.
#![cfg_attr(not(test), no_std)]

pub mod cpio;
pub mod elf;
pub mod relro;
