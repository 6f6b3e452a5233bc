//! Helper for the state-visibility test: one synchronous transfer to the
//! server whose id is its argument, with 41 in `rdx`; exits 0 if the
//! reply came from that server with 42.
#![no_std]
#![no_main]

use user::pct::{self, Msg};

fn main(server: u64) -> i32 {
    let (r, m) = pct::first_call(server, abi::syscall::PCT_SYNC, &Msg { rdx: 41, ..Msg::default() });
    i32::from(!(r == server as i64 && m.rdx == 42))
}

user::entry!(main);
