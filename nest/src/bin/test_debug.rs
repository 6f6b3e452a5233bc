//! Boot test: the debugger stub (`nest::debug`) over `steppee`. It sets a
//! breakpoint at the routine the program announces, single-steps it
//! instruction by instruction and compares each `rip` with the routine's
//! instruction offsets (its disassembly, `steppee.rs`), changes `rax`
//! half-way and sees the exit code follow; a hostile routine that clears
//! the trap flag with `popf`, behind its own exception handler, is
//! stepped through to its end all the same, and its handler sees nothing.
#![no_std]
#![no_main]

use abi::exception::vector;
use abi::nest::event;
use abi::syscall as sc;
use nest::debug::{Debugger, Stop};
use user::{nest as un, println, spawn, sys};

/// `step_me`'s offsets in execution order, and `hostile`'s.
const STEP_ME: &[u64] = &[0, 5, 10, 12, 14, 10, 12, 14, 10, 12, 14, 16];
const HOSTILE: &[u64] = &[0, 1, 9, 10, 15, 20, 22, 24, 20, 22, 24, 20, 22, 24, 26];

/// Debugs `steppee arg`: a breakpoint on its routine, then steps while
/// `offsets` last (at offset `poke_at`, first time, `rax` = 100), then
/// lets it run free. The offsets it saw and its exit code.
fn debug(arg: u64, offsets: &[u64], poke_at: u64) -> ([u64; 32], usize, i32) {
    let child = spawn::spawn_stopped("steppee", arg).unwrap();
    un::interpose(child, true).unwrap();
    spawn::start(child).unwrap();
    let mut dbg = Debugger::new(child);
    let mut bp = None;
    let stop = dbg
        .wait(|env, ev| {
            // Held on its call: its code can be written safely.
            if ev.kind == event::SYSCALL && ev.number == sc::ENV_PUBLISH {
                bp = Some(Debugger::new(child).set_breakpoint(env, ev.args[1]).unwrap());
            }
        })
        .unwrap()
        .expect("stopped at the breakpoint");
    let bp = bp.expect("the routine's address was published");
    assert_eq!(stop, Stop { env: child, vector: vector::BREAKPOINT, rip: bp.addr + 1 });
    dbg.clear_breakpoint(child, bp).unwrap();
    let (mut seen, mut n, mut poked) = ([0u64; 32], 0, false);
    let mut rip = bp.addr;
    loop {
        seen[n] = rip - bp.addr;
        n += 1;
        if rip - bp.addr == poke_at && !poked {
            let mut regs = dbg.regs(child).unwrap();
            regs.rax = 100;
            dbg.set_regs(child, &regs).unwrap();
            poked = true;
        }
        if n == offsets.len() {
            break;
        }
        dbg.step(child).unwrap();
        let stop = dbg.wait(|_, _| {}).unwrap().expect("a step");
        assert_eq!((stop.env, stop.vector), (child, vector::DEBUG));
        rip = stop.rip;
    }
    dbg.resume_free(child).unwrap();
    assert_eq!(dbg.wait(|_, _| {}).unwrap(), None, "no stop after resuming");
    let code = user::kinfo::env_by_id(child).unwrap().exit_code;
    sys::env_destroy(child).unwrap();
    (seen, n, code)
}

fn main(_: u64) -> i32 {
    let bare = spawn::wait(spawn::spawn("steppee", 0).unwrap()).unwrap();
    assert_eq!(bare, 7, "steppee alone");

    let (seen, n, code) = debug(0, STEP_ME, 10);
    assert_eq!(&seen[..n], STEP_ME, "rip offsets of step_me");
    // rax = 100 before the loop adds 3 + 2 + 1.
    assert_eq!(code, 106, "the changed register");
    println!("debug: stepped {n} instructions of step_me, rax changed: ok");

    let (seen, n, code) = debug(1, HOSTILE, u64::MAX);
    assert_eq!(&seen[..n], HOSTILE, "rip offsets of hostile");
    assert_eq!(code, 7, "its own handler saw no #DB (1000 per one it saw)");
    println!("debug: stepped a hostile child through its popf: ok");
    0
}

user::entry!(main);
