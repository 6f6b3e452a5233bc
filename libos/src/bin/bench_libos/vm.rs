//! Virtual memory (paper 001 §5.2, after Appel and Li): the library's own
//! exception handler passes protection faults to this program's handler,
//! which changes rights with `sys::protect`; `dirty` reads the page-table
//! entry through the kernel's read-only self-map.

use super::rdtsc;
use abi::exception::ExceptionFrame;
use abi::syscall::{map as mf, ENV_SELF, FRAME_ANY};
use core::hint::black_box;
use core::sync::atomic::{AtomicU64, Ordering::Relaxed};
use libos::layout::PAGE;
use libos::vm;
use user::sys;

const NPAGES: u64 = 100;
/// The pages the virtual-memory experiments protect: far from the
/// library's own ranges (`libos::layout`).
const AREA: u64 = 0x2000_0000_0000;
pub const READ_ONLY: u64 = 0;

/// Linux's benchmark's xorshift: a fixed, cheap sequence of pages.
static RNG: AtomicU64 = AtomicU64::new(2463534242);

fn next_random() -> u64 {
    let mut x = RNG.load(Relaxed) as u32;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    RNG.store(x as u64, Relaxed);
    x as u64
}

fn page(i: u64) -> u64 {
    AREA + i * PAGE
}

fn protect(va: u64, flags: u64) {
    sys::protect(ENV_SELF, va, flags).expect("protect");
}

/// All pages at once, with one batched call (as Linux's one `mprotect`).
fn protect_all(flags: u64) {
    sys::protect_range(0, page(0), NPAGES, flags).expect("protect_range");
}

/// A write to `va` (the access the experiments make).
fn touch(va: u64) {
    // SAFETY: `va` is one of AREA's pages, mapped for the whole run; when
    // it is write-protected the fault handler makes it writable and the
    // write is retried.
    unsafe { core::ptr::write_volatile(va as *mut u8, 1) };
}

// ---- the fault handler -------------------------------------------------

const TRAP: u64 = 0;
const APPEL1: u64 = 1;
const APPEL2: u64 = 2;

/// What the handler does (one of the constants above).
static MODE: AtomicU64 = AtomicU64::new(TRAP);
/// appel1: the one page left writable.
static OPEN: AtomicU64 = AtomicU64::new(0);
/// trap: instructions spent in the handler's `protect`, subtracted.
static HANDLER_TIME: AtomicU64 = AtomicU64::new(0);

pub fn on_fault(f: &mut ExceptionFrame) -> bool {
    let va = f.fault_addr & !(PAGE - 1);
    if !(AREA..page(NPAGES)).contains(&va) {
        return false;
    }
    match MODE.load(Relaxed) {
        TRAP => {
            let t = rdtsc();
            protect(va, mf::WRITE);
            HANDLER_TIME.fetch_add(rdtsc() - t, Relaxed);
        }
        APPEL1 => {
            protect(OPEN.load(Relaxed), READ_ONLY);
            protect(va, mf::WRITE);
            OPEN.store(va, Relaxed);
        }
        _ => protect(va, mf::WRITE),
    }
    true
}

// ---- virtual memory ----------------------------------------------------

pub fn map_area() {
    for i in 0..NPAGES {
        let f = sys::frame_alloc(ENV_SELF, FRAME_ANY).expect("frame");
        sys::map(ENV_SELF, page(i), f, mf::WRITE).expect("map");
        touch(page(i));
    }
}

pub fn unmap_area() {
    for i in 0..NPAGES {
        vm::drop_page(page(i));
    }
}

/// dirty: is a random page of the 100 dirty? A walk of the page table
/// through the self-map to the entry, and its dirty bit.
pub fn dirty(n: u64) -> u64 {
    let mut dirty = 0;
    let t = rdtsc();
    for _ in 0..n {
        let pte = vm::pte(page(next_random() % NPAGES)).expect("mapped");
        dirty += (pte & abi::pte::DIRTY != 0) as u64;
    }
    let total = rdtsc() - t;
    black_box(dirty);
    total
}

/// prot1: write-protect one page, then unprotect it; n counts calls.
pub fn prot1(n: u64) -> u64 {
    let t = rdtsc();
    for i in 0..n {
        protect(page(0), if i & 1 == 1 { mf::WRITE } else { READ_ONLY });
    }
    let total = rdtsc() - t;
    protect(page(0), mf::WRITE);
    total
}

/// prot100 / unprot100: change all 100 pages; the other direction untimed.
pub fn prot_many(n: u64, timed: u64, other: u64) -> u64 {
    let mut total = 0;
    for _ in 0..n {
        protect_all(other);
        let t = rdtsc();
        protect_all(timed);
        total += rdtsc() - t;
    }
    protect_all(mf::WRITE);
    total
}

/// trap: a write to a protected page; the handler unprotects it, and the
/// time of that `protect` is subtracted.
pub fn trap(n: u64) -> u64 {
    MODE.store(TRAP, Relaxed);
    HANDLER_TIME.store(0, Relaxed);
    let mut total = 0;
    for _ in 0..n {
        protect(page(0), READ_ONLY);
        let t = rdtsc();
        touch(page(0));
        total += rdtsc() - t;
    }
    total - HANDLER_TIME.load(Relaxed)
}

/// appel1: write a random protected page of 100; the handler protects the
/// page it opened last time and unprotects the faulting one.
pub fn appel1(n: u64) -> u64 {
    MODE.store(APPEL1, Relaxed);
    for i in 1..NPAGES {
        protect(page(i), READ_ONLY);
    }
    OPEN.store(page(0), Relaxed);
    let t = rdtsc();
    for _ in 0..n {
        let mut va = page(next_random() % NPAGES);
        while va == OPEN.load(Relaxed) {
            va = page(next_random() % NPAGES);
        }
        touch(va);
    }
    let total = rdtsc() - t;
    protect_all(mf::WRITE);
    total
}

/// appel2: protect 100 pages, write each in a random order; the handler
/// unprotects the faulting page. n counts pages.
pub fn appel2(n: u64) -> u64 {
    MODE.store(APPEL2, Relaxed);
    let mut order = [0u64; NPAGES as usize];
    let mut total = 0;
    let mut done = 0;
    while done < n {
        for (i, o) in order.iter_mut().enumerate() {
            *o = i as u64;
        }
        for i in (1..NPAGES as usize).rev() {
            let j = (next_random() % (i as u64 + 1)) as usize;
            order.swap(i, j);
        }
        let t = rdtsc();
        protect_all(READ_ONLY);
        for &i in &order {
            touch(page(i));
        }
        total += rdtsc() - t;
        done += NPAGES;
    }
    total
}
