//! Helper for the capability test: tries to map its parent's frame
//! (argument: frame number; the parent granted it a read-only capability
//! in slot 1). Exit code bits: 1 = read-only map with the granted
//! capability worked and saw 0x5ca1ab1e; 2 = writable map refused;
//! 4 = the wrong capability (its own root) refused; 8 = an empty slot
//! refused; 16 = (asked to, by bit 63 of the argument) it revoked the
//! granted capability, which must take it away from nobody but itself.
#![no_std]
#![no_main]

use abi::syscall::{map as mf, ENV_SELF};
use abi::Error;
use user::sys;

const VA: u64 = 0x3000_0000_0000;
const GRANTED: u64 = 1;
const REVOKE: u64 = 1 << 63;

fn main(arg: u64) -> i32 {
    let frame = arg & !REVOKE;
    let mut bits = 0;
    if sys::map_with(ENV_SELF, VA, frame, 0, 0, GRANTED).is_ok() {
        // SAFETY: just mapped read-only.
        if unsafe { core::ptr::read_volatile(VA as *const u32) } == 0x5ca1_ab1e {
            bits |= 1;
        }
    }
    if sys::map_with(ENV_SELF, VA + 4096, frame, mf::WRITE, 0, GRANTED).is_err() {
        bits |= 2;
    }
    if sys::map_with(ENV_SELF, VA + 8192, frame, 0, 0, 0) == Err(Error::NotOwner) {
        bits |= 4;
    }
    if sys::map_with(ENV_SELF, VA + 8192, frame, 0, 0, 9) == Err(Error::NotPermitted) {
        bits |= 8;
    }
    if arg & REVOKE != 0 && sys::cap_revoke(GRANTED).is_ok() {
        bits |= 16;
    }
    bits
}

user::entry!(main);
