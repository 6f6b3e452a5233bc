//! x86-64 four-level page tables for environments' address spaces: map,
//! unmap, re-protect, look up and tear down 4 KiB user pages. The tables are
//! reached through the [`Tables`] trait, so this logic runs on the host in
//! unit tests as it does in the kernel.

use crate::frames::Frame;
use abi::Error;

// The entry's format is ABI (programs read their own entries through the
// self-map), so its bits are named once, in `abi::pte`.
pub use abi::pte::{DIRTY, FRAME_MASK, NO_EXEC, PRESENT, USER, WRITABLE};
/// A 2 MiB page, and a mapping kept across address-space switches: only the
/// kernel's own mappings use these.
pub const HUGE: u64 = 1 << 7;
pub const GLOBAL: u64 = 1 << 8;

/// Intermediate entries grant everything; the leaf decides the rights.
const TABLE_FLAGS: u64 = PRESENT | WRITABLE | USER;

/// In an entry that points to a table, bits the processor ignores hold
/// which part of that table may have present entries: `SUMMARY` set, the
/// first and the last 64-entry chunk (`CHUNK_LO`, `CHUNK_HI`). Widened as
/// entries are written, never narrowed when they are cleared: a bound
/// that lets the teardown skip the rest of the table, not a count. An
/// entry without `SUMMARY` has its table scanned whole.
const SUMMARY: u64 = 1 << 58;
const CHUNK_LO: u32 = 52;
const CHUNK_HI: u32 = 55;
const CHUNK: usize = 64;
const SUMMARY_BITS: u64 = SUMMARY | 0x3f << CHUNK_LO;

/// The chunks of the table `e` points to that may hold present entries.
fn chunks(e: u64) -> core::ops::RangeInclusive<usize> {
    if e & SUMMARY == 0 {
        return 0..=512 / CHUNK - 1;
    }
    ((e >> CHUNK_LO) & 7) as usize..=((e >> CHUNK_HI) & 7) as usize
}

/// Table entry `e` (or a new one, without `SUMMARY`) with its summary
/// covering entries `first..=last` of the table too.
fn widen(e: u64, first: usize, last: usize, new: bool) -> u64 {
    if !new && e & SUMMARY == 0 {
        return e;
    }
    let (lo, hi) = (first / CHUNK, last / CHUNK);
    let (lo, hi) = if new { (lo, hi) } else { (lo.min(*chunks(e).start()), hi.max(*chunks(e).end())) };
    e & !SUMMARY_BITS | SUMMARY | (lo as u64) << CHUNK_LO | (hi as u64) << CHUNK_HI
}

/// Access to page-table pages by frame number.
pub trait Tables {
    /// The 512 entries of the page-table page held in `frame`.
    fn table(&mut self, frame: Frame) -> &mut [u64; 512];
}

/// The frame an entry points to.
pub fn frame_of(pte: u64) -> Frame {
    Frame::containing(pte & FRAME_MASK)
}

/// An entry pointing to `frame` with `flags`.
pub fn entry(frame: Frame, flags: u64) -> u64 {
    frame.addr() | flags
}

/// The index of `va`'s entry in its table at `level` (0: the last level,
/// which maps pages; 3: the PML4).
pub fn index(va: u64, level: u32) -> usize {
    ((va >> (12 + 9 * level)) & 511) as usize
}

/// Where a walk that writes gets the tables it makes.
type TableAlloc<'a> = &'a mut dyn FnMut() -> Result<Frame, Error>;

/// The leaf entry for `va`, creating missing tables with `alloc` if given
/// (the entry is to be written then).
fn leaf<'t, T: Tables>(
    t: &'t mut T,
    pml4: Frame,
    va: u64,
    alloc: Option<TableAlloc<'_>>,
) -> Result<&'t mut u64, Error> {
    let table = match alloc {
        Some(alloc) => leaf_table(t, pml4, va, alloc, index(va, 0))?,
        None => last_table(t, pml4, va).map_err(|_| Error::NotMapped)?,
    };
    Ok(&mut t.table(table)[index(va, 0)])
}

/// The table holding `va`'s leaf entry, whose entries from `va`'s to index
/// `last` the caller will write: missing tables are made with `alloc`,
/// and the summaries on the way widened to cover the entries written
/// below them.
fn leaf_table<T: Tables>(
    t: &mut T,
    pml4: Frame,
    va: u64,
    alloc: TableAlloc<'_>,
    last: usize,
) -> Result<Frame, Error> {
    let mut table = pml4;
    for level in (1..4).rev() {
        let i = index(va, level);
        let e = t.table(table)[i];
        // The entries the write reaches in the table below this entry.
        let below = index(va, level - 1);
        let last = if level == 1 { last } else { below };
        table = if e & PRESENT != 0 {
            let wider = widen(e, below, last, false);
            if wider != e {
                t.table(table)[i] = wider;
            }
            frame_of(e)
        } else {
            let f = alloc()?;
            t.table(f).fill(0);
            t.table(table)[i] = widen(entry(f, TABLE_FLAGS), below, last, true);
            f
        };
    }
    Ok(table)
}

/// Installs `pte` at `va`; tables come from `alloc`.
pub fn map<T: Tables>(
    t: &mut T,
    pml4: Frame,
    va: u64,
    pte: u64,
    alloc: &mut dyn FnMut() -> Result<Frame, Error>,
) -> Result<(), Error> {
    let e = leaf(t, pml4, va, Some(alloc))?;
    if *e & PRESENT != 0 {
        return Err(Error::AlreadyMapped);
    }
    *e = pte;
    Ok(())
}

/// One walk towards `va`'s leaf: `Ok(entry)` if it is mapped, else
/// `Err(level)`: the highest level (3 to 1) whose entry is absent, so that
/// the tables below it, down to the leaf's, are missing (0: only the leaf
/// entry is absent).
pub fn probe<T: Tables>(t: &mut T, pml4: Frame, va: u64) -> Result<u64, u32> {
    let table = last_table(t, pml4, va)?;
    let e = t.table(table)[index(va, 0)];
    if e & PRESENT != 0 {
        Ok(e)
    } else {
        Err(0)
    }
}

/// The table holding `va`'s leaf entry, or the highest level whose entry
/// is absent on the way.
fn last_table<T: Tables>(t: &mut T, pml4: Frame, va: u64) -> Result<Frame, u32> {
    let mut table = pml4;
    for level in (1..4).rev() {
        let e = t.table(table)[index(va, level)];
        if e & PRESENT == 0 {
            return Err(level);
        }
        table = frame_of(e);
    }
    Ok(table)
}

/// The leaf table holding `va`'s entry, if every level above it is
/// present (a run of pages reads its entries from it without walking down
/// again for each).
pub fn leaf_of<T: Tables>(t: &mut T, pml4: Frame, va: u64) -> Option<Frame> {
    last_table(t, pml4, va).ok()
}

const PAGE: u64 = 4096;
/// What one leaf table covers.
const LEAF_SPAN: u64 = 1 << 21;

/// `pages` pages from `src` paired with as many from `dst`, in pieces that
/// stay inside one leaf table on both sides: (source, destination, pages).
fn pieces(src: u64, dst: u64, pages: u64) -> impl Iterator<Item = (u64, u64, usize)> {
    let room = |va: u64| (LEAF_SPAN - (va & (LEAF_SPAN - 1))) / PAGE;
    let mut done = 0;
    core::iter::from_fn(move || {
        let (s, d) = (src.wrapping_add(done * PAGE), dst.wrapping_add(done * PAGE));
        let n = pages.checked_sub(done).filter(|&n| n > 0)?.min(room(s)).min(room(d));
        done += n;
        Some((s, d, n as usize))
    })
}

/// What `check_copy` found among the present source entries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sources {
    /// How many entries the copy will write.
    pub entries: u64,
    /// How many tables it will make.
    pub tables: u64,
    /// The bits set in every one of them, and in any of them.
    pub all: u64,
    pub any: u64,
    /// The highest of `weight` over them.
    pub most: u64,
}

/// The first step of copying the present entries of `pages` pages from
/// `src` in `from` to `dst` in `to`, changing nothing: a present
/// destination entry is `AlreadyMapped`; the caller vets the rest from the
/// summary (`Sources`: rights common to all, the largest `weight`, such as
/// a frame's mapping count), which costs a few instructions a page where a
/// check of each page cost forty (fork maps hundreds). Each side's upper
/// levels are walked once per leaf table, not once per page.
pub fn check_copy<T: Tables>(
    t: &mut T,
    (from, src): (Frame, u64),
    (to, dst): (Frame, u64),
    pages: u64,
    weight: impl Fn(u64) -> u64,
) -> Result<Sources, Error> {
    let mut seen = Sources { entries: 0, tables: 0, all: !0, any: 0, most: 0 };
    let (mut missing, mut clash) = (MissingTables::default(), 0);
    for (s, d, n) in pieces(src, dst, pages) {
        let Ok(st) = last_table(t, from, s) else { continue };
        let dt = last_table(t, to, d);
        let (si, di) = (index(s, 0), index(d, 0));
        // A piece stays in one table on each side; said once here, the
        // loop's indexing needs no check per page.
        assert!(si + n <= 512 && di + n <= 512);
        let mut present = 0;
        for j in 0..n {
            let e = t.table(st)[si + j];
            if e & PRESENT == 0 {
                continue;
            }
            (seen.all, seen.any, seen.most) = (seen.all & e, seen.any | e, seen.most.max(weight(e)));
            if let Ok(dt) = dt {
                clash |= t.table(dt)[di + j];
            }
            present += 1;
        }
        // The piece lies in one destination leaf table: it misses the same
        // tables at every page.
        if let (true, Err(level)) = (present > 0, dt) {
            missing.add(d, level);
        }
        seen.entries += present;
    }
    if clash & PRESENT != 0 {
        return Err(Error::AlreadyMapped);
    }
    seen.tables = missing.count;
    Ok(seen)
}

/// The second step, after `check_copy` passed: writes `entry(ctx, e)` for
/// each present source entry `e` (the caller counts the mapping there);
/// tables come from `alloc(ctx)`. A piece with no present entry makes no
/// table.
pub fn copy<T: Tables, C>(
    t: &mut T,
    ctx: &mut C,
    (from, src): (Frame, u64),
    (to, dst): (Frame, u64),
    pages: u64,
    alloc: impl Fn(&mut C) -> Result<Frame, Error>,
    entry: impl Fn(&mut C, u64) -> Result<u64, Error>,
) -> Result<(), Error> {
    for (s, d, n) in pieces(src, dst, pages) {
        let Ok(st) = last_table(t, from, s) else { continue };
        let si = index(s, 0);
        let Some(first) = (0..n).find(|&j| t.table(st)[si + j] & PRESENT != 0) else { continue };
        let make: &mut dyn FnMut() -> Result<Frame, Error> = &mut || alloc(ctx);
        let di = index(d, 0);
        let dt = leaf_table(t, to, d, make, di + n - 1)?;
        assert!(si + n <= 512 && di + n <= 512);
        for j in first..n {
            let e = t.table(st)[si + j];
            if e & PRESENT == 0 {
                continue;
            }
            if t.table(dt)[di + j] & PRESENT != 0 {
                return Err(Error::AlreadyMapped);
            }
            t.table(dt)[di + j] = entry(ctx, e)?;
        }
    }
    Ok(())
}

/// The first step of filling `pages` pages from `va` with new entries,
/// changing nothing: a present entry among them is `AlreadyMapped`.
/// Returns how many tables the fill will make. The upper levels are walked
/// once per leaf table.
pub fn check_empty<T: Tables>(t: &mut T, pml4: Frame, va: u64, pages: u64) -> Result<u64, Error> {
    let mut missing = MissingTables::default();
    for (p, _, n) in pieces(va, va, pages) {
        match last_table(t, pml4, p) {
            Ok(table) => {
                let i = index(p, 0);
                if t.table(table)[i..i + n].iter().any(|e| e & PRESENT != 0) {
                    return Err(Error::AlreadyMapped);
                }
            }
            Err(level) => missing.add(p, level),
        }
    }
    Ok(missing.count)
}

/// The second step, after `check_empty` passed: writes `entry(ctx)` at
/// each of the pages, in order; tables come from `alloc(ctx)`.
pub fn fill<T: Tables, C>(
    t: &mut T,
    ctx: &mut C,
    pml4: Frame,
    va: u64,
    pages: u64,
    alloc: impl Fn(&mut C) -> Result<Frame, Error>,
    entry: impl Fn(&mut C) -> Result<u64, Error>,
) -> Result<(), Error> {
    for (p, _, n) in pieces(va, va, pages) {
        let make: &mut dyn FnMut() -> Result<Frame, Error> = &mut || alloc(ctx);
        let i = index(p, 0);
        let table = leaf_table(t, pml4, p, make, i + n - 1)?;
        for j in i..i + n {
            t.table(table)[j] = entry(ctx)?;
        }
    }
    Ok(())
}

/// Counts the table pages `map` would allocate for a run of ascending
/// addresses, from what `probe` found at each: the check a caller makes
/// before mapping a range, so the mapping itself cannot run out of memory
/// half way.
#[derive(Default)]
pub struct MissingTables {
    /// The last missing table counted at each level, by the region it
    /// covers: ascending addresses meet each one in a single run.
    counted: [Option<u64>; 4],
    pub count: u64,
}

impl MissingTables {
    /// Adds address `va`, whose walk stopped at `level` (`probe`'s error).
    pub fn add(&mut self, va: u64, level: u32) {
        // The same 2 MiB region misses the same tables at every page.
        if level == 0 || self.counted[1] == Some(va >> 21) {
            return;
        }
        for l in 1..=level {
            let region = va >> (12 + 9 * l);
            if self.counted[l as usize] != Some(region) {
                self.counted[l as usize] = Some(region);
                self.count += 1;
            }
        }
    }
}

/// How many table pages `map` would allocate to map every address of
/// `vas` (ascending) that is not mapped yet.
pub fn tables_missing<T: Tables>(t: &mut T, pml4: Frame, vas: impl Iterator<Item = u64>) -> u64 {
    let mut missing = MissingTables::default();
    for va in vas {
        if let Err(level) = probe(t, pml4, va) {
            missing.add(va, level);
        }
    }
    missing.count
}

/// Removes the mapping at `va`, returning the old entry.
pub fn unmap<T: Tables>(t: &mut T, pml4: Frame, va: u64) -> Result<u64, Error> {
    let e = leaf(t, pml4, va, None)?;
    let old = *e;
    if old & PRESENT == 0 {
        return Err(Error::NotMapped);
    }
    *e = 0;
    Ok(old)
}

/// Clears the present entries of `pages` pages from `va`, handing each
/// old entry to `gone` (the caller drops its count), and returns how many
/// there were. The upper levels are walked once per leaf table, not once
/// per page; a leaf table that is missing is skipped whole. Nothing here
/// can fail: the caller has checked the range.
pub fn unmap_range<T: Tables>(t: &mut T, pml4: Frame, va: u64, pages: u64, mut gone: impl FnMut(u64)) -> u64 {
    let mut cleared = 0;
    for (p, _, n) in pieces(va, va, pages) {
        let Ok(table) = last_table(t, pml4, p) else { continue };
        let first = index(p, 0);
        for e in &mut t.table(table)[first..first + n] {
            if *e & PRESENT != 0 {
                gone(*e);
                *e = 0;
                cleared += 1;
            }
        }
    }
    cleared
}

/// The entry mapping `va`, if present.
pub fn lookup<T: Tables>(t: &mut T, pml4: Frame, va: u64) -> Option<u64> {
    leaf(t, pml4, va, None).ok().map(|e| *e).filter(|e| e & PRESENT != 0)
}

/// Replaces the rights bits of the mapping at `va`, keeping the frame and
/// the dirty bit: the page was written whatever its rights are now, and a
/// library that writes changed pages back reads it after a `protect`.
pub fn protect<T: Tables>(t: &mut T, pml4: Frame, va: u64, rights: u64) -> Result<u64, Error> {
    let e = leaf(t, pml4, va, None)?;
    if *e & PRESENT == 0 {
        return Err(Error::NotMapped);
    }
    *e = with_rights(*e, rights);
    Ok(*e)
}

/// Entry `e` with its rights bits replaced by `rights` (`protect`).
fn with_rights(e: u64, rights: u64) -> u64 {
    (e & (FRAME_MASK | DIRTY)) | rights
}

/// `protect` over `pages` pages from `va`, walking down once per leaf
/// table rather than once per page; `changed(va)` is called for each
/// present page re-protected (the caller flushes it), the others are left
/// alone. Returns how many changed.
pub fn protect_range<T: Tables>(
    t: &mut T,
    pml4: Frame,
    va: u64,
    pages: u64,
    rights: u64,
    mut changed: impl FnMut(u64),
) -> u64 {
    let mut count = 0;
    for (p, _, n) in pieces(va, va, pages) {
        let Ok(table) = last_table(t, pml4, p) else { continue };
        let first = index(p, 0);
        for (i, e) in t.table(table)[first..first + n].iter_mut().enumerate() {
            if *e & PRESENT != 0 {
                *e = with_rights(*e, rights);
                changed(p + i as u64 * PAGE);
                count += 1;
            }
        }
    }
    count
}

/// Calls `f(va, entry)` for every present 4 KiB leaf in PML4 slots
/// `slots`, in address order, until `f` returns false. `f` may change the
/// entry (to clear it, say).
pub fn for_each_leaf<T: Tables>(
    t: &mut T,
    pml4: Frame,
    slots: core::ops::Range<usize>,
    f: &mut dyn FnMut(u64, &mut u64) -> bool,
) {
    for s in slots {
        let e = t.table(pml4)[s];
        if e & PRESENT != 0 && !walk_leaves(t, frame_of(e), 3, (s as u64) << 39, f) {
            return;
        }
    }
}

fn walk_leaves<T: Tables>(
    t: &mut T,
    table: Frame,
    level: u32,
    base: u64,
    f: &mut dyn FnMut(u64, &mut u64) -> bool,
) -> bool {
    for i in 0..512u64 {
        let e = t.table(table)[i as usize];
        if e & PRESENT == 0 {
            continue;
        }
        let va = base | i << (12 + 9 * (level - 1));
        let go_on = if level == 1 {
            f(va, &mut t.table(table)[i as usize])
        } else {
            walk_leaves(t, frame_of(e), level - 1, va, f)
        };
        if !go_on {
            return false;
        }
    }
    true
}

/// Visits every present leaf in PML4 slots `slots`, clearing the slots.
/// (The tables themselves are the owner's frames, freed with the rest of
/// what it owns.) Generic, not `dyn`: the visit is inlined into the scan.
pub fn teardown<T: Tables>(
    t: &mut T,
    pml4: Frame,
    slots: core::ops::Range<usize>,
    leaf_fn: &mut impl FnMut(u64),
) {
    for group in slots.clone().step_by(8) {
        let end = (group + 8).min(slots.end);
        // Most slots are empty: skip eight absent ones at a time.
        if end - group == 8 && t.table(pml4)[group..group + 8].iter().fold(0, |all, e| all | e) & PRESENT == 0
        {
            continue;
        }
        for s in group..end {
            let e = t.table(pml4)[s];
            if e & PRESENT != 0 {
                teardown_table(t, e, 3, leaf_fn);
                t.table(pml4)[s] = 0;
            }
        }
    }
}

/// Visits the present entries of the table `up` points to, in the chunks
/// its summary names.
fn teardown_table<T: Tables, F: FnMut(u64)>(t: &mut T, up: u64, level: u32, leaf_fn: &mut F) {
    let table = frame_of(up);
    let span = chunks(up);
    for group in (span.start() * CHUNK..(span.end() + 1) * CHUNK).step_by(8) {
        // Most tables are sparse: skip eight absent entries at a time.
        if t.table(table)[group..group + 8].iter().fold(0, |all, e| all | e) & PRESENT == 0 {
            continue;
        }
        for i in group..group + 8 {
            let e = t.table(table)[i];
            if e & PRESENT == 0 {
                continue;
            }
            if level == 1 {
                leaf_fn(e);
            } else {
                teardown_table(t, e, level - 1, leaf_fn);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::boxed::Box;
    use std::collections::HashMap;
    use std::vec::Vec;

    #[derive(Default)]
    struct Mem {
        pages: HashMap<u64, Box<[u64; 512]>>,
        next: u64,
    }
    impl Tables for Mem {
        fn table(&mut self, frame: Frame) -> &mut [u64; 512] {
            self.pages.entry(frame.number()).or_insert_with(|| Box::new([0; 512]))
        }
    }
    impl Mem {
        fn alloc(&mut self) -> Frame {
            self.next += 1;
            Frame::new(self.next)
        }
    }

    /// A frame allocator handing out frames `next + 1`, `next + 2`, ...
    fn frames_from(next: &mut u64) -> impl FnMut() -> Result<Frame, Error> + '_ {
        move || {
            *next += 1;
            Ok(Frame::new(*next))
        }
    }
    #[test]
    fn pieces_stay_inside_one_leaf_table_on_both_sides() {
        for (src, dst, pages) in
            [(0x1f_e000u64, 0x40_0000u64, 600u64), (0x40_0000, 0x7f_f000, 1025), (0x3000, 0x3000, 1)]
        {
            let (mut next_s, mut next_d, mut total) = (src, dst, 0);
            for (s, d, n) in pieces(src, dst, pages) {
                assert_eq!((s, d), (next_s, next_d), "pieces follow each other");
                assert!(n > 0);
                let last = (n as u64 - 1) * PAGE;
                assert_eq!(s >> 21, (s + last) >> 21, "source piece {s:#x}+{n} crosses a leaf table");
                assert_eq!(d >> 21, (d + last) >> 21, "destination piece {d:#x}+{n} crosses a leaf table");
                (next_s, next_d, total) = (s + n as u64 * PAGE, d + n as u64 * PAGE, total + n as u64);
            }
            assert_eq!(total, pages);
        }
    }

    /// A source space with holes, spanning 2 MiB and 1 GiB boundaries.
    fn source(m: &mut Mem, next: &mut u64) -> (Frame, Vec<u64>) {
        let pml4 = m.alloc();
        let vas: Vec<u64> = (0..1100u64).filter(|i| i % 7 != 3).map(|i| 0x3ff0_0000 + i * 0x1000).collect();
        for &va in &vas {
            map(m, pml4, va, (va >> 12) << 12 | PRESENT | WRITABLE, &mut frames_from(next)).unwrap();
        }
        (pml4, vas)
    }

    #[test]
    fn copy_agrees_with_map_page_by_page() {
        // Aligned and unaligned offsets between the sides, a destination
        // already partly built: the same entries, and exactly the tables
        // `check_copy` counted.
        for delta in [0u64, 0x5000, 0x40_0000, 0x80_0000_3000] {
            let mut m = Mem { next: 100, ..Mem::default() };
            let mut next = 1_000_000u64;
            let (from, vas) = source(&mut m, &mut next);
            let (to, want) = (m.alloc(), m.alloc());
            let (src, pages) = (0x3ff0_0000u64, 1100u64);
            let dst = src + delta;
            let lone = dst + pages * PAGE + 0x1000;
            map(&mut m, to, lone, 8 << 12 | PRESENT, &mut frames_from(&mut next)).unwrap();
            map(&mut m, want, lone, 8 << 12 | PRESENT, &mut frames_from(&mut next)).unwrap();
            // A page of the range mapped already: the check refuses. Once
            // it is gone its table stays, so fewer tables are missing.
            let taken = dst + 0x20_3000;
            map(&mut m, to, taken, 7 << 12 | PRESENT, &mut frames_from(&mut next)).unwrap();
            let r = check_copy(&mut m, (from, src), (to, dst), pages, |_| 0);
            assert_eq!(r, Err(Error::AlreadyMapped), "delta {delta:#x}");
            unmap(&mut m, to, taken).unwrap();
            let Sources { entries, tables, .. } =
                check_copy(&mut m, (from, src), (to, dst), pages, |_| 0).unwrap();
            assert_eq!(entries, vas.len() as u64);
            let mut ctx = (next, 0u64);
            let alloc = |c: &mut (u64, u64)| {
                c.0 += 1;
                Ok(Frame::new(c.0))
            };
            let count = |c: &mut (u64, u64), e: u64| {
                c.1 += 1;
                Ok(e & !WRITABLE)
            };
            copy(&mut m, &mut ctx, (from, src), (to, dst), pages, alloc, count).unwrap();
            assert_eq!(ctx.0 - next, tables, "delta {delta:#x}: tables made as counted");
            assert_eq!(ctx.1, entries, "every entry counted once");
            next = ctx.0;
            for &va in &vas {
                map(&mut m, want, va + delta, (va >> 12) << 12 | PRESENT, &mut frames_from(&mut next))
                    .unwrap();
            }
            for i in 0..pages + 2 {
                let va = dst + i * PAGE;
                assert_eq!(lookup(&mut m, to, va), lookup(&mut m, want, va), "delta {delta:#x} at {va:#x}");
            }
        }
    }

    #[test]
    fn check_copy_summarises_the_present_entries() {
        let mut m = Mem { next: 100, ..Mem::default() };
        let mut next = 1_000_000u64;
        let (from, _) = source(&mut m, &mut next);
        // One page of the 50 read-only and executable, one frame weighing
        // more than the others: the summary says so.
        let odd = 0x3ff0_0000 + 9 * PAGE;
        protect(&mut m, from, odd, PRESENT).unwrap();
        let to = m.alloc();
        let weight = |e: u64| if frame_of(e).number() == 0x3ff20 { 70 } else { 3 };
        let r = check_copy(&mut m, (from, 0x3ff0_0000), (to, 0x1000_0000), 50, weight).unwrap();
        assert_eq!((r.entries, r.most), (43, 70));
        assert_eq!((r.all & WRITABLE, r.any & WRITABLE, r.all & PRESENT), (0, WRITABLE, PRESENT));
        let r = check_copy(&mut m, (from, 0x3ff0_0000 + 10 * PAGE), (to, 0x1000_0000), 5, weight).unwrap();
        assert_eq!((r.all & WRITABLE, r.most), (WRITABLE, 3));
        // An empty source range: nothing to write, no table to make.
        let empty = check_copy(&mut m, (from, 0x1000), (to, 0x1000), 10, weight).unwrap();
        assert_eq!((empty.entries, empty.tables, empty.any), (0, 0, 0));
    }

    #[test]
    fn tables_missing_counts_what_map_allocates() {
        // Ranges across table boundaries, over empty and partly built
        // trees: the count equals the tables `map` then allocates.
        let cases: [(u64, u64, &[u64]); 5] = [
            (0x40_0000, 1, &[]),
            (0x40_0000, 513, &[]),
            (0x3fff_f000, 3, &[]),
            (0x7f_ffff_f000, 2, &[0x7f_ffff_f000]),
            (0x1000, 2000, &[0x20_0000, 0x80_0000]),
        ];
        for (start, pages, premapped) in cases {
            let mut m = Mem { next: 100, ..Mem::default() };
            let pml4 = m.alloc();
            let mut next = 1000u64;
            for &va in premapped {
                let mut alloc = frames_from(&mut next);
                map(&mut m, pml4, va, 7 << 12 | PRESENT, &mut alloc).unwrap();
            }
            let vas = (0..pages).map(|i| start + i * 4096).filter(|va| !premapped.contains(va));
            let want = tables_missing(&mut m, pml4, vas.clone());
            let before = next;
            for va in vas {
                let mut alloc = frames_from(&mut next);
                map(&mut m, pml4, va, 9 << 12 | PRESENT, &mut alloc).unwrap();
            }
            assert_eq!(want, next - before, "range {start:#x} + {pages} pages");
            assert_eq!(tables_missing(&mut m, pml4, (0..pages).map(|i| start + i * 4096)), 0);
        }
    }

    /// Ranges with holes, across 2 MiB and 1 GiB boundaries, starting and
    /// ending in the middle of leaf tables, over missing tables (in the
    /// space `source` makes): what the ranged calls are checked over.
    const RANGES: [(u64, u64); 4] =
        [(0x3ff0_0000, 1100), (0x3ff4_5000, 700), (0x3fff_f000, 3), (0x1000, 4096)];

    /// A fresh `source` space for one of `RANGES`: the tables, the PML4,
    /// the mapped addresses.
    fn range_space() -> (Mem, Frame, Vec<u64>) {
        let mut m = Mem { next: 100, ..Mem::default() };
        let mut next = 1_000_000u64;
        let (pml4, vas) = source(&mut m, &mut next);
        (m, pml4, vas)
    }

    /// After a ranged call over `start` + `pages`: `m` made or dropped no
    /// table (it had `tables`) and holds what `want` does (page by page).
    fn assert_same_tables(m: &Mem, want: &Mem, tables: usize, start: u64, pages: u64) {
        assert_eq!(m.pages.len(), tables, "no table made or dropped");
        for (f, table) in &want.pages {
            assert_eq!(m.pages[f], *table, "range {start:#x} + {pages}: table {f}");
        }
    }

    #[test]
    fn unmap_range_agrees_with_unmap_page_by_page() {
        // The same entries leave as with `unmap` page by page, and nothing
        // else.
        for (start, pages) in RANGES {
            let (mut m, pml4, _) = range_space();
            let mut want = Mem { pages: m.pages.clone(), next: m.next };
            let mut expected = Vec::new();
            for i in 0..pages {
                if let Ok(old) = unmap(&mut want, pml4, start + i * PAGE) {
                    expected.push(old);
                }
            }
            let tables = m.pages.len();
            let mut got = Vec::new();
            let n = unmap_range(&mut m, pml4, start, pages, |old| got.push(old));
            assert_eq!(got, expected, "range {start:#x} + {pages}: the entries, in order");
            assert_eq!(n, expected.len() as u64);
            assert_same_tables(&m, &want, tables, start, pages);
            // Again: nothing left to clear.
            assert_eq!(unmap_range(&mut m, pml4, start, pages, |_| panic!("cleared twice")), 0);
        }
    }

    #[test]
    fn protect_range_agrees_with_protect_page_by_page() {
        // The same entries change as with `protect` page by page, in order,
        // a dirty bit kept, and nothing else.
        for (start, pages) in RANGES {
            let (mut m, pml4, vas) = range_space();
            *leaf(&mut m, pml4, vas[5], None).unwrap() |= DIRTY;
            let mut want = Mem { pages: m.pages.clone(), next: m.next };
            let rights = PRESENT | USER | NO_EXEC;
            let expected: Vec<u64> = (0..pages)
                .map(|i| start + i * PAGE)
                .filter(|&va| protect(&mut want, pml4, va, rights).is_ok())
                .collect();
            let tables = m.pages.len();
            let mut got = Vec::new();
            let n = protect_range(&mut m, pml4, start, pages, rights, |va| got.push(va));
            assert_eq!(got, expected, "range {start:#x} + {pages}: the pages changed, in order");
            assert_eq!(n, expected.len() as u64);
            assert_same_tables(&m, &want, tables, start, pages);
        }
    }

    #[test]
    fn map_lookup_protect_unmap() {
        let mut m = Mem { next: 100, ..Mem::default() };
        let pml4 = m.alloc();
        let mut next = 200u64;
        let mut alloc = frames_from(&mut next);
        let va = 0x7f12_3456_7000;
        map(&mut m, pml4, va, 42 << 12 | PRESENT | USER, &mut alloc).unwrap();
        assert_eq!(m.pages.len(), 4, "the PML4 and three intermediate tables");
        assert_eq!(lookup(&mut m, pml4, va).map(frame_of), Some(Frame::new(42)));
        assert_eq!(lookup(&mut m, pml4, va + 0x1000), None);
        assert_eq!(map(&mut m, pml4, va, 43 << 12 | PRESENT, &mut alloc), Err(Error::AlreadyMapped));
        let e = protect(&mut m, pml4, va, PRESENT | USER | WRITABLE).unwrap();
        assert_eq!(frame_of(e), Frame::new(42));
        assert!(e & WRITABLE != 0);
        // The CPU marks the page written; taking every right away keeps it.
        *leaf(&mut m, pml4, va, None).unwrap() |= DIRTY;
        let e = protect(&mut m, pml4, va, PRESENT | NO_EXEC).unwrap();
        assert_eq!(e, 42 << 12 | DIRTY | PRESENT | NO_EXEC, "frame and dirty bit kept, rights replaced");
        assert_eq!(frame_of(unmap(&mut m, pml4, va).unwrap()), Frame::new(42));
        assert_eq!(unmap(&mut m, pml4, va), Err(Error::NotMapped));
        assert_eq!(protect(&mut m, pml4, 0x1000, PRESENT), Err(Error::NotMapped));
    }

    #[test]
    fn fill_matches_mapping_page_by_page_and_checks_first() {
        // 600 pages from two below a 2 MiB boundary (three leaf tables, one
        // existing), filled in one go and mapped one page at a time.
        let (va, pages) = (0x7f_e000_0000u64 - 0x2000, 600u64);
        let (mut a, mut b) = (Mem::default(), Mem::default());
        let pml4 = Frame::new(1);
        let (mut next_a, mut next_b) = (10u64, 10u64);
        let mut alloc_a = || {
            next_a += 1;
            Ok(Frame::new(next_a))
        };
        map(&mut a, pml4, va - 0x1000, 9 << 12 | PRESENT, &mut alloc_a).unwrap();
        let mut alloc_b = || {
            next_b += 1;
            Ok(Frame::new(next_b))
        };
        map(&mut b, pml4, va - 0x1000, 9 << 12 | PRESENT, &mut alloc_b).unwrap();
        for i in 0..pages {
            map(&mut b, pml4, va + i * 0x1000, (1000 + i) << 12 | PRESENT, &mut alloc_b).unwrap();
        }
        let tables = check_empty(&mut a, pml4, va, pages).unwrap();
        assert_eq!(tables, 2);
        // (tables made, next table frame, next leaf frame)
        let mut ctx = (0u64, 100u64, 1000u64);
        let made = |c: &mut (u64, u64, u64)| {
            c.0 += 1;
            c.1 += 1;
            Ok(Frame::new(c.1))
        };
        let leaf = |c: &mut (u64, u64, u64)| {
            c.2 += 1;
            Ok((c.2 - 1) << 12 | PRESENT)
        };
        fill(&mut a, &mut ctx, pml4, va, pages, made, leaf).unwrap();
        assert_eq!(ctx.0, tables, "as many tables made as counted");
        for i in 0..pages + 2 {
            let p = va - 0x1000 + i * 0x1000;
            assert_eq!(lookup(&mut a, pml4, p), lookup(&mut b, pml4, p), "page {p:#x}");
        }
        // Any present page in the range is refused before anything is made.
        assert_eq!(check_empty(&mut a, pml4, va - 0x1000, 1), Err(Error::AlreadyMapped));
        assert_eq!(check_empty(&mut a, pml4, va + 599 * 0x1000, 2), Err(Error::AlreadyMapped));
        assert_eq!(check_empty(&mut a, pml4, va + 600 * 0x1000, 3), Ok(0));
        assert_eq!(check_empty(&mut a, pml4, 1 << 39, 513), Ok(4), "a new PDPT, PD and two leaf tables");
    }

    #[test]
    fn summaries_bound_what_the_teardown_visits() {
        let mut m = Mem::default();
        let pml4 = Frame::new(1);
        let mut next = 10u64;
        let leaf = |n: u64| (5000 + n) << 12 | PRESENT;
        // Single pages at the edges of chunks and tables, at every level.
        let singles = [
            0x40_0000u64,
            0x43_f000,
            0x44_0000,
            0x5f_f000,
            0x7f_ffff_f000,
            0x1_0000_0000,
            200 << 39 | 0x20_0000,
        ];
        for (n, va) in singles.into_iter().enumerate() {
            map(&mut m, pml4, va, leaf(n as u64), &mut frames_from(&mut next)).unwrap();
        }
        // A copy and a fill across leaf tables, into tables made for them
        // and into one that exists.
        let mut ctx = (next, 100u64);
        let made = |c: &mut (u64, u64)| {
            c.0 += 1;
            Ok(Frame::new(c.0))
        };
        fill(&mut m, &mut ctx, pml4, 0x9f_0000, 300, made, |c| {
            c.1 += 1;
            Ok(leaf(c.1))
        })
        .unwrap();
        copy(&mut m, &mut ctx, (pml4, 0x9f_0000), (pml4, 0x7f_e03f_0000), 300, made, |c, _| {
            c.1 += 1;
            Ok(leaf(c.1))
        })
        .unwrap();
        // Removals leave the summaries wide: still a bound.
        unmap_range(&mut m, pml4, 0x9f_0000, 40, |_| {});
        unmap(&mut m, pml4, 0x44_0000).unwrap();
        // A table linked by hand (inside the part of its parent that the
        // parent's summary covers), without a summary, is scanned whole.
        let bare = Frame::new(9000);
        let pdpt = frame_of(m.table(pml4)[0]);
        let pd = frame_of(m.table(pdpt)[0]);
        m.table(pd)[10] = entry(bare, TABLE_FLAGS);
        m.table(bare)[511] = leaf(9999);
        let mut want = Vec::new();
        for_each_leaf(&mut m, pml4, 0..256, &mut |_, e| {
            want.push(frame_of(*e).number());
            true
        });
        assert!(want.contains(&(5000 + 9999)) && want.len() == 6 + 260 + 300 + 1);
        let mut got = Vec::new();
        teardown(&mut m, pml4, 0..256, &mut |e| got.push(frame_of(e).number()));
        want.sort();
        got.sort();
        assert_eq!(got, want);
        // What the summary says of a table: its chunks, or all of them.
        let e = widen(entry(bare, TABLE_FLAGS), 70, 70, true);
        assert_eq!(chunks(e), 1..=1);
        assert_eq!(chunks(widen(e, 511, 511, false)), 1..=7);
        assert_eq!(chunks(widen(e, 3, 5, false)), 0..=1);
        assert_eq!(chunks(entry(bare, TABLE_FLAGS)), 0..=7);
        assert_eq!(widen(e, 3, 5, false) & FRAME_MASK, bare.addr(), "the frame is kept");
    }

    #[test]
    fn teardown_visits_every_leaf_and_clears_the_slots() {
        let mut m = Mem::default();
        let pml4 = Frame::new(1);
        let mut next = 10u64;
        let mut alloc = frames_from(&mut next);
        for i in 0..3u64 {
            map(&mut m, pml4, 0x40_0000 + i * 0x1000, (50 + i) << 12 | PRESENT, &mut alloc).unwrap();
        }
        map(&mut m, pml4, 0x10_0000_0000, 60 << 12 | PRESENT, &mut alloc).unwrap();
        // A dense run over two leaf tables, and a page outside the slots.
        for i in 0..600u64 {
            map(&mut m, pml4, 0x7f_e000_0000 + i * 0x1000, (1000 + i) << 12 | PRESENT, &mut alloc).unwrap();
        }
        let outside = 300u64 << 39;
        map(&mut m, pml4, outside, 70 << 12 | PRESENT, &mut alloc).unwrap();
        let mut leaves = Vec::new();
        teardown(&mut m, pml4, 0..256, &mut |e| leaves.push(frame_of(e).number()));
        leaves.sort();
        let want: Vec<u64> = [50, 51, 52, 60].into_iter().chain(1000..1600).collect();
        assert_eq!(leaves, want);
        assert_eq!(lookup(&mut m, pml4, 0x40_0000), None);
        assert_eq!(lookup(&mut m, pml4, 0x7f_e000_0000), None);
        assert_eq!(lookup(&mut m, pml4, outside).map(frame_of), Some(Frame::new(70)), "outside the slots");
    }

    #[test]
    fn teardown_skips_empty_slots_eight_at_a_time_and_stops_at_the_range() {
        let mut m = Mem::default();
        let pml4 = Frame::new(1);
        let mut next = 10u64;
        let mut alloc = frames_from(&mut next);
        // Slots at a group's edges, in the last (short) group, and past it.
        for slot in [7u64, 8, 248, 253, 254] {
            map(&mut m, pml4, slot << 39, (1000 + slot) << 12 | PRESENT, &mut alloc).unwrap();
        }
        let mut leaves = Vec::new();
        teardown(&mut m, pml4, 0..254, &mut |e| leaves.push(frame_of(e).number()));
        leaves.sort();
        assert_eq!(leaves, [1007, 1008, 1248, 1253]);
        assert_eq!(m.table(pml4)[253], 0);
        assert_ne!(m.table(pml4)[254], 0, "outside the slots");
    }

    #[test]
    fn leaves_are_visited_with_their_addresses_and_can_be_cleared() {
        let mut m = Mem::default();
        let mut next = 10u64;
        let mut alloc = frames_from(&mut next);
        let vas = [0x40_0000u64, 0x40_1000, 0x7f_0000_0000, 0x1234_5678_9000];
        for (i, va) in vas.iter().enumerate() {
            map(&mut m, Frame::new(1), *va, (100 + i as u64) << 12 | PRESENT, &mut alloc).unwrap();
        }
        let mut seen = Vec::new();
        for_each_leaf(&mut m, Frame::new(1), 0..256, &mut |va, e| {
            seen.push((va, frame_of(*e).number()));
            if va == 0x40_1000 {
                *e = 0;
            }
            true
        });
        assert_eq!(
            seen,
            [(0x40_0000, 100), (0x40_1000, 101), (0x7f_0000_0000, 102), (0x1234_5678_9000, 103)]
        );
        assert_eq!(lookup(&mut m, Frame::new(1), 0x40_1000), None, "cleared through the callback");
        let mut first = None;
        for_each_leaf(&mut m, Frame::new(1), 0..256, &mut |va, _| {
            first = Some(va);
            false
        });
        assert_eq!(first, Some(0x40_0000), "stops when asked");
    }

    #[test]
    fn failed_table_allocation_is_reported() {
        let mut m = Mem::default();
        let mut alloc = || Err(Error::NoMemory);
        assert_eq!(map(&mut m, Frame::new(1), 0x1000, PRESENT, &mut alloc), Err(Error::NoMemory));
    }
}
