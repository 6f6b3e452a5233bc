//! Boot test: 200,000 synchronous protected control transfers to an echo
//! server, timer ticks landing among them, each reply checked. (It caught
//! a wrapper that let the compiler keep the flags in a register the kernel
//! clears on a transfer, turning later calls asynchronous.)
#![no_std]
#![no_main]

use abi::syscall::PCT_SYNC;
use user::pct::{call, first_call, Msg};
use user::{println, spawn};

fn main(_: u64) -> i32 {
    let server = spawn::spawn("pct_echo", 0).unwrap();
    let (r, _) = first_call(server, PCT_SYNC, &Msg::default());
    if r as u64 != server {
        println!("never opened: {r}");
        return 1;
    }
    let mut bad = 0;
    for i in 0..200_000u64 {
        let m = Msg { rdx: i, ..Msg::default() };
        let (r, reply) = call(server, PCT_SYNC, &m);
        if r as u64 != server || reply.rdx != i + 1 {
            if bad < 5 {
                println!(
                    "round {i}: result {r:#x} (server {server:#x}), reply rdx {} (want {})",
                    reply.rdx,
                    i + 1
                );
            }
            bad += 1;
        }
    }
    println!("{bad} bad replies in 200000 round trips");
    if bad == 0 {
        0
    } else {
        1
    }
}

user::entry!(main);
