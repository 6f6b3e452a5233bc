//! The check of every metadata change (paper 000 §4.1, §4.4 "Allocate",
//! "Deallocate"): XN runs `owns` on each block before and after the
//! proposed bytes, asks `acl`, and accepts only if the difference is
//! exactly what the library declared: new claims of free blocks
//! (allocations), dropped claims (frees) and, across the blocks of one
//! request, claims that leave one block and appear in another (moves, for
//! a rename between directories). Nothing is changed unless everything
//! passes.

use alloc::vec::Vec;

use crate::claims::{first_difference, intersect, sort_disjoint, subtract, Claim};
use crate::udf::{AclQuery, OP_MODIFY};
use crate::{Cred, Disk, Error, Info, Meta, PageId, Pages, Parent, Principal, Xn, BLOCK};

/// Most changes in one request, and most distinct blocks they touch.
pub const MAX_CHANGES: usize = 32;
pub const MAX_BLOCKS: usize = 4;

/// Bytes to write at `off` in metadata block `block`.
#[derive(Clone, Copy, Debug)]
pub struct Change<'a> {
    pub block: u64,
    pub off: usize,
    pub bytes: &'a [u8],
}

/// One block's part of a request, checked.
struct Proposal {
    block: u64,
    new: [u8; BLOCK],
    claims: Vec<Claim>,
    /// The bytes the changes cover (outside them `new` is the old bytes).
    span: (usize, usize),
}

/// Where `old` and `new` differ: the first differing byte and one past
/// the last (0 and 0 if none), looked for only in `lo..hi` (the changes'
/// span: the rest is equal), eight bytes at a time (`modify` is the file
/// system's commonest call; comparing a block byte by byte was most of
/// its cost).
fn differ(old: &[u8; BLOCK], new: &[u8; BLOCK], (lo, hi): (usize, usize)) -> (usize, usize) {
    let (lo, hi) = (lo / 8, hi.div_ceil(8).min(BLOCK / 8));
    let (a, b) = (old.as_chunks::<8>().0, new.as_chunks::<8>().0);
    let xor = |i: usize| u64::from_le_bytes(a[i]) ^ u64::from_le_bytes(b[i]);
    let Some(first) = (lo..hi).find(|&i| xor(i) != 0) else { return (0, 0) };
    let last = (first..hi).rev().find(|&i| xor(i) != 0).unwrap_or(first);
    let start = first * 8 + xor(first).trailing_zeros() as usize / 8;
    (start, last * 8 + 8 - xor(last).leading_zeros() as usize / 8)
}

fn as_ranges(v: &[(u64, u64)]) -> Result<Vec<Claim>, Error> {
    let mut out: Vec<Claim> =
        v.iter().map(|&(start, count)| Claim { start, count, tid: 0, slot: 0 }).collect();
    if let Some(c) = out.iter().find(|c| c.count == 0 || c.start.checked_add(c.count).is_none()) {
        return Err(Error::BadChange { block: c.start });
    }
    sort_disjoint(&mut out).map_err(|at| Error::BadChange { block: at })?;
    Ok(out)
}

fn untyped(v: &[Claim]) -> Vec<Claim> {
    v.iter().map(|c| Claim { tid: 0, ..*c }).collect()
}

/// Checks that `done` (what the change does) equals `declared`.
fn matches(done: &[Claim], declared: &[Claim]) -> Result<(), Error> {
    let done = untyped(done);
    match first_difference(&done, declared) {
        None => Ok(()),
        Some(b) if done.iter().any(|c| c.contains(b)) => Err(Error::Undeclared { block: b }),
        Some(b) => Err(Error::NotDone { block: b }),
    }
}

impl<D: Disk, P: Pages> Xn<D, P> {
    /// Applies `changes` to cached metadata blocks if `acl` allows each
    /// block's change for `cred` and the change allocates exactly `alloc`
    /// (free blocks), frees exactly `free` and moves the rest between the
    /// blocks of the request. Returns the pages of freed blocks that were
    /// cached (back to their owners).
    pub fn modify(
        &mut self,
        who: Principal,
        cred: Cred,
        changes: &[Change],
        alloc: &[(u64, u64)],
        free: &[(u64, u64)],
    ) -> Result<Vec<PageId>, Error> {
        if changes.is_empty() || changes.len() > MAX_CHANGES {
            return Err(Error::BadChange { block: changes.first().map_or(0, |c| c.block) });
        }
        let (alloc, free) = (as_ranges(alloc)?, as_ranges(free)?);
        let mut props: Vec<Proposal> = Vec::new();
        for ch in changes {
            if !props.iter().any(|p| p.block == ch.block) {
                if props.len() == MAX_BLOCKS {
                    return Err(Error::BadChange { block: ch.block });
                }
                props.push(self.propose(who, ch.block)?);
            }
        }
        for p in &mut props {
            let size = self.tmpl(self.registry[&p.block].tid)?.size(p.block, &p.new)?;
            for ch in changes.iter().filter(|c| c.block == p.block) {
                let end = ch.off.checked_add(ch.bytes.len()).filter(|&e| e <= size && !ch.bytes.is_empty());
                let end = end.ok_or(Error::BadChange { block: p.block })?;
                p.new[ch.off..end].copy_from_slice(ch.bytes);
                p.span = (p.span.0.min(ch.off), p.span.1.max(end));
            }
        }
        let (mut removed, mut added) = (Vec::new(), Vec::new());
        for p in &mut props {
            let e = self.registry[&p.block];
            let old = self.pages.bytes(e.page).ok_or(Error::BadPage)?;
            let t = self.tmpl(e.tid)?;
            let (first, last) = differ(old, &p.new, p.span);
            let q =
                AclQuery { op: OP_MODIFY, slot: 0, off: first as u32, len: (last - first) as u32, child: 0 };
            if !t.allows(cred, &q, p.block, old, &p.new)? {
                return Err(Error::Denied { block: p.block });
            }
            let (claims, runs) = t.claims(p.block, &p.new, self.sb.nblocks)?;
            self.stats.udf_runs += runs + 1;
            let before = &self.meta[&p.block].mem;
            removed.extend(subtract(before, &claims).into_iter().map(|c| (p.block, c)));
            added.extend(subtract(&claims, before).into_iter().map(|c| (p.block, c)));
            p.claims = claims;
        }
        let mut all_removed: Vec<Claim> = removed.iter().map(|r| r.1).collect();
        let mut all_added: Vec<Claim> = added.iter().map(|a| a.1).collect();
        sort_disjoint(&mut all_removed).map_err(|at| Error::Overlap { block: props[0].block, at })?;
        sort_disjoint(&mut all_added).map_err(|at| Error::Overlap { block: props[0].block, at })?;
        let moved = intersect(&all_removed, &all_added);
        let freed = subtract(&all_removed, &moved);
        let allocated = subtract(&all_added, &moved);
        matches(&allocated, &alloc)?;
        matches(&freed, &free)?;
        if let Some(c) = intersect(&untyped(&allocated), &untyped(&freed)).first() {
            return Err(Error::Retype { block: c.start });
        }
        for (b, _) in crate::claims::blocks(&allocated) {
            if !self.is_free(b) {
                return Err(Error::NotFree { block: b });
            }
        }
        let dest = |x: u64| added.iter().find(|(_, c)| c.contains(x)).map_or(0, |a| a.0);
        for (x, _) in crate::claims::blocks(&moved).filter(|(x, _)| self.meta.contains_key(x)) {
            if self.is_ancestor(x, Parent::Block(dest(x))) {
                return Err(Error::Cycle { block: x });
            }
        }
        // Everything is checked: apply.
        for p in props {
            self.touch(p.block);
            let e = self.registry.get_mut(&p.block).ok_or(Error::NotCached { block: p.block })?;
            e.dirty = true;
            let page = e.page;
            *self.pages.bytes_mut(page).ok_or(Error::BadPage)? = p.new;
            if let Some(m) = self.meta.get_mut(&p.block) {
                m.mem = p.claims;
            }
        }
        for (x, tid) in crate::claims::blocks(&allocated) {
            self.info[x as usize] = Info { tid, mem: 1, disk: 0, uninit: true };
            self.unstable.insert(x);
            self.touch(x);
            if self.tmpl(tid)?.is_metadata() {
                let m =
                    Meta { parent: Parent::Block(dest(x)), mem: Vec::new(), disk: Vec::new(), last: None };
                self.meta.insert(x, m);
            }
        }
        for (x, _) in crate::claims::blocks(&moved) {
            let d = dest(x);
            if let Some(m) = self.meta.get_mut(&x) {
                m.parent = Parent::Block(d);
            }
        }
        // Freeing a metadata block frees what it claims, down its subtree
        // (XN knows every claim in memory: no I/O, bounded by the tree).
        let mut pages = Vec::new();
        let mut todo: Vec<(u64, u64)> = freed.iter().map(|c| (c.start, c.end())).collect();
        while let Some((start, end)) = todo.pop() {
            for x in start..end {
                let i = &mut self.info[x as usize];
                i.mem = i.mem.saturating_sub(1);
                self.touch(x);
                if self.info[x as usize].mem != 0 {
                    continue;
                }
                pages.extend(self.drop_entry(x));
                if let Some(m) = self.meta.get_mut(&x) {
                    todo.extend(core::mem::take(&mut m.mem).iter().map(|c| (c.start, c.end())));
                }
                self.settle(x);
            }
        }
        Ok(pages)
    }

    /// A copy of cached metadata block `block` to change.
    fn propose(&self, who: Principal, block: u64) -> Result<Proposal, Error> {
        let e = self.registry.get(&block).ok_or(Error::NotCached { block })?;
        if !self.meta.contains_key(&block) {
            return Err(Error::NotMetadata { block });
        }
        if e.locked_by.is_some_and(|l| l != who) {
            return Err(Error::Locked { block });
        }
        let new = *self.pages.bytes(e.page).ok_or(Error::BadPage)?;
        Ok(Proposal { block, new, claims: Vec::new(), span: (BLOCK, 0) })
    }

    /// Frees `b` for reuse once nothing claims it in memory or on disk
    /// (the end of its stay on the will-free list). A freed metadata
    /// block's on-disk claims stop counting with it.
    pub(crate) fn settle(&mut self, b: u64) {
        let mut todo = alloc::vec![b];
        while let Some(x) = todo.pop() {
            let i = self.info[x as usize];
            if i.mem != 0 || i.disk != 0 {
                continue;
            }
            self.info[x as usize] = Info::default();
            self.touch(x);
            self.unstable.remove(&x);
            self.written.remove(&x);
            self.drop_entry(x);
            if let Some(m) = self.meta.remove(&x) {
                // `disk` includes every version written since the flush.
                for (y, _) in crate::claims::blocks(&m.disk) {
                    let j = &mut self.info[y as usize];
                    j.disk = j.disk.saturating_sub(1);
                    self.touch(y);
                    todo.push(y);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The byte-by-byte answer `differ` must give.
    fn slow(old: &[u8; BLOCK], new: &[u8; BLOCK]) -> (usize, usize) {
        let first = old.iter().zip(new).position(|(a, b)| a != b).unwrap_or(0);
        let last = old.iter().zip(new).rposition(|(a, b)| a != b).map_or(0, |l| l + 1);
        (first, last)
    }

    #[test]
    fn the_difference_is_found_to_the_byte_within_the_changes_span() {
        let old = [7u8; BLOCK];
        for (lo, hi) in [(0, 1), (0, BLOCK), (5, 6), (13, 29), (4090, 4096), (8, 16), (3, 4093)] {
            for cut in [lo, (lo + hi) / 2, hi - 1] {
                let mut new = old;
                new[cut] = 9;
                assert_eq!(differ(&old, &new, (lo, hi)), slow(&old, &new), "{lo}..{hi} at {cut}");
                new[lo] = 1;
                new[hi - 1] = 2;
                assert_eq!(differ(&old, &new, (lo, hi)), slow(&old, &new), "{lo}..{hi} both ends");
            }
            assert_eq!(differ(&old, &old, (lo, hi)), (0, 0));
        }
    }
}
