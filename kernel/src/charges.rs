//! How many live frame ranges each user is charged with (`ranges.rs`,
//! `PER_USER`), by uid: `MAKE` (every `pipe`) looks one count up instead
//! of counting the whole range table. An open-addressed table (linear
//! probing from a Fibonacci hash of the uid) with twice as many slots as
//! there are ranges, so it is at most half full; a count that reaches 0
//! frees its slot, the entries after it shifted back so every probe still
//! finds its uid.

/// Slots: at least twice the ranges the kernel holds (`ranges.rs` checks),
/// as at most one user per range is charged at once.
pub const SLOTS: usize = 2048;
const BITS: u32 = SLOTS.trailing_zeros();
const _: () = assert!(SLOTS.is_power_of_two());

/// A user's count (`n` 0: a free slot).
#[derive(Clone, Copy)]
pub struct Charge {
    uid: u32,
    n: u32,
}

impl Charge {
    pub const FREE: Charge = Charge { uid: 0, n: 0 };
}

/// The table's slots (a static the kernel state takes once at boot).
pub static TABLE: cell::Once<[Charge; SLOTS]> = cell::Once::new([Charge::FREE; SLOTS]);

pub struct Charges {
    slots: &'static mut [Charge; SLOTS],
}

impl Charges {
    pub fn new(slots: &'static mut [Charge; SLOTS]) -> Charges {
        Charges { slots }
    }

    /// The live ranges charged to `uid`.
    pub fn count(&self, uid: u32) -> usize {
        self.find(uid).map_or(0, |i| self.slots[i].n as usize)
    }

    /// One more range charged to `uid` (a slot is always free: fewer
    /// users than slots hold a range).
    pub fn add(&mut self, uid: u32) {
        let mut i = home(uid);
        while self.slots[i].n != 0 && self.slots[i].uid != uid {
            i = (i + 1) % SLOTS;
        }
        self.slots[i] = Charge { uid, n: self.slots[i].n + 1 };
    }

    /// One range fewer charged to `uid` (which has one).
    pub fn remove(&mut self, uid: u32) {
        let Some(mut free) = self.find(uid) else { return };
        self.slots[free].n -= 1;
        if self.slots[free].n > 0 {
            return;
        }
        // Backward shift: an entry after the hole moves into it unless its
        // home lies cyclically in (hole, entry], where a probe stops first.
        let mut j = free;
        loop {
            j = (j + 1) % SLOTS;
            let c = self.slots[j];
            if c.n == 0 {
                break;
            }
            let h = home(c.uid);
            let stays = if free <= j { free < h && h <= j } else { free < h || h <= j };
            if !stays {
                self.slots[free] = c;
                free = j;
            }
        }
        self.slots[free] = Charge::FREE;
    }

    fn find(&self, uid: u32) -> Option<usize> {
        let mut i = home(uid);
        while self.slots[i].n != 0 {
            if self.slots[i].uid == uid {
                return Some(i);
            }
            i = (i + 1) % SLOTS;
        }
        None
    }
}

fn home(uid: u32) -> usize {
    (uid.wrapping_mul(0x9E37_79B9) >> (32 - BITS)) as usize
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

    /// Uids that share a home slot with `uid` (a chain to shift).
    fn colliding(uid: u32, n: usize) -> std::vec::Vec<u32> {
        (uid + 1..).filter(|&u| home(u) == home(uid)).take(n).collect()
    }

    #[test]
    fn counts_follow_adds_and_removes_through_collisions() {
        let mut c = charges();
        let mut model: BTreeMap<u32, usize> = BTreeMap::new();
        let mut users = colliding(1000, 6);
        users.extend([0, 1000, 1001, 65534, u32::MAX]);
        users.extend(colliding(SLOTS as u32 * 7, 4));
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
        }
    }

    #[test]
    fn a_chain_wrapping_past_the_end_shifts_back() {
        let mut c = charges();
        // Uids whose home is the last slot: their chain wraps to slot 0.
        let last: std::vec::Vec<u32> = (0..).filter(|&u| home(u) == SLOTS - 1).take(3).collect();
        for &u in &last {
            c.add(u);
        }
        c.remove(last[0]);
        assert_eq!(c.count(last[0]), 0);
        assert_eq!((c.count(last[1]), c.count(last[2])), (1, 1));
        c.remove(last[1]);
        assert_eq!(c.count(last[2]), 1, "lost behind a freed slot");
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
    }
}
