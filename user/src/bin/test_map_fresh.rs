//! Boot test: `map_fresh` (issue 26) against hostile arguments. A range
//! that wraps, runs into the reserved windows or the kernel half, is
//! unaligned, empty or too long, with unknown flags, naming no
//! environment, asked with a credential that does not cover the space (a
//! read-only one, a child on its parent's space), that overlaps a mapped
//! page, or that needs more frames than are free, is refused with its
//! specific error, and nothing is allocated or mapped. A range across a
//! leaf table's edge gets zeroed frames of its own, each mapped once,
//! writable as asked; another space's range is filled without touching
//! ours; and every frame comes back.
#![no_std]
#![no_main]

use abi::layout::{pte_va, PAGE_SIZE, USER_END};
use abi::syscall::{self as sc, map as mf, rights, CRED_SELF, ENV_SELF, FRAME_ANY, RANGE_MAX};
use abi::Error::{self, *};
use user::verdict::Checks;
use user::{kinfo, println, spawn, sys};

/// Eight pages from two below a 2 MiB boundary: the range crosses from
/// one leaf table into the next.
const BASE: u64 = 0x3200_001f_e000;
const PAGES: u64 = 8;

static T: Checks = Checks::new("map_fresh");

/// `map_fresh` with the credential in slot `cred`.
fn raw(cred: u64, env: u64, va: u64, pages: u64, flags: u64) -> Result<u64, Error> {
    sys::result(sys::call(sc::MAP_FRESH, [env, va, pages, flags, cred, 0]))
}

/// The entry mapping `va` in our own space, read through the self-map.
fn pte(va: u64) -> Option<u64> {
    // Each level's entry must be present before the next is read.
    for level in (1..4).rev() {
        // SAFETY: the self-map shows every present table read-only.
        if unsafe { (pte_va(va, level) as *const u64).read_volatile() } & abi::pte::PRESENT == 0 {
            return None;
        }
    }
    // SAFETY: as above; the leaf table is present.
    let e = unsafe { (pte_va(va, 0) as *const u64).read_volatile() };
    (e & abi::pte::PRESENT != 0).then_some(e)
}

fn frame_at(va: u64) -> Option<u64> {
    pte(va).map(|e| (e & abi::pte::FRAME_MASK) >> 12)
}

fn read(va: u64) -> u64 {
    // SAFETY: the caller knows `va` is mapped; a fault ends the test.
    unsafe { (va as *const u64).read_volatile() }
}

/// A child spawned by the test: it tries to fill a range of its parent's
/// space with its own root credential, which covers only itself.
fn child(parent: u64) -> i32 {
    match sys::map_fresh(parent, BASE, PAGES, mf::WRITE) {
        Err(NotPermitted) => 0,
        other => {
            println!("map_fresh: the child's attempt on its parent: {other:?}");
            1
        }
    }
}

fn main(arg: u64) -> i32 {
    if arg != 0 {
        return child(arg);
    }
    let before = kinfo::free_plus_own();
    // One page mapped at the end of the range: a fill over it is refused.
    let last = BASE + (PAGES - 1) * PAGE_SIZE;
    let mine = sys::frame_alloc(ENV_SELF, FRAME_ANY).unwrap();
    sys::map(ENV_SELF, last, mine, 0).unwrap();
    let me = sys::self_id();
    let c = spawn::spawn("test_map_fresh", me).unwrap();
    T.check("a child cannot fill its parent's space", spawn::wait(c) == Ok(0));
    // (Spawning made our tables for its scratch mapping: counted from here.)
    let free_after_setup = kinfo::free_frames();

    let w = mf::WRITE;
    T.refused("no pages", sys::map_fresh(ENV_SELF, BASE, 0, w), BadLength);
    T.refused("one page too many", sys::map_fresh(ENV_SELF, BASE, RANGE_MAX + 1, w), BadLength);
    T.refused("a huge count", sys::map_fresh(ENV_SELF, BASE, u64::MAX, w), BadLength);
    T.refused("a count that wraps the address", sys::map_fresh(ENV_SELF, BASE, 1 << 52, w), BadLength);
    T.refused("unaligned", sys::map_fresh(ENV_SELF, BASE + 8, 2, w), BadAddress);
    T.refused("page zero", sys::map_fresh(ENV_SELF, 0, 2, w), BadAddress);
    T.refused("a range that wraps", sys::map_fresh(ENV_SELF, !(PAGE_SIZE - 1), 2, w), BadAddress);
    T.refused("the kernel half", sys::map_fresh(ENV_SELF, 0xffff_8000_0000_0000, 1, w), BadAddress);
    T.refused("into the reserved windows", sys::map_fresh(ENV_SELF, USER_END - PAGE_SIZE, 2, w), BadAddress);
    T.refused("the reserved windows", sys::map_fresh(ENV_SELF, USER_END, 1, w), BadAddress);
    T.refused("unknown flags", sys::map_fresh(ENV_SELF, BASE, 2, 1 << 40), BadFlags);
    T.refused("no access and write", sys::map_fresh(ENV_SELF, BASE, 2, mf::NO_ACCESS | w), BadFlags);
    T.refused("no such environment", sys::map_fresh(999_999, BASE, 2, w), BadEnv);
    T.refused("a credential slot past the list", raw(200, ENV_SELF, BASE, 2, w), BadLength);
    let gone = sys::cap_derive(CRED_SELF, rights::READ | rights::WRITE).unwrap();
    sys::cap_revoke(gone).unwrap();
    T.refused("an empty credential slot", raw(gone, ENV_SELF, BASE, 2, w), NotPermitted);
    let read_only = sys::cap_derive(CRED_SELF, rights::READ).unwrap();
    T.refused("a read-only credential", raw(read_only, ENV_SELF, BASE, 2, w), NotPermitted);
    T.refused("over a mapped page", sys::map_fresh(ENV_SELF, BASE, PAGES, w), AlreadyMapped);
    T.refused("on the mapped page alone", sys::map_fresh(ENV_SELF, last, 1, w), AlreadyMapped);
    // More pages than there are free frames (in a region with no tables
    // yet): refused before any is taken.
    let far = 0x3300_0000_0000;
    if kinfo::free_frames() < RANGE_MAX {
        T.refused("more pages than free frames", sys::map_fresh(ENV_SELF, far, RANGE_MAX, w), NoMemory);
    }
    T.check("every refusal took no frame", kinfo::free_frames() == free_after_setup);
    T.check("and mapped nothing", (0..PAGES - 1).all(|i| pte(BASE + i * PAGE_SIZE).is_none()));
    T.check("the mapped page kept", frame_at(last) == Some(mine) && kinfo::frame(mine).refs == 1);
    sys::unmap(ENV_SELF, last).unwrap();
    sys::frame_free(mine).unwrap();

    // Across a leaf table's edge: each page a zeroed frame of its own,
    // ours, mapped once, writable.
    T.check("the pages filled, counted", sys::map_fresh(ENV_SELF, BASE, PAGES, w) == Ok(PAGES));
    let frames: [Option<u64>; PAGES as usize] =
        core::array::from_fn(|i| frame_at(BASE + i as u64 * PAGE_SIZE));
    T.check("every page mapped", frames.iter().all(Option::is_some));
    let frames = frames.map(Option::unwrap_or_default);
    T.check("each its own frame", (1..frames.len()).all(|i| !frames[..i].contains(&frames[i])));
    let me_raw = me as u32;
    T.check(
        "each frame ours and mapped once",
        frames.iter().all(|&f| kinfo::frame(f).owner == me_raw && kinfo::frame(f).refs == 1),
    );
    T.check(
        "writable, not executable",
        (0..PAGES).all(|i| {
            pte(BASE + i * PAGE_SIZE)
                .is_some_and(|e| e & abi::pte::WRITABLE != 0 && e & abi::pte::NO_EXEC != 0)
        }),
    );
    let zeroed = (0..PAGES * PAGE_SIZE / 8).all(|i| read(BASE + i * 8) == 0);
    T.check("every byte zero", zeroed);
    for i in 0..PAGES {
        // SAFETY: mapped writable just above.
        unsafe { ((BASE + i * PAGE_SIZE) as *mut u64).write_volatile(i + 1) };
    }
    T.check("written", (0..PAGES).all(|i| read(BASE + i * PAGE_SIZE) == i + 1));
    T.check("a second fill is refused", sys::map_fresh(ENV_SELF, BASE, 1, w) == Err(AlreadyMapped));
    T.check("unmapped", sys::unmap_range(ENV_SELF, BASE, PAGES) == Ok(PAGES));
    for f in frames {
        T.check("a filled frame frees", sys::frame_free(f).is_ok());
    }

    // Read-only pages in another space (a child's, not loaded): charged
    // to the child, ours untouched.
    let kid = sys::env_create().unwrap();
    T.check("the child's pages filled", sys::map_fresh(kid, BASE, 2, 0) == Ok(2));
    T.check("its frames charged to it", kinfo::env_by_id(kid).is_some_and(|e| e.frames >= 2));
    T.check("ours still empty", pte(BASE).is_none());
    sys::env_destroy(kid).unwrap();
    sys::cap_revoke(read_only).unwrap();

    let after = kinfo::free_plus_own();
    T.check("every frame back", before == after);
    T.verdict()
}

user::entry!(main);
