//! Boot test: the CPU's abort protocol (paper 001 §4.2.1). A rogue that
//! asks for end-of-slice upcalls and then keeps the CPU is preempted by
//! force, penalised, and destroyed after three offences, with a console
//! message; a polite environment that yields when told is never punished
//! and receives start-of-slice upcalls; a plain worker beside them keeps
//! its share of the CPU.
#![no_std]
#![no_main]

use abi::exception::vector;
use abi::tables::FAULT_EXIT_BASE;
use user::{kinfo, println, spawn};

fn main(_: u64) -> i32 {
    let rogue = spawn::spawn("slicer", 1).unwrap();
    let polite = spawn::spawn("slicer", 2).unwrap();
    let worker = spawn::spawn("slicer", 3).unwrap();
    let owners = kinfo::slices().owner.iter().filter(|&&o| o != 0).count();
    let rogue_code = spawn::wait(rogue).unwrap();
    let polite_code = spawn::wait(polite).unwrap();
    let share = spawn::wait(worker).unwrap();
    println!(
        "rogue ended with {rogue_code}, polite with {polite_code}; the worker ran in {share} of 60 ticks ({owners} slice owners)"
    );
    let want_rogue = FAULT_EXIT_BASE - vector::END_OF_SLICE as i32;
    // Four owners share the CPU; the rogue loses slices, so the worker's
    // fair share is at least a quarter.
    if rogue_code == want_rogue && polite_code == 0 && share >= 60 / 4 - 2 {
        0
    } else {
        1
    }
}

user::entry!(main);
