//! Boot test: protected control transfer (paper 001 §4.6). A synchronous
//! transfer carries ten message registers to the callee untouched and
//! resumes the caller with the callee's reply; the callee learns the
//! caller's id; an asynchronous transfer returns to the caller only in its
//! own next slice; a caller waiting on a callee that dies gets an error.
#![no_std]
#![no_main]

use abi::syscall::PCT_SYNC;
use abi::Error;
use user::pct::{call, Msg};
use user::{println, spawn, sys};

fn main(_: u64) -> i32 {
    let server = spawn::spawn("pct_echo", 0).unwrap();
    // Its entry point is open once a first call gets through.
    let (r, first) = user::pct::first_call(server, PCT_SYNC, &Msg::default());
    println!("first call: {r:#x} {first:?}");
    if r as u64 != server {
        println!("the server never opened its entry point: {r}");
        return 1;
    }
    let msg = Msg { rdx: 10, r8: 20, r9: 30, r10: 40, rbx: 50, rbp: 60, r12: 70, r13: 80, r14: 90, r15: 100 };
    let mut ok = true;
    for round in 0..3u64 {
        let m = Msg { rdx: msg.rdx + round, ..msg };
        let (r, reply) = call(server, PCT_SYNC, &m);
        let want = Msg {
            rdx: m.rdx + 1,
            r8: 21,
            r9: 31,
            r10: 41,
            rbx: 51,
            rbp: 61,
            r12: 71,
            r13: 81,
            r14: 91,
            r15: u64::MAX,
        };
        println!("round {round}: result {r:#x}, reply {reply:?}");
        ok &= r as u64 == server && reply == want;
    }
    // Asynchronous: the server replies with an asynchronous transfer to a
    // caller that is not waiting, so the caller starts over... at its own
    // PCT entry, which it has not opened: the reply is refused and the
    // caller simply continues in its next slice.
    let (r, _) = call(server, 0, &msg);
    println!("asynchronous transfer returned {r}");
    ok &= r == 0;
    // Transfers to something that cannot take them.
    let (r, _) = call(sys::self_id(), PCT_SYNC, &msg);
    ok &= r == Error::BadEnv.as_result();
    sys::env_destroy(server).unwrap();
    let (r, _) = call(server, PCT_SYNC, &msg);
    println!("transfer to a destroyed server: {r}");
    ok &= r == Error::BadEnv.as_result();
    if ok {
        0
    } else {
        1
    }
}

user::entry!(main);
