//! How many live frame ranges each user is charged with (`ranges.rs`,
//! `PER_USER`), by uid: `MAKE` (every `pipe`) reads one user's count
//! instead of counting the whole range table. The users holding ranges
//! are a list in no order: few hold ranges at once, so a look-up is a
//! short scan (never longer than the table's count was), and a user whose
//! count reaches 0 leaves it.

/// Entries: at least as many as the ranges the kernel holds (`ranges.rs`
/// checks), as each live range is charged to one user.
pub const SLOTS: usize = 1024;

/// A user's count.
#[derive(Clone, Copy)]
pub struct Charge {
    uid: u32,
    n: u32,
}

impl Charge {
    pub const FREE: Charge = Charge { uid: 0, n: 0 };
}

/// The list's entries (a static the kernel state takes once at boot).
pub static TABLE: cell::Once<[Charge; SLOTS]> = cell::Once::new([Charge::FREE; SLOTS]);

pub struct Charges {
    slots: &'static mut [Charge; SLOTS],
    /// Users with a count: the first `len` entries.
    len: usize,
}

impl Charges {
    pub fn new(slots: &'static mut [Charge; SLOTS]) -> Charges {
        Charges { slots, len: 0 }
    }

    /// The live ranges charged to `uid`.
    pub fn count(&self, uid: u32) -> usize {
        self.find(uid).map_or(0, |i| self.slots[i].n as usize)
    }

    /// One more range charged to `uid` (an entry is always free: no more
    /// users than live ranges have a count).
    pub fn add(&mut self, uid: u32) {
        match self.find(uid) {
            Some(i) => self.slots[i].n += 1,
            None => {
                self.slots[self.len] = Charge { uid, n: 1 };
                self.len += 1;
            }
        }
    }

    /// One range fewer charged to `uid` (which has one).
    pub fn remove(&mut self, uid: u32) {
        let Some(i) = self.find(uid) else { return };
        self.slots[i].n -= 1;
        if self.slots[i].n == 0 {
            self.len -= 1;
            self.slots[i] = self.slots[self.len];
        }
    }

    fn find(&self, uid: u32) -> Option<usize> {
        self.slots[..self.len].iter().position(|c| c.uid == uid)
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::boxed::Box;
    use std::collections::BTreeMap;

    const RANGES: usize = crate::ranges::RANGES;

    fn charges() -> Charges {
        Charges::new(Box::leak(Box::new([Charge::FREE; SLOTS])))
    }

    #[test]
    fn counts_follow_adds_and_removes() {
        let mut c = charges();
        let mut model: BTreeMap<u32, usize> = BTreeMap::new();
        let users = [0, 1, 7, 1000, 1001, 65534, u32::MAX];
        // A fixed pseudo-random walk of adds and removes.
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let u = users[(x % users.len() as u64) as usize];
            let have = model.get(&u).copied().unwrap_or(0);
            if x >> 40 & 1 == 0 || have == 0 {
                c.add(u);
                *model.entry(u).or_default() += 1;
            } else {
                c.remove(u);
                model.insert(u, have - 1);
            }
            for &v in &users {
                assert_eq!(c.count(v), model.get(&v).copied().unwrap_or(0), "uid {v}");
            }
            assert_eq!(c.len, model.values().filter(|&&n| n > 0).count(), "users listed");
        }
    }

    #[test]
    fn as_many_users_as_ranges_fit() {
        let mut c = charges();
        for u in 0..RANGES as u32 {
            c.add(u * 17);
        }
        assert!((0..RANGES as u32).all(|u| c.count(u * 17) == 1));
        for u in 0..RANGES as u32 {
            c.remove(u * 17);
        }
        assert!((0..RANGES as u32).all(|u| c.count(u * 17) == 0));
        assert_eq!(c.len, 0);
    }
}
