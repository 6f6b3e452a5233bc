//! Owned sets: what `owns` says a metadata block points to, as ranges of
//! blocks with the template they are claimed as (paper 000 §4.1: "a set of
//! tuples ... a block address, the number of blocks and the template").
//! Sets are kept sorted and disjoint; the set arithmetic below is how XN
//! tells an allocation, a free and a move apart.

use alloc::vec::Vec;

use crate::Tid;

/// `count` blocks from `start`, claimed as template `tid` by slot `slot`
/// of the claiming block's `owns`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Claim {
    pub start: u64,
    pub count: u64,
    pub tid: Tid,
    pub slot: u32,
}

impl Claim {
    pub fn end(&self) -> u64 {
        self.start + self.count
    }

    pub fn contains(&self, b: u64) -> bool {
        self.start <= b && b < self.end()
    }

    fn piece(&self, start: u64, end: u64) -> Claim {
        Claim { start, count: end - start, ..*self }
    }
}

/// Sorts `v` by start and checks the ranges do not overlap; on overlap
/// returns the first block claimed twice.
pub fn sort_disjoint(v: &mut [Claim]) -> Result<(), u64> {
    v.sort_unstable_by_key(|c| c.start);
    for w in v.windows(2) {
        if w[1].start < w[0].end() {
            return Err(w[1].start);
        }
    }
    Ok(())
}

/// The parts of `a` that `b` does not claim with the same template (both
/// sorted and disjoint).
pub fn subtract(a: &[Claim], b: &[Claim]) -> Vec<Claim> {
    let mut out = Vec::new();
    let mut j = 0;
    for c in a {
        while j < b.len() && b[j].end() <= c.start {
            j += 1;
        }
        let mut at = c.start;
        let mut k = j;
        while k < b.len() && b[k].start < c.end() {
            if b[k].tid == c.tid {
                if b[k].start > at {
                    out.push(c.piece(at, b[k].start));
                }
                at = at.max(b[k].end());
            }
            k += 1;
        }
        if at < c.end() {
            out.push(c.piece(at, c.end()));
        }
    }
    out
}

/// The parts claimed by both with the same template (slots from `b`).
pub fn intersect(a: &[Claim], b: &[Claim]) -> Vec<Claim> {
    let mut out = Vec::new();
    for c in b {
        for d in a.iter().filter(|d| d.tid == c.tid && d.start < c.end() && c.start < d.end()) {
            out.push(c.piece(c.start.max(d.start), c.end().min(d.end())));
        }
    }
    out
}

/// The first block on which two sets differ (ignoring slots and how the
/// ranges are split), if any.
pub fn first_difference(a: &[Claim], b: &[Claim]) -> Option<u64> {
    let x = subtract(a, b).first().map(|c| c.start);
    let y = subtract(b, a).first().map(|c| c.start);
    match (x, y) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, y) => x.or(y),
    }
}

/// Every block of the set, one by one.
pub fn blocks(set: &[Claim]) -> impl Iterator<Item = (u64, Tid)> + '_ {
    set.iter().flat_map(|c| (c.start..c.end()).map(move |b| (b, c.tid)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(start: u64, count: u64, tid: Tid) -> Claim {
        Claim { start, count, tid, slot: 0 }
    }

    #[test]
    fn subtract_cuts_only_same_template() {
        let a = [c(10, 10, 1), c(30, 2, 1)];
        let b = [c(12, 2, 1), c(15, 2, 2), c(19, 12, 1)];
        assert_eq!(subtract(&a, &b), [c(10, 2, 1), c(14, 5, 1), c(31, 1, 1)]);
        assert_eq!(subtract(&b, &a), [c(15, 2, 2), c(20, 10, 1)]);
    }

    #[test]
    fn grown_extent_differs_by_its_new_blocks() {
        let old = [c(100, 10, 3)];
        let new = [c(100, 12, 3)];
        assert_eq!(subtract(&new, &old), [c(110, 2, 3)]);
        assert!(subtract(&old, &new).is_empty());
        assert_eq!(first_difference(&old, &new), Some(110));
        assert_eq!(first_difference(&[c(1, 2, 1), c(3, 1, 1)], &[c(1, 3, 1)]), None);
    }

    #[test]
    fn overlap_is_found() {
        let mut v = [c(20, 5, 1), c(10, 11, 1)];
        assert_eq!(sort_disjoint(&mut v), Err(20));
        let mut w = [c(20, 5, 1), c(10, 10, 1)];
        assert_eq!(sort_disjoint(&mut w), Ok(()));
    }

    #[test]
    fn intersect_keeps_template() {
        assert_eq!(intersect(&[c(0, 10, 1)], &[c(5, 10, 1), c(2, 2, 2)]), [c(5, 5, 1)]);
    }
}
