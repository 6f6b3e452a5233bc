//! Boot test: the CPU's abort protocol (paper 001 §4.2.1). A rogue that
//! asks for end-of-slice upcalls and then keeps the CPU is preempted by
//! force, penalised, and destroyed after three offences, with a console
//! message; a polite environment that yields when told is never punished
//! and receives start-of-slice upcalls; one that spends most of its time in
//! critical sections (upcalls deferred) is not punished either; a plain
//! worker beside them keeps its share of the CPU.
#![no_std]
#![no_main]

use abi::exception::vector;
use abi::tables::FAULT_EXIT_BASE;
use user::{kinfo, println, spawn};

fn main(_: u64) -> i32 {
    let rogue = spawn::spawn("slicer", 1).unwrap();
    let polite = spawn::spawn("slicer", 2).unwrap();
    let worker = spawn::spawn("slicer", 3).unwrap();
    let careful = spawn::spawn("slicer", 4).unwrap();
    let owners = kinfo::slices().owner.iter().filter(|&&o| o != 0).count();
    let rogue_code = spawn::wait(rogue).unwrap();
    let polite_code = spawn::wait(polite).unwrap();
    let share = spawn::wait(worker).unwrap();
    let careful_code = spawn::wait(careful).unwrap();
    println!(
        "rogue ended with {rogue_code}, polite with {polite_code}, careful with {careful_code}; the worker ran in {share} of 60 ticks ({owners} slice owners)"
    );
    let want_rogue = FAULT_EXIT_BASE - vector::END_OF_SLICE as i32;
    // Five owners share the CPU; the rogue loses slices, so the worker's
    // fair share is at least a fifth.
    let fair = rogue_code == want_rogue && polite_code == 0 && careful_code == 0 && share >= 60 / 5 - 2;
    if fair {
        0
    } else {
        1
    }
}

user::entry!(main);
