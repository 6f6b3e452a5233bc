//! x86-64 four-level page tables for environments' address spaces: map,
//! unmap, re-protect, look up and tear down 4 KiB user pages. The tables are
//! reached through the [`Tables`] trait, so this logic runs on the host in
//! unit tests as it does in the kernel.

use crate::frames::Frame;
use abi::Error;

// The entry's format is ABI (programs read their own entries through the
// self-map), so its bits are named once, in `abi::pte`.
pub use abi::pte::{FRAME_MASK, NO_EXEC, PRESENT, USER, WRITABLE};
/// A 2 MiB page, and a mapping kept across address-space switches: only the
/// kernel's own mappings use these.
pub const HUGE: u64 = 1 << 7;
pub const GLOBAL: u64 = 1 << 8;

/// Intermediate entries grant everything; the leaf decides the rights.
const TABLE_FLAGS: u64 = PRESENT | WRITABLE | USER;

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

/// The leaf entry for `va`, creating missing tables with `alloc` if given.
fn leaf<'t, T: Tables>(
    t: &'t mut T,
    pml4: Frame,
    va: u64,
    alloc: Option<&mut dyn FnMut() -> Result<Frame, Error>>,
) -> Result<&'t mut u64, Error> {
    let table = leaf_table(t, pml4, va, alloc)?;
    Ok(&mut t.table(table)[index(va, 0)])
}

/// The table holding `va`'s leaf entry, creating missing tables with
/// `alloc` if given.
fn leaf_table<T: Tables>(
    t: &mut T,
    pml4: Frame,
    va: u64,
    mut alloc: Option<&mut dyn FnMut() -> Result<Frame, Error>>,
) -> Result<Frame, Error> {
    let mut table = pml4;
    for level in (1..4).rev() {
        let e = t.table(table)[index(va, level)];
        table = if e & PRESENT != 0 {
            frame_of(e)
        } else if let Some(a) = alloc.as_mut() {
            let f = a()?;
            t.table(f).fill(0);
            t.table(table)[index(va, level)] = entry(f, TABLE_FLAGS);
            f
        } else {
            return Err(Error::NotMapped);
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

/// `probe` over ascending addresses of one address space that does not
/// change meanwhile: the upper levels are walked once per 2 MiB region,
/// not once per page.
pub struct Prober {
    pml4: Frame,
    region: u64,
    table: Result<Frame, u32>,
}

impl Prober {
    pub fn new(pml4: Frame) -> Prober {
        Prober { pml4, region: u64::MAX, table: Err(3) }
    }

    pub fn probe<T: Tables>(&mut self, t: &mut T, va: u64) -> Result<u64, u32> {
        if va >> 21 != self.region {
            self.region = va >> 21;
            self.table = last_table(t, self.pml4, va);
        }
        let table = self.table?;
        let e = t.table(table)[index(va, 0)];
        if e & PRESENT != 0 {
            Ok(e)
        } else {
            Err(0)
        }
    }
}

/// `map` over ascending addresses of one address space: the upper levels
/// are walked (and missing tables made) once per 2 MiB region, not once
/// per page.
pub struct Mapper {
    pml4: Frame,
    region: u64,
    table: Frame,
}

impl Mapper {
    pub fn new(pml4: Frame) -> Mapper {
        Mapper { pml4, region: u64::MAX, table: pml4 }
    }

    pub fn map<T: Tables>(
        &mut self,
        t: &mut T,
        va: u64,
        pte: u64,
        alloc: &mut dyn FnMut() -> Result<Frame, Error>,
    ) -> Result<(), Error> {
        if va >> 21 != self.region {
            self.table = leaf_table(t, self.pml4, va, Some(alloc))?;
            self.region = va >> 21;
        }
        let e = &mut t.table(self.table)[index(va, 0)];
        if *e & PRESENT != 0 {
            return Err(Error::AlreadyMapped);
        }
        *e = pte;
        Ok(())
    }
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

/// The entry mapping `va`, if present.
pub fn lookup<T: Tables>(t: &mut T, pml4: Frame, va: u64) -> Option<u64> {
    leaf(t, pml4, va, None).ok().map(|e| *e).filter(|e| e & PRESENT != 0)
}

/// Replaces the rights bits of the mapping at `va`, keeping the frame.
pub fn protect<T: Tables>(t: &mut T, pml4: Frame, va: u64, rights: u64) -> Result<u64, Error> {
    let e = leaf(t, pml4, va, None)?;
    if *e & PRESENT == 0 {
        return Err(Error::NotMapped);
    }
    *e = (*e & FRAME_MASK) | rights;
    Ok(*e)
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

/// Visits every present leaf in PML4 slots `slots`, then every table below
/// those slots (children before parents), clearing the slots.
pub fn teardown<T: Tables>(
    t: &mut T,
    pml4: Frame,
    slots: core::ops::Range<usize>,
    leaf_fn: &mut dyn FnMut(u64),
    table_fn: &mut dyn FnMut(Frame),
) {
    for s in slots {
        let e = t.table(pml4)[s];
        if e & PRESENT != 0 {
            teardown_table(t, frame_of(e), 3, leaf_fn, table_fn);
            t.table(pml4)[s] = 0;
        }
    }
}

fn teardown_table<T: Tables>(
    t: &mut T,
    table: Frame,
    level: u32,
    leaf_fn: &mut dyn FnMut(u64),
    table_fn: &mut dyn FnMut(Frame),
) {
    for group in (0..512).step_by(8) {
        // Most tables are sparse: skip eight absent entries at a time.
        let entries: [u64; 8] = t.table(table)[group..group + 8].try_into().unwrap_or([0; 8]);
        if entries.iter().fold(0, |all, e| all | e) & PRESENT == 0 {
            continue;
        }
        for e in entries.into_iter().filter(|e| e & PRESENT != 0) {
            if level == 1 {
                leaf_fn(e);
            } else {
                teardown_table(t, frame_of(e), level - 1, leaf_fn, table_fn);
            }
        }
    }
    table_fn(table);
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

    #[test]
    fn prober_agrees_with_probe() {
        let mut m = Mem { next: 100, ..Mem::default() };
        let pml4 = m.alloc();
        let mut next = 1000u64;
        for va in [0x20_0000u64, 0x20_3000, 0x40_0000, 0x7f_ffff_f000, 0x80_0000_0000] {
            let mut alloc = || {
                next += 1;
                Ok(Frame::new(next))
            };
            map(&mut m, pml4, va, (va >> 12) << 12 | PRESENT, &mut alloc).unwrap();
        }
        let mut prober = Prober::new(pml4);
        for va in (0..0x1000u64).map(|i| 0x1f_0000 + i * 0x1000).chain([0x7f_ffff_f000, 0x80_0000_0000]) {
            assert_eq!(prober.probe(&mut m, va), probe(&mut m, pml4, va), "at {va:#x}");
        }
    }

    #[test]
    fn mapper_agrees_with_map() {
        // Ascending runs across 2 MiB and 1 GiB boundaries, one page
        // already mapped: the same entries and the same tables either way.
        let vas: Vec<u64> = (0..1100u64).map(|i| 0x3ff0_0000 + i * 0x1000).chain([0x80_0000_0000]).collect();
        let (mut a, mut b) = (Mem { next: 100, ..Mem::default() }, Mem { next: 100, ..Mem::default() });
        let (pa, pb) = (a.alloc(), b.alloc());
        let mut next = 1000u64;
        let mut alloc = || {
            next += 1;
            Ok(Frame::new(next))
        };
        map(&mut a, pa, vas[7], 5 << 12 | PRESENT, &mut alloc).unwrap();
        map(&mut b, pb, vas[7], 5 << 12 | PRESENT, &mut alloc).unwrap();
        let mut mapper = Mapper::new(pb);
        for (i, &va) in vas.iter().enumerate() {
            let pte = (i as u64 + 9) << 12 | PRESENT;
            let want = map(&mut a, pa, va, pte, &mut alloc);
            assert_eq!(mapper.map(&mut b, va, pte, &mut alloc), want, "at {va:#x}");
        }
        assert_eq!(a.pages.len(), b.pages.len());
        for va in vas {
            assert_eq!(lookup(&mut a, pa, va), lookup(&mut b, pb, va));
        }
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
                let mut alloc = || {
                    next += 1;
                    Ok(Frame::new(next))
                };
                map(&mut m, pml4, va, 7 << 12 | PRESENT, &mut alloc).unwrap();
            }
            let vas = (0..pages).map(|i| start + i * 4096).filter(|va| !premapped.contains(va));
            let want = tables_missing(&mut m, pml4, vas.clone());
            let before = next;
            for va in vas {
                let mut alloc = || {
                    next += 1;
                    Ok(Frame::new(next))
                };
                map(&mut m, pml4, va, 9 << 12 | PRESENT, &mut alloc).unwrap();
            }
            assert_eq!(want, next - before, "range {start:#x} + {pages} pages");
            assert_eq!(tables_missing(&mut m, pml4, (0..pages).map(|i| start + i * 4096)), 0);
        }
    }

    #[test]
    fn map_lookup_protect_unmap() {
        let mut m = Mem { next: 100, ..Mem::default() };
        let pml4 = m.alloc();
        let mut next = 200u64;
        let mut alloc = || {
            next += 1;
            Ok(Frame::new(next))
        };
        let va = 0x7f12_3456_7000;
        map(&mut m, pml4, va, 42 << 12 | PRESENT | USER, &mut alloc).unwrap();
        assert_eq!(m.pages.len(), 4, "the PML4 and three intermediate tables");
        assert_eq!(lookup(&mut m, pml4, va).map(frame_of), Some(Frame::new(42)));
        assert_eq!(lookup(&mut m, pml4, va + 0x1000), None);
        assert_eq!(map(&mut m, pml4, va, 43 << 12 | PRESENT, &mut alloc), Err(Error::AlreadyMapped));
        let e = protect(&mut m, pml4, va, PRESENT | USER | WRITABLE).unwrap();
        assert_eq!(frame_of(e), Frame::new(42));
        assert!(e & WRITABLE != 0);
        assert_eq!(frame_of(unmap(&mut m, pml4, va).unwrap()), Frame::new(42));
        assert_eq!(unmap(&mut m, pml4, va), Err(Error::NotMapped));
        assert_eq!(protect(&mut m, pml4, 0x1000, PRESENT), Err(Error::NotMapped));
    }

    #[test]
    fn teardown_visits_leaves_and_tables() {
        let mut m = Mem::default();
        let pml4 = Frame::new(1);
        let mut next = 10u64;
        let mut alloc = || {
            next += 1;
            Ok(Frame::new(next))
        };
        for i in 0..3u64 {
            map(&mut m, pml4, 0x40_0000 + i * 0x1000, (50 + i) << 12 | PRESENT, &mut alloc).unwrap();
        }
        map(&mut m, pml4, 0x10_0000_0000, 60 << 12 | PRESENT, &mut alloc).unwrap();
        let (mut leaves, mut tables) = (Vec::new(), Vec::new());
        teardown(&mut m, pml4, 0..256, &mut |e| leaves.push(frame_of(e).number()), &mut |f| tables.push(f));
        leaves.sort();
        assert_eq!(leaves, [50, 51, 52, 60]);
        assert_eq!(tables.len(), 5, "pdpt, 2 pd, 2 pt");
        assert_eq!(lookup(&mut m, pml4, 0x40_0000), None);
    }

    #[test]
    fn leaves_are_visited_with_their_addresses_and_can_be_cleared() {
        let mut m = Mem::default();
        let mut next = 10u64;
        let mut alloc = || {
            next += 1;
            Ok(Frame::new(next))
        };
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
