//! Helper for the revocation test: holds a pool of 64 mapped frames.
//! Mode 1 complies with requests to give frames back (frees pool pages of
//! its choice). Mode 2 ignores them, and when told frames were repossessed
//! checks each entry of its repossession vector against its own page
//! tables, then exits with the number of entries it could verify.
#![no_std]
#![no_main]

use abi::exception::{vector, ExceptionFrame, RepossessionVector};
use abi::layout::pte_va;
use abi::pte::{frame_of, PRESENT};
use abi::syscall::{map as mf, ENV_SELF, FRAME_ANY};
use core::sync::atomic::{AtomicU64, Ordering};
use user::sys;

const POOL: u64 = 0x2000_0000_0000;
const PAGES: u64 = 64;

#[repr(C, align(4096))]
struct Vector(RepossessionVector);
static mut VECTOR: Vector =
    Vector(RepossessionVector { count: 0, entries: [abi::exception::Repossessed { va: 0, frame: 0 }; 255] });
static MAPPED: AtomicU64 = AtomicU64::new(0);
static VERIFIED: AtomicU64 = AtomicU64::new(u64::MAX);

/// Gives back the highest pool pages.
fn comply(f: &mut ExceptionFrame) -> bool {
    if f.vector == vector::REVOKE_REQUEST {
        for _ in 0..f.error_code {
            let n = MAPPED.fetch_sub(1, Ordering::Relaxed) - 1;
            let va = POOL + n * 4096;
            // SAFETY: reading our own page-table entry through the self-map.
            let frame = frame_of(unsafe { core::ptr::read_volatile(pte_va(va, 0) as *const u64) });
            sys::unmap(ENV_SELF, va).unwrap();
            sys::frame_free(frame).unwrap();
        }
    }
    true
}

fn ignore(f: &mut ExceptionFrame) -> bool {
    if f.vector == vector::REPOSSESSED {
        // SAFETY: the kernel writes the vector only between our
        // instructions; we read it in our own handler.
        let v = unsafe { core::ptr::read_volatile(&raw const VECTOR.0) };
        let gone = v.entries[..v.count as usize]
            .iter()
            .filter(|e| {
                // SAFETY: reading our own page-table entries via the self-map.
                let pte = unsafe { core::ptr::read_volatile(pte_va(e.va, 0) as *const u64) };
                (POOL..POOL + PAGES * 4096).contains(&e.va) && pte & PRESENT == 0
            })
            .count() as u64;
        VERIFIED.store(if gone == f.error_code { gone } else { 999 }, Ordering::Relaxed);
    }
    true
}

fn main(mode: u64) -> i32 {
    user::exc::install(if mode == 1 { comply } else { ignore }).unwrap();
    sys::set_repossession_vector(ENV_SELF, (&raw const VECTOR) as u64).unwrap();
    for i in 0..PAGES {
        let f = sys::frame_alloc(ENV_SELF, FRAME_ANY).unwrap();
        sys::map(ENV_SELF, POOL + i * 4096, f, mf::WRITE).unwrap();
        MAPPED.store(i + 1, Ordering::Relaxed);
    }
    loop {
        let v = VERIFIED.load(Ordering::Relaxed);
        if v != u64::MAX {
            return v as i32;
        }
        sys::yield_now();
    }
}

user::entry!(main);
