//! Boot test: `unmap_range` (issue 26) against hostile arguments. A range
//! that wraps, runs into the reserved windows or the kernel half, is
//! unaligned, empty or too long, names no environment, or is asked with a
//! credential that does not cover the space (a read-only one, a child
//! acting on its parent's space) is refused with its specific error and
//! nothing is unmapped. A range with holes across a leaf table's edge
//! removes exactly the pages mapped in it and says how many; the TLB holds
//! no stale entry afterwards, on both of its flush paths; another space's
//! pages go without touching ours; and every frame comes back.
#![no_std]
#![no_main]

use abi::layout::{PAGE_SIZE, USER_END};
use abi::syscall::{self as sc, map as mf, rights, CRED_SELF, ENV_SELF, FRAME_ANY, RANGE_MAX};
use abi::Error::{self, *};
use user::verdict::Checks;
use user::{kinfo, println, spawn, sys};

/// Eight pages from two below a 2 MiB boundary: the range crosses from
/// one leaf table into the next. Pages 2, 4 and 7 are holes.
const BASE: u64 = 0x3100_001f_e000;
const MAPPED: [u64; 5] = [0, 1, 3, 5, 6];
/// Where the TLB is tested.
const TLB: u64 = 0x3100_4000_0000;
/// Above `unmap_range`'s single-page flush ceiling.
const MANY: u64 = 40;

static T: Checks = Checks::new("unmap_range");

fn raw(cred: u64, env: u64, va: u64, pages: u64) -> Result<u64, Error> {
    sys::result(sys::call(sc::UNMAP_RANGE, [env, va, pages, cred, 0, 0]))
}

fn read(va: u64) -> u64 {
    // SAFETY: the caller knows `va` is mapped; a fault ends the test.
    unsafe { (va as *const u64).read_volatile() }
}

fn write(va: u64, v: u64) {
    // SAFETY: the caller maps `va` writable.
    unsafe { (va as *mut u64).write_volatile(v) }
}

/// Each of `frames` is mapped at its page of `MAPPED`, once, with its mark.
fn intact(frames: &[u64; 5]) -> bool {
    MAPPED
        .iter()
        .zip(frames)
        .all(|(&p, &f)| kinfo::frame(f).refs == 1 && read(BASE + p * PAGE_SIZE) == 0x5eed + p)
}

/// A child spawned by the test: it tries to unmap its parent's pages with
/// its own root credential, which covers only itself.
fn child(parent: u64) -> i32 {
    match sys::unmap_range(parent, BASE, 8) {
        Err(NotPermitted) => 0,
        other => {
            println!("unmap_range: the child's attempt on its parent: {other:?}");
            1
        }
    }
}

fn main(arg: u64) -> i32 {
    if arg != 0 {
        return child(arg);
    }
    let before = kinfo::free_plus_own();
    let mut frames = [0u64; 5];
    for (f, &p) in frames.iter_mut().zip(&MAPPED) {
        *f = sys::frame_alloc(ENV_SELF, FRAME_ANY).unwrap();
        sys::map(ENV_SELF, BASE + p * PAGE_SIZE, *f, mf::WRITE).unwrap();
        write(BASE + p * PAGE_SIZE, 0x5eed + p);
    }

    // Refusals: each changes nothing.
    T.refused("no pages", sys::unmap_range(ENV_SELF, BASE, 0), BadLength);
    T.refused("one page too many", sys::unmap_range(ENV_SELF, BASE, RANGE_MAX + 1), BadLength);
    T.refused("a huge count", sys::unmap_range(ENV_SELF, BASE, u64::MAX), BadLength);
    T.refused("a count that wraps the address", sys::unmap_range(ENV_SELF, BASE, 1 << 52), BadLength);
    T.refused("unaligned", sys::unmap_range(ENV_SELF, BASE + 8, 8), BadAddress);
    T.refused("page zero", sys::unmap_range(ENV_SELF, 0, 8), BadAddress);
    T.refused("a range that wraps", sys::unmap_range(ENV_SELF, !(PAGE_SIZE - 1), 2), BadAddress);
    T.refused("the kernel half", sys::unmap_range(ENV_SELF, 0xffff_8000_0000_0000, 1), BadAddress);
    // The last two pages of the stack and the two windows above them: had
    // the first pages gone, this program would not run on.
    T.refused(
        "into the reserved windows",
        sys::unmap_range(ENV_SELF, USER_END - 2 * PAGE_SIZE, 4),
        BadAddress,
    );
    T.refused("from the reserved windows", sys::unmap_range(ENV_SELF, USER_END, 1), BadAddress);
    T.refused("no such environment", sys::unmap_range(999_999, BASE, 8), BadEnv);
    T.refused("a credential slot past the list", raw(200, ENV_SELF, BASE, 8), BadLength);
    let gone = sys::cap_derive(CRED_SELF, rights::READ | rights::WRITE).unwrap();
    sys::cap_revoke(gone).unwrap();
    T.refused("an empty credential slot", raw(gone, ENV_SELF, BASE, 8), NotPermitted);
    let read_only = sys::cap_derive(CRED_SELF, rights::READ).unwrap();
    T.refused("a read-only credential", raw(read_only, ENV_SELF, BASE, 8), NotPermitted);
    let me = sys::self_id();
    let c = spawn::spawn("test_unmap_range", me).unwrap();
    T.check("a child cannot unmap its parent's pages", spawn::wait(c) == Ok(0));
    T.check("every refusal left every page mapped", intact(&frames));

    // Holes across a leaf table's edge: exactly the mapped pages go.
    T.check("the range's mapped pages, counted", sys::unmap_range(ENV_SELF, BASE, 8) == Ok(5));
    T.check("each frame's mapping dropped", frames.iter().all(|&f| kinfo::frame(f).refs == 0));
    T.check("an empty range again: none", sys::unmap_range(ENV_SELF, BASE, 8) == Ok(0));
    for f in frames {
        T.check("an unmapped frame frees", sys::frame_free(f).is_ok());
    }

    // The TLB: a page read (its translation cached), unmapped, then mapped
    // to another frame reads the new frame. One page (flushed alone), then
    // MANY pages of one frame (the whole space flushed).
    let (old, new) =
        (sys::frame_alloc(ENV_SELF, FRAME_ANY).unwrap(), sys::frame_alloc(ENV_SELF, FRAME_ANY).unwrap());
    sys::map(ENV_SELF, TLB, new, mf::WRITE).unwrap();
    write(TLB, 0xbbbb);
    sys::unmap(ENV_SELF, TLB).unwrap();
    for pages in [1, MANY] {
        for i in 0..pages {
            sys::map(ENV_SELF, TLB + i * PAGE_SIZE, old, mf::WRITE).unwrap();
        }
        write(TLB, 0xaaaa);
        let cached = (0..pages).map(|i| read(TLB + i * PAGE_SIZE)).all(|v| v == 0xaaaa);
        T.check("the old frame read through every page", cached);
        T.check("all unmapped", sys::unmap_range(ENV_SELF, TLB, pages) == Ok(pages));
        for i in 0..pages {
            sys::map(ENV_SELF, TLB + i * PAGE_SIZE, new, 0).unwrap();
        }
        let fresh = (0..pages).all(|i| read(TLB + i * PAGE_SIZE) == 0xbbbb);
        T.check(if pages == 1 { "no stale entry (one page)" } else { "no stale entry (many pages)" }, fresh);
        T.check("unmapped again", sys::unmap_range(ENV_SELF, TLB, pages) == Ok(pages));
    }
    T.check("both frames unmapped", kinfo::frame(old).refs == 0 && kinfo::frame(new).refs == 0);
    sys::frame_free(old).unwrap();

    // Another space (a child's, not loaded): its page goes, ours stays,
    // though both map the same frame.
    let kid = sys::env_create().unwrap();
    sys::map(ENV_SELF, TLB, new, 0).unwrap();
    sys::map(kid, TLB, new, 0).unwrap();
    T.check("the child's page unmapped", sys::unmap_range(kid, TLB, 1) == Ok(1));
    T.check("ours still mapped", kinfo::frame(new).refs == 1 && read(TLB) == 0xbbbb);
    sys::unmap(ENV_SELF, TLB).unwrap();
    sys::frame_free(new).unwrap();
    sys::env_destroy(kid).unwrap();
    sys::cap_revoke(read_only).unwrap();

    let after = kinfo::free_plus_own();
    T.check("every frame back", before == after);
    T.verdict()
}

user::entry!(main);
