//! Boot test: wakeup predicates (paper 000 §5.1). A sleeper does not run
//! while its predicate is false and wakes when its parent writes the word
//! the predicate reads; another wakes at its deadline; unsafe programs are
//! refused with the verifier's reason on the console; identical predicates
//! share one compilation.
#![no_std]
#![no_main]

use abi::syscall::{map as mf, Region, ENV_SELF, FRAME_ANY};
use abi::tables::env_state;
use abi::Error;
use user::{ebpf, kinfo, println, spawn, sys};

const WORD: u64 = 0x3000_0000_0000;
const MINE: u64 = 0x3100_0000_0000;

/// A child sleeping on the word in a page shared with us.
fn start_sleeper(ticks: u64, frame: u64) -> u64 {
    let child = spawn::spawn_stopped("sleeper", ticks).unwrap();
    sys::map(child, WORD, frame, 0).unwrap();
    spawn::start(child).unwrap();
    child
}

fn set_word(v: u64) {
    // SAFETY: MINE maps the shared frame writable.
    unsafe { core::ptr::write_volatile(MINE as *mut u64, v) };
}

fn main(_: u64) -> i32 {
    let mut ok = true;
    let f = sys::frame_alloc(ENV_SELF, FRAME_ANY).unwrap();
    sys::map(ENV_SELF, MINE, f, mf::WRITE).unwrap();

    // Woken by the predicate: it must not run before we write the word.
    let child = start_sleeper(100_000, f);
    while kinfo::env_by_id(child).is_some_and(|e| e.state != env_state::SLEEPING) {
        sys::yield_now();
    }
    for _ in 0..200 {
        sys::yield_now(); // plenty of its slices come round; it stays asleep
    }
    let still = kinfo::env_by_id(child).map(|e| e.state);
    set_word(7);
    let code = spawn::wait(child).unwrap();
    println!(
        "asleep while false: {:?}; woken with code {code} (want 17)",
        still == Some(env_state::SLEEPING)
    );
    ok &= still == Some(env_state::SLEEPING) && code == 17;

    // Woken by its deadline.
    set_word(0);
    let child = start_sleeper(5, f);
    let code = spawn::wait(child).unwrap();
    println!("deadline: code {code} (want 0)");
    ok &= code == 0;

    // Refused: a loop, and a read past the region.
    let looping = [ebpf::mov_imm(0, 0), ebpf::ja(-2), ebpf::EXIT];
    let r = sys::pred_install(&looping, &[]);
    println!("a looping predicate: {r:?}");
    ok &= r == Err(Error::BadProgram);
    let region = [Region { va: MINE, len: 4 }];
    let r = sys::pred_install(&ebpf::WORD_NONZERO, &region);
    println!("an 8-byte read from a 4-byte region: {r:?}");
    ok &= r == Err(Error::BadProgram);
    let r = sys::pred_install(&ebpf::WORD_NONZERO, &[Region { va: 0x5000_0000_0000, len: 8 }]);
    ok &= r == Err(Error::BadPointer);

    // Identical predicates share one compilation: a second identical one
    // costs no code page, a different one (other region size) does.
    let region = [Region { va: MINE, len: 8 }];
    let a = sys::pred_install(&ebpf::WORD_NONZERO, &region).unwrap();
    let before = kinfo::free_frames();
    let b = sys::pred_install(&ebpf::WORD_NONZERO, &region).unwrap();
    let same = kinfo::free_frames();
    let c = sys::pred_install(&ebpf::WORD_NONZERO, &[Region { va: MINE, len: 16 }]).unwrap();
    let other = kinfo::free_frames();
    println!("free frames: {before} with one predicate, {same} after an identical second, {other} after a different third");
    ok &= same == before && other < same;
    sys::pred_free(c).unwrap();
    set_word(1);
    ok &= sys::sleep(a, 0) == Ok(1) && sys::sleep(b, 0) == Ok(1);
    sys::pred_free(a).unwrap();
    sys::pred_free(b).unwrap();
    ok &= sys::pred_free(b) == Err(Error::NotPermitted);
    if ok {
        0
    } else {
        1
    }
}

user::entry!(main);
