//! Boot test: lifetimes (`kernel/src/lifetime.rs`). `env_move` hands a
//! subtree to an ancestor of its parent, which then ends without it: the
//! moved environment keeps its guard (a child can still be made under it)
//! and every frame of the old parent comes back. Refusals: to its own
//! parent, to one that is not an ancestor, of the caller, of a sharer, out
//! from under a limit, bad ids. `env_exit_bits`: a child that dies by a
//! fault (no handler) tells its parent with the bits asked for; asked by
//! one that is not the parent: refused.
#![no_std]
#![no_main]

use abi::syscall::{CRED_SELF, ENV_SELF, NO_LIMIT};
use abi::tables::env_state;
use abi::Error;
use core::sync::atomic::Ordering;
use user::verdict::{self, check, INTERRUPTS};
use user::{kinfo, nest, println, spawn, sys};

fn parent_of(id: u64) -> u64 {
    kinfo::env_by_id(id).map_or(0, |e| e.parent as u64)
}

fn main(_: u64) -> i32 {
    let mut ok = true;
    user::exc::install(verdict::collect).unwrap();
    let me = sys::self_id();
    let before = kinfo::free_plus_own();

    // A > B > C, all stopped; and D, A's other child.
    let a = sys::env_create().unwrap();
    let b = sys::env_create_in(a).unwrap();
    let c = sys::env_create_in(b).unwrap();
    let d = sys::env_create_in(a).unwrap();
    check(&mut ok, "to its own parent: BadEnv", sys::env_move(c, b) == Err(Error::BadEnv));
    check(&mut ok, "to one that is not an ancestor: BadEnv", sys::env_move(c, d) == Err(Error::BadEnv));
    check(&mut ok, "to its own child: BadEnv", sys::env_move(b, c) == Err(Error::BadEnv));
    check(&mut ok, "of the caller: NotPermitted", sys::env_move(me, a) == Err(Error::NotPermitted));
    check(&mut ok, "of no environment: BadEnv", sys::env_move(0xdead_0000, me) == Err(Error::BadEnv));
    check(&mut ok, "to no environment: BadEnv", sys::env_move(c, 0xdead_0000) == Err(Error::BadEnv));
    let t = sys::env_create_shared(b, CRED_SELF).unwrap();
    check(&mut ok, "of a sharer: NotPermitted", sys::env_move(t, me) == Err(Error::NotPermitted));
    nest::env_limit(b, 1000, NO_LIMIT).unwrap();
    check(&mut ok, "out from under a limit: NotPermitted", sys::env_move(c, me) == Err(Error::NotPermitted));
    check(&mut ok, "a refused move changed nothing", parent_of(c) == b);
    nest::env_limit(b, NO_LIMIT, NO_LIMIT).unwrap();
    check(&mut ok, "C moved under the test", sys::env_move(c, me) == Ok(0) && parent_of(c) == me);
    check(&mut ok, "D moved under the test", sys::env_move(d, me) == Ok(0) && parent_of(d) == me);
    sys::env_destroy(a).unwrap();
    let lived = kinfo::env_by_id(c).is_some_and(|e| e.state == env_state::STOPPED);
    check(&mut ok, "C outlived its old parent", lived && kinfo::env_by_id(b).is_none());
    // Its guard outlived B's: a child is still made under it.
    let cc = sys::env_create_in(c);
    check(&mut ok, "C's guard is live (a child made under it)", cc.is_ok() && parent_of(cc.unwrap()) == c);
    sys::env_destroy(c).unwrap();
    sys::env_destroy(d).unwrap();
    let after = kinfo::free_plus_own();
    println!("free+own frames before {before}, after {after}");
    check(&mut ok, "every frame back", before == after);

    // A child that dies of a fault tells its parent with its exit bits.
    let f = spawn::spawn_stopped("faulter", 1).unwrap();
    check(&mut ok, "exit bits set by the parent", sys::env_exit_bits(f, 1 << 9).is_ok());
    let g = sys::env_create_in(f).unwrap();
    check(
        &mut ok,
        "exit bits by one not the parent: NotPermitted",
        sys::env_exit_bits(g, 1) == Err(Error::NotPermitted),
    );
    check(
        &mut ok,
        "exit bits of the caller: NotPermitted",
        sys::env_exit_bits(ENV_SELF, 1) == Err(Error::NotPermitted),
    );
    spawn::start(f).unwrap();
    let end = kinfo::ticks() + 100;
    while INTERRUPTS.load(Ordering::SeqCst) & 1 << 9 == 0 && kinfo::ticks() < end {
        sys::yield_now();
    }
    let dead = kinfo::env_by_id(f).is_some_and(|e| e.state == env_state::EXITED);
    check(
        &mut ok,
        "a child killed by the kernel told its parent",
        dead && INTERRUPTS.load(Ordering::SeqCst) == 1 << 9,
    );
    sys::env_destroy(f).unwrap();
    i32::from(!ok)
}

user::entry!(main);
