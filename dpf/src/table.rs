//! The hash table at each branch of the merged tree: field value -> child.
//! Open addressing with linear probing and a keyed hash (the keys are
//! ports and addresses that filter owners choose, so a fixed hash would
//! let one owner pile its keys into one chain that every frame walks).

use alloc::vec::Vec;

#[derive(Clone, Debug)]
pub struct Table {
    slots: Vec<Option<(u64, u32)>>,
    len: usize,
    seed: u64,
}

fn mix(key: u64, seed: u64) -> u64 {
    let mut h = (key ^ seed).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    h ^= h >> 31;
    h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h ^ h >> 29
}

impl Table {
    pub fn new(seed: u64) -> Table {
        Table { slots: alloc::vec![None; 4], len: 0, seed }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn home(&self, key: u64) -> usize {
        mix(key, self.seed) as usize & (self.slots.len() - 1)
    }

    /// The value for `key`, and how many slots were looked at.
    pub fn get(&self, key: u64) -> (Option<u32>, u32) {
        let mask = self.slots.len() - 1;
        let mut i = self.home(key);
        let mut probes = 1;
        loop {
            match self.slots[i] {
                None => return (None, probes),
                Some((k, v)) if k == key => return (Some(v), probes),
                Some(_) => {
                    i = (i + 1) & mask;
                    probes += 1;
                }
            }
        }
    }

    pub fn insert(&mut self, key: u64, value: u32) {
        if 2 * (self.len + 1) > self.slots.len() {
            let grown = alloc::vec![None; 2 * self.slots.len()];
            let old = core::mem::replace(&mut self.slots, grown);
            self.len = 0;
            for (k, v) in old.into_iter().flatten() {
                self.insert(k, v);
            }
        }
        let mask = self.slots.len() - 1;
        let mut i = self.home(key);
        while let Some((k, _)) = self.slots[i] {
            if k == key {
                break;
            }
            i = (i + 1) & mask;
        }
        if self.slots[i].is_none() {
            self.len += 1;
        }
        self.slots[i] = Some((key, value));
    }

    /// Removes `key`, shifting later entries of its run back so that no
    /// lookup stops early at the hole.
    pub fn remove(&mut self, key: u64) -> Option<u32> {
        let mask = self.slots.len() - 1;
        let mut i = self.home(key);
        let value = loop {
            match self.slots[i] {
                None => return None,
                Some((k, v)) if k == key => break v,
                Some(_) => i = (i + 1) & mask,
            }
        };
        self.slots[i] = None;
        self.len -= 1;
        let mut j = (i + 1) & mask;
        while let Some((k, v)) = self.slots[j] {
            let h = self.home(k);
            // Move back if its home is not in (i, j] (cyclically).
            let stays = if i <= j { i < h && h <= j } else { i < h || h <= j };
            if !stays {
                self.slots[i] = Some((k, v));
                self.slots[j] = None;
                i = j;
            }
            j = (j + 1) & mask;
        }
        Some(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::collections::BTreeMap;

    #[test]
    fn agrees_with_a_map_under_churn() {
        let mut t = Table::new(0x1234);
        let mut m = BTreeMap::new();
        let mut x = 88172645463325252u64;
        for step in 0..20_000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let key = x % 512;
            if x & 0x100 != 0 {
                t.insert(key, step);
                m.insert(key, step);
            } else {
                assert_eq!(t.remove(key), m.remove(&key));
            }
            assert_eq!(t.len(), m.len());
        }
        for k in 0..512 {
            assert_eq!(t.get(k).0, m.get(&k).copied());
        }
    }
}
