//! Boot test: environments over one address space (`env_create_shared`,
//! `kernel/src/aspace.rs`). A sharer runs code of this image on its own
//! stack, maps a page the creator then reads without mapping anything,
//! and the page tables that mapping needed are charged to the creator,
//! not to the sharer (so they outlive it). It sleeps in the kernel while
//! the creator runs. It acts with its owner's capability list (makes a
//! sibling, derives into the owner's list); bad ids are refused. Destroying a sharer leaves the
//! owner's tables alone; destroying an owner ends its sharers and gives
//! every frame back. A sharer asleep on a predicate its owner frees
//! wakes.
#![no_std]
#![no_main]

use abi::syscall::{map, Region, CRED_SELF, ENV_SELF, FRAME_ANY};
use abi::tables::env_state;
use abi::Error;
use core::sync::atomic::{AtomicU64, Ordering::SeqCst};
use user::{ebpf, kinfo, println, sys};

/// A page in a 512 GiB slot nothing else uses: mapping it needs three new
/// page tables.
const FAR: u64 = 0x4000_0000_0000;

#[repr(C, align(16))]
struct Stack([u8; 16384]);
static mut STACK: Stack = Stack([0; 16384]);

static STEP: AtomicU64 = AtomicU64::new(0);
/// Set by the creator to wake the sharer.
static GO: AtomicU64 = AtomicU64::new(0);
/// The sibling the sharer made, and the slot of the capability it derived.
static SIBLING: AtomicU64 = AtomicU64::new(0);
static DERIVED: AtomicU64 = AtomicU64::new(0);
/// The sharer's id as it sees itself.
static SELF: AtomicU64 = AtomicU64::new(0);
/// The predicate the sharer sleeps on, and whether a sleep on it was
/// refused after the owner freed it under the sleeper.
static PRED: AtomicU64 = AtomicU64::new(0);
static GONE: AtomicU64 = AtomicU64::new(0);

extern "C" fn sharer() -> ! {
    SELF.store(sys::self_id(), SeqCst);
    let f = sys::frame_alloc(ENV_SELF, FRAME_ANY).unwrap();
    sys::map(ENV_SELF, FAR, f, map::WRITE).unwrap();
    // SAFETY: just mapped, writable, nothing else refers to it.
    unsafe { (FAR as *mut u64).write_volatile(0x5eed) };
    // It acts with its owner's capability list: its own credential makes
    // a sibling, and what it derives lands in the owner's list.
    SIBLING.store(sys::env_create_shared(ENV_SELF, CRED_SELF).unwrap_or(0), SeqCst);
    DERIVED.store(sys::cap_derive(CRED_SELF, abi::syscall::rights::READ).unwrap_or(0), SeqCst);
    // Sleeps in the kernel while the creator checks what it sees.
    let go = Region { va: (&raw const GO) as u64, len: 8 };
    PRED.store(sys::pred_install(&ebpf::WORD_NONZERO, &[go]).unwrap(), SeqCst);
    STEP.store(1, SeqCst);
    while GO.load(SeqCst) == 0 {
        if sys::sleep(PRED.load(SeqCst), 0).is_err() {
            GONE.store(1, SeqCst);
            sys::yield_now();
        }
    }
    sys::exit(7)
}

fn check(what: &str, ok: bool) -> bool {
    if !ok {
        println!("aspace: FAILED: {what}");
    }
    ok
}

fn main(_: u64) -> i32 {
    let me = sys::self_id();
    // The kernel's code memory for predicates grows on first use and stays:
    // grown before counting.
    let go = Region { va: (&raw const GO) as u64, len: 8 };
    sys::pred_free(sys::pred_install(&ebpf::WORD_NONZERO, &[go]).unwrap()).unwrap();
    let before = kinfo::free_plus_own();
    let mut ok =
        check("bad id refused", sys::env_create_shared(0x7fff_ffff, CRED_SELF) == Err(Error::BadEnv));
    ok &= check("bad cred refused", sys::env_create_shared(ENV_SELF, 200).is_err());

    let t = sys::env_create_shared(ENV_SELF, CRED_SELF).unwrap();
    ok &= check("sharer is my child", kinfo::env_by_id(t).is_some_and(|e| e.parent as u64 == me));
    let top = (&raw const STACK) as u64 + 16384 - 8;
    let regs = abi::exception::Regs { rip: sharer as *const () as u64, rsp: top, ..Default::default() };
    sys::env_set_regs(t, &regs).unwrap();
    let mine = kinfo::env_by_id(me).unwrap().frames;
    sys::slice_alloc(t, abi::syscall::SLICE_ANY).unwrap();
    sys::env_run(t).unwrap();
    while STEP.load(SeqCst) != 1 {
        sys::yield_now();
    }
    // SAFETY: the sharer mapped it in our common space and wrote it.
    let seen = unsafe { (FAR as *const u64).read_volatile() };
    ok &= check("sharer's mapping seen by the creator", seen == 0x5eed);
    ok &= check("sharer ran as itself", SELF.load(SeqCst) == t);
    let sib = SIBLING.load(SeqCst);
    ok &= check("sharer made a sibling", kinfo::env_by_id(sib).is_some_and(|e| e.parent as u64 == me));
    sys::env_destroy(sib).unwrap();
    ok &= check("sharer's derived capability is in my list", sys::cap_revoke(DERIVED.load(SeqCst)) == Ok(1));
    let tables = kinfo::env_by_id(me).unwrap().frames - mine;
    let its = kinfo::env_by_id(t).unwrap().frames;
    println!("aspace: tables charged to the owner {tables}, frames to the sharer {its}");
    ok &= check("tables charged to the owner", tables == 3 && its == 1);
    let asleep = (0..1000).any(|_| {
        sys::yield_now();
        kinfo::env_by_id(t).unwrap().state == env_state::SLEEPING
    });
    ok &= check("sharer asleep in the kernel", asleep);
    // Its predicate is its owner's: the owner frees it under the sleeper,
    // whose next look must not run what is no longer there (the kernel
    // ran the freed entry's code over null regions, and faulted). The
    // sleeper wakes, and its next sleep on the id is refused.
    sys::pred_free(PRED.load(SeqCst)).unwrap();
    let woke = (0..100_000).any(|_| {
        sys::yield_now();
        GONE.load(SeqCst) == 1
    });
    ok &= check("a sleeper whose predicate was freed wakes", woke);
    GO.store(1, SeqCst);
    while kinfo::env_by_id(t).unwrap().state != env_state::EXITED {
        sys::yield_now();
    }
    ok &= check("exit code", kinfo::env_by_id(t).unwrap().exit_code == 7);
    sys::env_destroy(t).unwrap();
    // SAFETY: still mapped: the sharer's end leaves the tables alone.
    let seen = unsafe { (FAR as *const u64).read_volatile() };
    ok &= check("mapping outlives the sharer", seen == 0x5eed);
    sys::unmap(ENV_SELF, FAR).unwrap();

    // An owner destroyed with sharers still in it (one stopped, one made
    // by a sharer of a sharer's id): each goes, every frame comes back.
    let o = sys::env_create().unwrap();
    let f = sys::frame_alloc(o, FRAME_ANY).unwrap();
    sys::map(o, FAR, f, map::WRITE).unwrap();
    let s1 = sys::env_create_shared(o, CRED_SELF).unwrap();
    let s2 = sys::env_create_shared(s1, CRED_SELF).unwrap();
    ok &= check("a sharer's sharer is the owner's child", kinfo::env_by_id(s2).unwrap().parent as u64 == o);
    sys::env_destroy(s1).unwrap();
    let mut m = [abi::nest::Mapping::default(); 1];
    ok &=
        check("owner keeps its mapping", user::nest::env_mappings(o, FAR, &mut m) == Ok(1) && m[0].va == FAR);
    sys::env_destroy(o).unwrap();
    ok &= check("sharers gone with the owner", kinfo::env_by_id(s2).is_none());
    let after = kinfo::free_plus_own();
    println!("aspace: free+own frames before {before}, after {after}");
    ok &= check("every frame back", before == after);
    if ok {
        println!("aspace: ok");
    }
    i32::from(!ok)
}

user::entry!(main);
