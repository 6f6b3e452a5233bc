//! Boot test: interrupting protected control transfers (`PCT_INTERRUPT`).
//! A transfer into an environment that is computing enters its exception
//! handler as an upcall and the computation resumes undisturbed; one that
//! arrives during a critical section stays queued (visible in the exposed
//! table) until the section ends; the handler learns the bits and the
//! sender; an exiting child can interrupt its parent (`exit`'s
//! `parent_bits`); bad transfers are refused with specific errors; `env_publish`
//! shows a word to everyone, set by the environment or an ancestor.
#![no_std]
#![no_main]

use abi::syscall::{self as sc, CRED_SELF};
use abi::Error;
use core::sync::atomic::Ordering;
use user::verdict::{self, check, INTERRUPTS};
use user::{kinfo, println, spawn, sys};

/// Gives the CPU away until `cond` holds (at most `ticks` ticks).
fn until(ticks: u64, cond: impl Fn() -> bool) -> bool {
    let end = kinfo::ticks() + ticks;
    while !cond() {
        if kinfo::ticks() > end {
            return false;
        }
        sys::yield_now();
    }
    true
}

/// Whether interruptee `id` has installed its handler (it then publishes
/// `READY`, its value until the first interrupt).
fn ready(id: u64) -> impl Fn() -> bool {
    move || kinfo::env_by_id(id).is_some_and(|e| e.published == 1 << 40)
}

fn main(_: u64) -> i32 {
    let mut ok = true;
    user::exc::install(verdict::collect).unwrap();

    // 1. Into a spinning environment: delivered at once, three times.
    let a = spawn::spawn("interruptee", 1).unwrap();
    check(&mut ok, "child ready", until(50, ready(a)));
    let mut at_once = 0;
    for bit in [1, 2] {
        at_once += sys::interrupt(a, bit, CRED_SELF).unwrap();
        sys::yield_now();
    }
    check(&mut ok, "two interrupts delivered as upcalls at once", at_once == 2);
    let shown = || kinfo::env_by_id(a).map_or(0, |e| e.published);
    check(&mut ok, "handler ran before the sender went on", shown() == 3);
    sys::interrupt(a, 4, CRED_SELF).unwrap();
    check(&mut ok, "third interrupt handled", until(50, || shown() == 7));
    sys::interrupt(a, 1 << 8, CRED_SELF).unwrap();
    let code = spawn::wait(a).unwrap();
    println!("interruptee exited with {code:#x}");
    check(&mut ok, "computation undisturbed, bits and sender right", code == 7);

    // 2. During a critical section: queued, then delivered after it.
    let b = spawn::spawn("interruptee", 2).unwrap();
    let published = |w: u64| move || kinfo::env_by_id(b).is_some_and(|e| e.published == w);
    check(&mut ok, "child published 1 in its section", until(50, published(1)));
    let r = sys::interrupt(b, 0x10, CRED_SELF).unwrap();
    let queued = kinfo::env_by_id(b).map_or(0, |e| e.interrupts);
    check(&mut ok, "interrupt during a critical section queued", r == 0 && queued == 0x10);
    check(&mut ok, "child left its section", until(50, published(2)));
    let drained = until(50, || kinfo::env_by_id(b).is_some_and(|e| e.interrupts == 0));
    check(&mut ok, "queued interrupt delivered after the section", drained);
    sys::interrupt(b, 1 << 8, CRED_SELF).unwrap();
    let code = spawn::wait(b).unwrap();
    println!("interruptee exited with {code:#x}");
    check(&mut ok, "deferred bits arrived", code == 0x10);

    // 3. A child's exit can interrupt its parent, after it has ended.
    let d = spawn::spawn("interruptee", 3).unwrap();
    let told = until(50, || INTERRUPTS.load(Ordering::SeqCst) == 0x20);
    let ended = kinfo::env_by_id(d).is_some_and(|e| e.state == abi::tables::env_state::EXITED);
    check(&mut ok, "exit's parent bits arrived once the child had ended", told && ended);
    spawn::wait(d).unwrap();

    // 4. Refusals.
    let flags = |f: u64| sys::call(sc::PCT, [sys::self_id(), f, 1, 0, 0, 0]);
    check(&mut ok, "to itself: BadEnv", sys::interrupt(sys::self_id(), 1, CRED_SELF) == Err(Error::BadEnv));
    let c = spawn::spawn("interruptee", 1).unwrap();
    check(&mut ok, "child ready", until(50, ready(c)));
    check(&mut ok, "no bits: BadLength", sys::interrupt(c, 0, CRED_SELF) == Err(Error::BadLength));
    let r = sys::call(sc::PCT, [c, sc::PCT_INTERRUPT | sc::PCT_SYNC, 1, 0, 0, 0]);
    check(&mut ok, "with PCT_SYNC: BadFlags", r == Error::BadFlags.as_result());
    let r = sys::call(sc::PCT, [c, sc::PCT_INTERRUPT | sc::pct_grant(0), 1, 0, 0, 0]);
    check(&mut ok, "with a grant: BadFlags", r == Error::BadFlags.as_result());
    check(&mut ok, "unknown flag: BadFlags", flags(8) == Error::BadFlags.as_result());
    // The entry's guard: a credential that does not dominate it is refused.
    let guard = sys::cap_derive(CRED_SELF, sc::rights::ALL).unwrap();
    let other = sys::cap_derive(CRED_SELF, sc::rights::ALL).unwrap();
    sys::set_pct_entry_guarded(c, 0, 0, guard).unwrap();
    check(
        &mut ok,
        "guard not dominated: NotPermitted",
        sys::interrupt(c, 1, other) == Err(Error::NotPermitted),
    );
    check(&mut ok, "guard dominated: allowed", sys::interrupt(c, 1, guard).is_ok());
    sys::interrupt(c, 1 << 8, CRED_SELF).unwrap();
    spawn::wait(c).unwrap();
    check(&mut ok, "to an exited environment: BadEnv", sys::interrupt(c, 1, CRED_SELF) == Err(Error::BadEnv));
    let plain = spawn::spawn_stopped("test_hello", 0).unwrap();
    check(&mut ok, "no handler: BadState", sys::interrupt(plain, 1, CRED_SELF) == Err(Error::BadState));

    // 5. env_publish: ancestors may, others may not.
    check(&mut ok, "publish for a child", sys::env_publish(plain, 0x1234).is_ok());
    check(&mut ok, "published word visible", kinfo::env_by_id(plain).is_some_and(|e| e.published == 0x1234));
    check(
        &mut ok,
        "publish for no environment: BadEnv",
        sys::env_publish(0xdead_0000, 1) == Err(Error::BadEnv),
    );
    sys::env_destroy(plain).unwrap();

    if ok {
        println!("interrupt test passed");
        0
    } else {
        1
    }
}
user::entry!(main);
