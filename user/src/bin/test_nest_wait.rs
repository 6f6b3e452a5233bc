//! Boot test: `intercept_wait` (paper 003 §3.2), an interposer's wait for
//! the next event of its subtree: every bad argument is refused with
//! nothing changed (a bad answer leaves the event held: the next wait
//! returns it again), events come in order, the end of the subtree
//! wakes the waiter, blocked meanwhile, with "none", and so does holding
//! a waiting interposer (`env_stop`), which goes on when released.
#![no_std]
#![no_main]

use abi::nest::{answer, event, EnvState, Event};
use abi::syscall::{self as sc, CRED_SELF, ENV_SELF};
use abi::tables::{env_state, ENV_SLOTS};
use abi::Error;
use user::{kinfo, nest, println, spawn, sys};

/// How many null calls the child makes before it exits.
const CALLS: u64 = 3;

fn main(_: u64) -> i32 {
    let mut failures = 0;
    let mut check = |what: &str, ok: bool| {
        println!("{what}: {}", if ok { "ok" } else { "FAILED" });
        failures += !ok as i32;
    };
    let me = sys::self_id();
    let mut ev = Event::default();
    let child = spawn::spawn_stopped("caller", CALLS).unwrap();
    check(
        "a subtree where nothing runs: none, at once",
        nest::intercept_wait(child, &mut ev, 0, 0, 0) == Ok(None),
    );
    check(
        "itself as the root: NotPermitted",
        nest::intercept_wait(ENV_SELF, &mut ev, 0, 0, 0) == Err(Error::NotPermitted),
    );
    check("no such root: BadEnv", nest::intercept_wait(u64::MAX, &mut ev, 0, 0, 0) == Err(Error::BadEnv));
    let raw = |buf: u64| Error::from_result(sys::call(sc::INTERCEPT_WAIT, [child, buf, 0, 0, 0, CRED_SELF]));
    check("an unmapped buffer: BadPointer", raw(0x10) == Some(Error::BadPointer));
    check("a read-only buffer: BadPointer", raw(main as *const () as u64) == Some(Error::BadPointer));
    check(
        "answering one that is not held: BadState",
        nest::intercept_wait(child, &mut ev, child, answer::PASS, 0) == Err(Error::BadState),
    );

    nest::interpose(child, true).unwrap();
    spawn::start(child).unwrap();
    let first = nest::intercept_wait(child, &mut ev, 0, 0, 0);
    check(
        "the first event: the child's null call, for this interposer",
        first == Ok(Some(child)) && ev.kind == event::SYSCALL && ev.number == sc::SELF_ID && ev.to == me,
    );
    check(
        "a bad answer mode: BadFlags",
        nest::intercept_wait(child, &mut ev, child, 7, 0) == Err(Error::BadFlags),
    );
    ev = Event::default();
    let again = nest::intercept_wait(child, &mut ev, 0, 0, 0);
    check(
        "after it, the same event, still held",
        again == Ok(Some(child)) && ev.kind == event::SYSCALL && ev.number == sc::SELF_ID,
    );
    // Answered here: no result event follows. Then each call let through
    // comes back as its result, until `exit`, which has none.
    let mut seen = [(0, 0); 8];
    let mut n = 0;
    let mut reply = (child, answer::RETURN, 0x5ee);
    while let Ok(Some(id)) = nest::intercept_wait(child, &mut ev, reply.0, reply.1, reply.2) {
        if n == seen.len() || id != child {
            break;
        }
        seen[n] = (ev.kind, ev.number);
        n += 1;
        reply = (child, answer::PASS, 0);
    }
    let want = [
        (event::SYSCALL, sc::SELF_ID),
        (event::RESULT, sc::SELF_ID),
        (event::SYSCALL, sc::SELF_ID),
        (event::RESULT, sc::SELF_ID),
        (event::SYSCALL, sc::EXIT),
    ];
    println!("events after the answered one: {:?}", &seen[..n]);
    check("then every call and result in order, then none", seen[..n] == want);
    let exited = kinfo::env_by_id(child).is_some_and(|e| e.state == env_state::EXITED && e.exit_code == 0);
    check("the child ran to its end", exited);
    sys::env_destroy(child).unwrap();
    check("held while it waits, an interposer's wait ends with none", held_waiter());
    failures
}

/// A nester (`passer`) waiting in `intercept_wait` is held with its
/// subtree: its wait ends with 0 (nothing to hide in the kernel), and
/// released, it waits again and serves its child to the end.
fn held_waiter() -> bool {
    let nester = spawn::spawn("passer", 20_000).unwrap();
    let mut waited = false;
    for _ in 0..100_000 {
        if kinfo::env_by_id(nester).unwrap().state == env_state::WAITING {
            waited = true;
            break;
        }
        sys::yield_now();
    }
    nest::env_stop(nester).unwrap();
    let mut st = EnvState::default();
    let got = nest::env_state_get(nester, &mut st);
    let ended = got.is_ok() && st.run == env_state::RUNNABLE && st.regs.rax == 0;
    let shown = kinfo::env_by_id(nester).unwrap().state;
    println!(
        "nester seen waiting: {waited}; held: shows {shown}, record {got:?}, run {} rax {:#x}",
        st.run, st.regs.rax
    );
    // Release the nester and whatever of its subtree is held without an
    // event (one held on an event stays for the nester to answer).
    for s in 0..ENV_SLOTS {
        let e = kinfo::env(s);
        if e.id != 0 && nest::in_subtree(e.id as u64, nester) {
            let _ = sys::env_run(e.id as u64);
        }
    }
    let mut code = None;
    for _ in 0..1_000_000 {
        match kinfo::env_by_id(nester) {
            Some(e) if e.state == env_state::EXITED => {
                code = Some(e.exit_code);
                break;
            }
            _ => sys::yield_now(),
        }
    }
    println!("released nester exited with {code:?}");
    sys::env_destroy(nester).unwrap();
    waited && ended && code == Some(0)
}

user::entry!(main);
