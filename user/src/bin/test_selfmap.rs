//! Boot test: an environment reads its own page tables through the
//! read-only self-map (`abi::layout::PAGE_TABLE_VA`) and cannot write them.
#![no_std]
#![no_main]

use abi::exception::{vector, ExceptionFrame};
use abi::layout::pte_va;
use abi::pte::{frame_of, PRESENT, WRITABLE};
use abi::syscall::{map as mf, ENV_SELF, FRAME_ANY};
use user::{println, sys};

static mut WRITE_FAULTS: u64 = 0;

fn handler(f: &mut ExceptionFrame) -> bool {
    if f.vector != vector::PAGE_FAULT {
        return false;
    }
    // SAFETY: single-threaded test.
    unsafe { WRITE_FAULTS += 1 };
    f.regs.rip += 3; // skip the 3-byte `mov [rax], rcx` below
    true
}

fn read(va: u64) -> u64 {
    // SAFETY: the self-map is mapped read-only for the whole run.
    unsafe { core::ptr::read_volatile(va as *const u64) }
}

fn main(_: u64) -> i32 {
    user::exc::install(handler).unwrap();
    let va = 0x2000_0000_0000u64;
    let f = sys::frame_alloc(ENV_SELF, FRAME_ANY).unwrap();
    sys::map(ENV_SELF, va, f, mf::WRITE).unwrap();
    let top_levels_present = (1..4).all(|l| read(pte_va(va, l)) & PRESENT != 0);
    let pte = read(pte_va(va, 0));
    let frame_ok = frame_of(pte) == f;
    let writable = pte & WRITABLE != 0;
    sys::protect(ENV_SELF, va, 0).unwrap();
    let read_only = read(pte_va(va, 0)) & WRITABLE == 0;
    // A write into the self-map must fault.
    // SAFETY: the handler skips the faulting store.
    unsafe { core::arch::asm!("mov [rax], rcx", in("rax") pte_va(va, 0), in("rcx") 0u64) };
    // SAFETY: read after the handler ran.
    let faults = unsafe { WRITE_FAULTS };
    println!("levels present {top_levels_present}, frame {frame_ok}, writable {writable}, read-only after protect {read_only}, write faults {faults}");
    if top_levels_present && frame_ok && writable && read_only && faults == 1 {
        0
    } else {
        1
    }
}

user::entry!(main);
