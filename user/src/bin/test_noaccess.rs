//! Boot test: the `map::NO_ACCESS` flag (a page mapped, its frame kept,
//! no user access: PROT_NONE of a touched page). The entry keeps the frame
//! without the user bit and with NX; reads and writes fault; the kernel's
//! own copies refuse it; `protect` back gives the same bytes; it cannot
//! be combined with other rights, reach a frame the caller does not own
//! (a free one, a page table, the kernel's) or a kernel address; a widening from it is checked
//! like any other; `env_mappings` reports it; unmap and an environment's
//! end give the frame's count back.
#![no_std]
#![no_main]

use abi::exception::{vector, ExceptionFrame};
use abi::layout::pte_va;
use abi::nest::Mapping;
use abi::pte::{frame_of, NO_EXEC, PRESENT, USER, WRITABLE};
use abi::syscall::{self as sc, map as mf, CRED_SELF, ENV_SELF, FRAME_ANY};
use abi::Error::*;
use user::{kinfo, println, sys};

static mut FAULTS: u64 = 0;
static mut FAILED: u32 = 0;

fn handler(f: &mut ExceptionFrame) -> bool {
    if f.vector != vector::PAGE_FAULT {
        return false;
    }
    // SAFETY: single-threaded test.
    unsafe { FAULTS += 1 };
    f.regs.rip += 3; // both probes below are 3-byte `mov`s
    true
}

fn check(what: &str, ok: bool) {
    if !ok {
        println!("FAIL: {what}");
        // SAFETY: single-threaded test.
        unsafe { FAILED += 1 };
    }
}

fn faults() -> u64 {
    // SAFETY: read after the handler ran, single-threaded.
    unsafe { FAULTS }
}

fn pte(va: u64) -> u64 {
    // SAFETY: the self-map is mapped read-only for the whole run, and the
    // levels above `va`'s entry are present (it was mapped).
    unsafe { core::ptr::read_volatile(pte_va(va, 0) as *const u64) }
}

/// Reads and writes the page at `va` once each; returns how many faulted.
fn probe(va: u64) -> u64 {
    let before = faults();
    // SAFETY: a fault is skipped by the handler; otherwise the page is ours.
    unsafe {
        core::arch::asm!("mov rcx, [rax]", in("rax") va, out("rcx") _);
        core::arch::asm!("mov [rax], rcx", in("rax") va, in("rcx") 0x5a5a_5a5a_5a5a_5a5au64);
    }
    faults() - before
}

fn main(_: u64) -> i32 {
    user::exc::install(handler).unwrap();
    let va = 0x2100_0000_0000u64;
    let f = sys::frame_alloc(ENV_SELF, FRAME_ANY).unwrap();
    sys::map(ENV_SELF, va, f, mf::WRITE).unwrap();
    // SAFETY: mapped writable just above.
    unsafe { core::ptr::write_bytes(va as *mut u8, 0x77, 4096) };

    // The entry: present, the same frame, no user bit, no write, no run.
    sys::protect(ENV_SELF, va, mf::NO_ACCESS).unwrap();
    let p = pte(va);
    check("entry present with its frame", p & PRESENT != 0 && frame_of(p) == f);
    check("entry has no user bit, no write, NX", p & (USER | WRITABLE) == 0 && p & NO_EXEC != 0);
    check("read and write both fault", probe(va) == 2);
    check("the frame is still counted once", kinfo::frame(f).refs == 1);

    // The kernel's copies refuse it as they refuse an unmapped page.
    // SAFETY: the kernel reads the bytes through the page tables, not us.
    let from = unsafe { core::slice::from_raw_parts(va as *const u8, 8) };
    check("debug_write from it: BadPointer", sys::debug_write(from) == Err(BadPointer));
    let child = sys::env_create().unwrap();
    let got = sys::call(sc::ENV_GET_REGS, [child, va, CRED_SELF, 0, 0, 0]);
    check("env_get_regs into it: BadPointer", got == -(BadPointer as i64));
    check(
        "exception save area on it: BadPointer",
        sys::set_exception_handler(ENV_SELF, main as *const () as u64, va + 4096, va) == Err(BadPointer),
    );

    // Bad combinations, frames and addresses.
    let other = 0x2100_0000_1000u64;
    for bad in [mf::NO_ACCESS | mf::WRITE, mf::NO_ACCESS | mf::EXEC, 1 << 3] {
        check("a flag combination: BadFlags", sys::map(ENV_SELF, other, f, bad) == Err(BadFlags));
        check("the same in protect: BadFlags", sys::protect(ENV_SELF, va, bad) == Err(BadFlags));
    }
    check(
        "protect NO_ACCESS of nothing: NotMapped",
        sys::protect(ENV_SELF, other, mf::NO_ACCESS) == Err(NotMapped),
    );
    check(
        "at a kernel address: BadAddress",
        sys::map(ENV_SELF, 0xffff_8000_0000_0000, f, mf::NO_ACCESS) == Err(BadAddress),
    );
    // A page table's frame: the kernel's, not a user frame.
    let table = frame_of(pte_entry_above(va));
    check("a page-table frame: NotOwner", sys::map(ENV_SELF, other, table, mf::NO_ACCESS) == Err(NotOwner));
    check(
        "a frame past memory: BadFrame",
        sys::map(ENV_SELF, other, 1 << 40, mf::NO_ACCESS) == Err(BadFrame),
    );
    // A frame nobody owns (allocated and freed again).
    let freed = sys::frame_alloc(ENV_SELF, FRAME_ANY).unwrap();
    sys::frame_free(freed).unwrap();
    check("a free frame: NotOwner", sys::map(ENV_SELF, other, freed, mf::NO_ACCESS) == Err(NotOwner));
    let kinfo_frame = frame_of(pte(abi::layout::KINFO_VA));
    check("a kernel frame: NotOwner", sys::map(ENV_SELF, other, kinfo_frame, mf::NO_ACCESS) == Err(NotOwner));
    check("nothing mapped by the refusals", pte(other) & PRESENT == 0);

    // Widening from NO_ACCESS through another mapping is checked.
    check(
        "map_from of it writable: NotPermitted",
        sys::map_from(ENV_SELF, other, va, mf::WRITE) == Err(NotPermitted),
    );
    check(
        "map_from of it executable: NotPermitted",
        sys::map_from(ENV_SELF, other, va, mf::EXEC) == Err(NotPermitted),
    );

    // A child's view of it: `env_mappings` says NO_ACCESS; its end gives
    // the frame's count back.
    sys::map(child, va, f, mf::NO_ACCESS).unwrap();
    check("two mappings counted", kinfo::frame(f).refs == 2);
    let mut m = [Mapping::default(); 2];
    let n = user::nest::env_mappings(child, 0, &mut m);
    check("env_mappings reports NO_ACCESS", n == Ok(1) && m[0].va == va && m[0].flags == mf::NO_ACCESS);
    sys::env_destroy(child).unwrap();
    check("the child's end drops its count", kinfo::frame(f).refs == 1);

    // protect_range over a run; then back: the same bytes, readable and
    // writable again.
    sys::protect_range(ENV_SELF, va, 1, mf::NO_ACCESS).unwrap();
    check("protect_range NO_ACCESS faults too", probe(va) == 2);
    sys::protect(ENV_SELF, va, mf::WRITE).unwrap();
    // SAFETY: mapped writable again.
    let kept = unsafe { core::slice::from_raw_parts(va as *const u8, 4096) }.iter().all(|&b| b == 0x77);
    check("the bytes back after protect", kept);
    check("read and write work again", probe(va) == 0);

    // Unmapping it gives the count back.
    sys::protect(ENV_SELF, va, mf::NO_ACCESS).unwrap();
    sys::unmap(ENV_SELF, va).unwrap();
    check("unmap drops the count", kinfo::frame(f).refs == 0);
    check("frame freed", sys::frame_free(f).is_ok());

    // SAFETY: single-threaded test.
    let failed = unsafe { FAILED };
    println!("no-access mappings: {failed} failed");
    (failed != 0) as i32
}

/// The entry of the page table that maps `va` (one level up).
fn pte_entry_above(va: u64) -> u64 {
    // SAFETY: as `pte`: the levels above a mapped page are present.
    unsafe { core::ptr::read_volatile(pte_va(va, 1) as *const u64) }
}

user::entry!(main);
