//! The exposed registry's table: `abi::xn::RegEntry` slots keyed by
//! block, open addressing with linear probing from
//! `abi::xn::registry_slot`, deletion by moving later entries of a probe
//! run back (no tombstones, so a reader's probe always ends at the first
//! empty slot). Environments read it with `user::xn::entry`; the kernel
//! writes it (`view.rs`). Host-tested.

use abi::xn::{registry_slot, RegEntry};

pub struct Table<'a> {
    slots: &'a mut [RegEntry],
    entries: u64,
}

impl<'a> Table<'a> {
    /// An empty table over `slots` (a power of two of them, zeroed).
    pub fn new(slots: &'a mut [RegEntry]) -> Table<'a> {
        debug_assert!(slots.len().is_power_of_two());
        Table { slots, entries: 0 }
    }

    pub fn entries(&self) -> u64 {
        self.entries
    }

    fn len(&self) -> u64 {
        self.slots.len() as u64
    }

    /// Where `block` is, or the empty slot its probe ends at (the table
    /// always has one: the kernel keeps it at most three quarters full).
    fn find(&self, block: u64) -> (usize, bool) {
        let mut i = registry_slot(block, self.len()) as usize;
        loop {
            match self.slots[i].block {
                0 => return (i, false),
                b if b == block => return (i, true),
                _ => i = (i + 1) % self.slots.len(),
            }
        }
    }

    /// (Environments look blocks up themselves: `user::xn::entry`.)
    #[cfg(test)]
    pub fn get(&self, block: u64) -> Option<RegEntry> {
        let (i, present) = self.find(block);
        present.then(|| self.slots[i])
    }

    /// Sets `e.block`'s entry.
    pub fn put(&mut self, e: RegEntry) {
        let (i, present) = self.find(e.block);
        self.slots[i] = e;
        self.entries += u64::from(!present);
    }

    /// Removes `block`'s entry, if any.
    pub fn remove(&mut self, block: u64) {
        let (mut i, present) = self.find(block);
        if !present {
            return;
        }
        let n = self.slots.len();
        self.slots[i] = RegEntry::default();
        self.entries -= 1;
        let mut j = i;
        loop {
            j = (j + 1) % n;
            let b = self.slots[j].block;
            if b == 0 {
                return;
            }
            // Entry j stays if its home lies cyclically in (i, j].
            let home = registry_slot(b, self.len()) as usize;
            let stays = if i <= j { i < home && home <= j } else { i < home || home <= j };
            if !stays {
                self.slots[i] = self.slots[j];
                self.slots[j] = RegEntry::default();
                i = j;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn entry(block: u64, frame: u64) -> RegEntry {
        RegEntry { block, frame, ..RegEntry::default() }
    }

    /// Random puts and removes on a small table (long probe runs that
    /// wrap around its end) agree with a map after every step.
    #[test]
    fn the_table_agrees_with_a_map_under_random_puts_and_removes() {
        let mut slots = vec![RegEntry::default(); 64];
        let mut t = Table::new(&mut slots);
        let mut model = BTreeMap::new();
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        for step in 0..200_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let block = 1 + x % 90;
            if x >> 40 & 1 == 0 && model.len() < 48 {
                t.put(entry(block, step));
                model.insert(block, step);
            } else {
                t.remove(block);
                model.remove(&block);
            }
            assert_eq!(t.entries(), model.len() as u64);
            if step % 97 == 0 {
                for b in 1..=90 {
                    assert_eq!(t.get(b).map(|e| e.frame), model.get(&b).copied(), "block {b} at step {step}");
                }
            }
        }
    }

    #[test]
    fn a_removed_block_is_gone_and_its_run_is_still_found() {
        let mut slots = vec![RegEntry::default(); 8];
        let mut t = Table::new(&mut slots);
        for b in 1..=6 {
            t.put(entry(b, b * 10));
        }
        t.remove(3);
        t.remove(3);
        assert_eq!(t.get(3), None);
        assert_eq!(t.entries(), 5);
        for b in [1, 2, 4, 5, 6] {
            assert_eq!(t.get(b).map(|e| e.frame), Some(b * 10));
        }
        t.put(entry(2, 99));
        assert_eq!((t.get(2).map(|e| e.frame), t.entries()), (Some(99), 5));
    }
}
