//! Helper for the state-visibility test: derives two capabilities in its
//! own list — one from its root (read, grant), one from that (read) — then
//! publishes 1 and yields until it is held.
#![no_std]
#![no_main]

use abi::syscall::{rights, CRED_SELF, ENV_SELF};
use user::sys;

fn main(_: u64) -> i32 {
    let Ok(first) = sys::cap_derive(CRED_SELF, rights::READ | rights::GRANT) else { return 1 };
    if sys::cap_derive(first, rights::READ).is_err() || sys::env_publish(ENV_SELF, 1).is_err() {
        return 1;
    }
    loop {
        sys::yield_now();
    }
}

user::entry!(main);
