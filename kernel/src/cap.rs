//! Capabilities (paper 000 §3.3, §5.1): Xok's hierarchically-named
//! capabilities, presented explicitly on every call.
//!
//! Every kernel object is guarded by a capability. A call names the
//! capability it acts with, and is allowed if that capability *dominates*
//! the guard: is the guard itself or one of its ancestors in the derivation
//! tree. Revoking a capability revokes its whole subtree, so a credential
//! handed to another party can always be taken back.
//!
//! Handing a capability to another environment *lends* it: the receiver
//! gets a new entry derived from the lender's that carries the lender's
//! authority (it dominates what its parent dominates). Revoking the loan
//! takes it from the receiver and whoever it lent it on to, never from the
//! lender; revoking the lender's entry ends every loan made from it.
//!
//! The table is a fixed array of entries linked into a tree (parent, first
//! child, doubly linked siblings) plus a free list, so derivation, the
//! dominance check and revocation cost what they touch, never table size,
//! and nothing allocates or recurses.
//!
//! Errors (the ABI has no capability-specific code yet):
//! - a NONE, stale or otherwise dead reference, a missing right, or an empty
//!   list slot: `NotPermitted` — a revoked credential carries no authority,
//!   so it is reported exactly like one never held;
//! - unknown rights bits: `BadFlags` (from `Rights::from_bits`, before
//!   anything else is looked at);
//! - a full table, a full list or the depth limit: `NoMemory` (all bound
//!   kernel memory);
//! - a list slot number out of range: `BadLength`.

use abi::Error;

/// Reported for NONE or stale references; see the module comment.
const INVALID: Error = Error::NotPermitted;

/// Index 0 is never handed out, so it doubles as the null link.
const NIL: u16 = 0;

/// Number of entries in the capability table (entry 0 is never used).
pub const CAPS: usize = 8192;
/// Longest derivation chain, root included; bounds every walk up the tree.
pub const MAX_DEPTH: u32 = 32;

// Links are u16 and depths u8 to keep the table small.
const _: () = assert!(CAPS <= u16::MAX as usize + 1 && MAX_DEPTH <= u8::MAX as u32);

/// Rights bits a capability carries (a derived capability carries a subset).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Rights(u8);

impl Rights {
    pub const NONE: Rights = Rights(0);
    pub const READ: Rights = Rights(1);
    pub const WRITE: Rights = Rights(2);
    /// May derive new capabilities from this one (and, by kernel policy,
    /// hand it to another environment).
    pub const GRANT: Rights = Rights(4);
    pub const ALL: Rights = Rights(7);

    /// The rights a caller names as bits; unknown bits are `BadFlags`.
    pub fn from_bits(bits: u64) -> Result<Rights, Error> {
        if bits & !(Rights::ALL.0 as u64) != 0 {
            return Err(Error::BadFlags);
        }
        Ok(Rights(bits as u8))
    }

    /// Whether every right in `other` is among these.
    pub const fn contains(self, other: Rights) -> bool {
        self.0 & other.0 == other.0
    }
}

impl core::ops::BitOr for Rights {
    type Output = Rights;
    fn bitor(self, other: Rights) -> Rights {
        Rights(self.0 | other.0)
    }
}

impl core::ops::BitAnd for Rights {
    type Output = Rights;
    fn bitand(self, other: Rights) -> Rights {
        Rights(self.0 & other.0)
    }
}

/// A reference to a capability: table index plus generation, so a reference
/// to a revoked (and possibly reused) entry is detectably stale.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct CapRef {
    pub index: u32,
    pub generation: u32,
}

impl CapRef {
    pub const NONE: CapRef = CapRef { index: 0, generation: 0 };

    /// Index 0 names no capability, whatever the generation.
    pub fn is_none(self) -> bool {
        self.index == 0
    }

    /// One register's worth: generation in the high half, index in the low.
    pub fn pack(self) -> u64 {
        (self.generation as u64) << 32 | self.index as u64
    }

    pub fn unpack(v: u64) -> CapRef {
        CapRef { index: v as u32, generation: (v >> 32) as u32 }
    }
}

/// The capability table.
#[cfg_attr(test, derive(Clone, PartialEq))]
pub struct Caps {
    /// Bumped when an entry is freed, so old references stop matching.
    generation: [u32; CAPS],
    parent: [u16; CAPS],
    first_child: [u16; CAPS],
    /// Also links the free list.
    next_sibling: [u16; CAPS],
    prev_sibling: [u16; CAPS],
    rights: [Rights; CAPS],
    /// 0 for a root.
    depth: [u8; CAPS],
    /// A loan: the entry has its parent's authority (see `lend`).
    loan: [bool; CAPS],
    in_use: [bool; CAPS],
    free_head: u16,
    /// Entries from here up have never been used; taking them in order
    /// keeps `new` all zeroes (a `.bss` static) with no list to build.
    fresh: u32,
    live: u32,
}

impl Default for Caps {
    fn default() -> Self {
        Self::new()
    }
}

impl Caps {
    /// All entries free.
    pub const fn new() -> Caps {
        Caps {
            generation: [0; CAPS],
            parent: [NIL; CAPS],
            first_child: [NIL; CAPS],
            next_sibling: [NIL; CAPS],
            prev_sibling: [NIL; CAPS],
            rights: [Rights::NONE; CAPS],
            depth: [0; CAPS],
            loan: [false; CAPS],
            in_use: [false; CAPS],
            free_head: NIL,
            fresh: 1,
            live: 0,
        }
    }

    /// A capability with no parent (the kernel makes one for the first
    /// environment).
    pub fn create_root(&mut self, rights: Rights) -> Result<CapRef, Error> {
        self.alloc(NIL, rights, 0)
    }

    /// A new capability derived from `parent`, carrying `rights`.
    ///
    /// Deriving needs GRANT in `parent`: without it a capability is a leaf
    /// credential its holder can use but not multiply. `rights` must be a
    /// subset of the parent's, so rights never widen down the tree.
    pub fn derive(&mut self, parent: CapRef, rights: Rights) -> Result<CapRef, Error> {
        let p = self.slot(parent).ok_or(INVALID)?;
        let have = self.rights[p];
        if !have.contains(Rights::GRANT) || !have.contains(rights) {
            return Err(Error::NotPermitted);
        }
        let depth = self.depth[p] + 1;
        if depth as u32 >= MAX_DEPTH {
            return Err(Error::NoMemory);
        }
        self.alloc(p as u16, rights, depth)
    }

    /// A loan of `c` to another party (paper 000 §3.3): a new entry, with
    /// `c`'s rights, that dominates whatever `c` dominates. The borrower can
    /// revoke only the loan (and what it derived from it); revoking `c`, or
    /// what `c` was lent from, ends the loan. Lending a loan lends what it
    /// stands for, so loans do not chain: a borrower that lends on and then
    /// ends does not take its borrowers' loans with it (the lender of a
    /// loan takes it back from the borrower's list, `cap_revoke` with an
    /// environment). Lending needs the grant right.
    pub fn lend(&mut self, c: CapRef) -> Result<CapRef, Error> {
        self.lend_as(c, self.rights(c).ok_or(INVALID)?)
    }

    /// `lend` with fewer rights: the loan carries `rights`, a subset of
    /// `c`'s (a read-only loan of a frame range, `crate::ranges`).
    pub fn lend_as(&mut self, c: CapRef, rights: Rights) -> Result<CapRef, Error> {
        let have = self.rights(c).ok_or(INVALID)?;
        if !have.contains(Rights::GRANT) || !have.contains(rights) {
            return Err(Error::NotPermitted);
        }
        let real = self.real(self.slot(c).ok_or(INVALID)?);
        let depth = self.depth[real] + 1;
        if depth as u32 >= MAX_DEPTH {
            return Err(Error::NoMemory);
        }
        let loan = self.alloc(real as u16, rights, depth)?;
        self.loan[loan.index as usize] = true;
        Ok(loan)
    }

    /// What live `c` stands for: itself, or for a loan the capability it
    /// was lent from.
    pub fn lent_from(&self, c: CapRef) -> Option<CapRef> {
        let i = self.real(self.slot(c)?);
        Some(CapRef { index: i as u32, generation: self.generation[i] })
    }

    /// The capability live `c` was derived (or lent) from, if any.
    pub fn parent_of(&self, c: CapRef) -> Option<CapRef> {
        let p = self.parent[self.slot(c)?] as usize;
        (p != NIL as usize).then(|| CapRef { index: p as u32, generation: self.generation[p] })
    }

    /// The entry a live entry stands for (one step: loans do not chain).
    fn real(&self, i: usize) -> usize {
        if self.loan[i] {
            debug_assert!(!self.loan[self.parent[i] as usize], "loans do not chain");
            self.parent[i] as usize
        } else {
            i
        }
    }

    /// Revokes `c` and every capability derived from it: all their
    /// references become stale and their entries are reused. Returns how
    /// many were revoked.
    pub fn revoke(&mut self, c: CapRef) -> Result<u32, Error> {
        let top = self.slot(c).ok_or(INVALID)?;
        let mut n = 0;
        let mut cur = top;
        // Free leaves first: go down to the leftmost leaf, free it, and
        // resume at its parent, whose next child is now its first. Each
        // entry is entered once from above and left once upwards, so this
        // is linear in the subtree and needs no stack.
        loop {
            while self.first_child[cur] != NIL {
                cur = self.first_child[cur] as usize;
            }
            let up = self.parent[cur] as usize;
            self.unlink(cur);
            self.release(cur);
            n += 1;
            if cur == top {
                return Ok(n);
            }
            cur = up;
        }
    }

    /// Moves live `c`, with everything derived from it, under live `to`,
    /// which dominates it already (an ancestor that is no loan): no
    /// authority is made, and the entries between lose theirs over `c`
    /// (a process handed to init outlives its parent's guard).
    pub fn move_under(&mut self, c: CapRef, to: CapRef) -> Result<(), Error> {
        let (i, t) = (self.slot(c).ok_or(INVALID)?, self.slot(to).ok_or(INVALID)?);
        if i == t || self.loan[t] || !self.dominates(to, c) {
            return Err(Error::NotPermitted);
        }
        self.unlink(i);
        self.link(i, t as u16);
        // Depths shrink by the same amount over the whole subtree: a
        // pre-order walk by the links, as `revoke` walks (no stack).
        let less = self.depth[i] - (self.depth[t] + 1);
        let mut cur = i;
        loop {
            self.depth[cur] -= less;
            if self.first_child[cur] != NIL {
                cur = self.first_child[cur] as usize;
                continue;
            }
            while cur != i && self.next_sibling[cur] == NIL {
                cur = self.parent[cur] as usize;
            }
            if cur == i {
                return Ok(());
            }
            cur = self.next_sibling[cur] as usize;
        }
    }

    /// Is `c` a live loan (see `lend`)?
    pub fn is_loan(&self, c: CapRef) -> bool {
        self.slot(c).is_some_and(|i| self.loan[i])
    }

    pub fn valid(&self, c: CapRef) -> bool {
        self.slot(c).is_some()
    }

    /// `None` if `c` is stale.
    pub fn rights(&self, c: CapRef) -> Option<Rights> {
        self.slot(c).map(|i| self.rights[i])
    }

    /// Is `p` the `guard` itself or one of its ancestors? Both must be live:
    /// a stale guard is dominated by nothing. A loan stands for the entry it
    /// was lent from.
    pub fn dominates(&self, p: CapRef, guard: CapRef) -> bool {
        let (Some(p), Some(mut g)) = (self.slot(p), self.slot(guard)) else {
            return false;
        };
        let p = self.real(p);
        if self.depth[p] > self.depth[g] {
            return false;
        }
        // Ancestors of a live entry are live (revocation takes whole
        // subtrees), so once at `p`'s depth the index alone decides.
        for _ in self.depth[p]..self.depth[g] {
            g = self.parent[g] as usize;
            debug_assert!(self.in_use[g], "an ancestor of a live capability is dead");
        }
        g == p
    }

    /// The kernel's access check: `p` dominates `guard` and carries every
    /// right in `need`.
    pub fn check(&self, p: CapRef, guard: CapRef, need: Rights) -> Result<(), Error> {
        match self.rights(p) {
            Some(r) if r.contains(need) && self.dominates(p, guard) => Ok(()),
            _ => Err(Error::NotPermitted),
        }
    }

    /// Number of live capabilities.
    pub fn live(&self) -> usize {
        self.live as usize
    }

    /// The entry `c` names, if it is live and of the same generation.
    fn slot(&self, c: CapRef) -> Option<usize> {
        let i = c.index as usize;
        (i != 0 && i < CAPS && self.in_use[i] && self.generation[i] == c.generation).then_some(i)
    }

    fn alloc(&mut self, parent: u16, rights: Rights, depth: u8) -> Result<CapRef, Error> {
        let i = if self.free_head != NIL {
            let i = self.free_head as usize;
            self.free_head = self.next_sibling[i];
            i
        } else if (self.fresh as usize) < CAPS {
            self.fresh += 1;
            self.fresh as usize - 1
        } else {
            return Err(Error::NoMemory);
        };
        self.in_use[i] = true;
        self.loan[i] = false;
        self.rights[i] = rights;
        self.depth[i] = depth;
        self.first_child[i] = NIL;
        self.link(i, parent);
        self.live += 1;
        Ok(CapRef { index: i as u32, generation: self.generation[i] })
    }

    /// Makes entry `i` a child of `parent`, first in its list (a root,
    /// `NIL`, is in no list).
    fn link(&mut self, i: usize, parent: u16) {
        self.parent[i] = parent;
        self.prev_sibling[i] = NIL;
        self.next_sibling[i] = NIL;
        if parent != NIL {
            let head = self.first_child[parent as usize];
            self.next_sibling[i] = head;
            if head != NIL {
                self.prev_sibling[head as usize] = i as u16;
            }
            self.first_child[parent as usize] = i as u16;
        }
    }

    /// Removes entry `i` from its parent's child list.
    fn unlink(&mut self, i: usize) {
        let (prev, next) = (self.prev_sibling[i], self.next_sibling[i]);
        if prev != NIL {
            self.next_sibling[prev as usize] = next;
        } else if self.parent[i] != NIL {
            self.first_child[self.parent[i] as usize] = next;
        }
        if next != NIL {
            self.prev_sibling[next as usize] = prev;
        }
    }

    /// Frees an unlinked, childless entry.
    fn release(&mut self, i: usize) {
        debug_assert!(self.in_use[i] && self.first_child[i] == NIL, "released a dead or parent entry");
        self.in_use[i] = false;
        self.rights[i] = Rights::NONE;
        self.parent[i] = NIL;
        self.prev_sibling[i] = NIL;
        self.live -= 1;
        // An entry whose generation would wrap is retired for good rather
        // than risk a very old reference matching again.
        if self.generation[i] == u32::MAX {
            self.next_sibling[i] = NIL;
            return;
        }
        self.generation[i] += 1;
        self.next_sibling[i] = self.free_head;
        self.free_head = i as u16;
    }
}

/// The kernel's capability table: a static rather than a field built on
/// the boot stack (it is 128 KiB), taken once by the kernel state.
pub static TABLE: cell::Once<Caps> = cell::Once::new(Caps::new());

/// Slots in one environment's capability list.
pub const CLIST_SLOTS: usize = 64;

/// An environment's capability list: system calls name a capability by its
/// slot here. Slots hold plain references; whether one is still live is
/// decided by `Caps` when it is used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CList {
    slots: [CapRef; CLIST_SLOTS],
}

impl Default for CList {
    fn default() -> Self {
        Self::EMPTY
    }
}

impl CList {
    pub const EMPTY: CList = CList { slots: [CapRef::NONE; CLIST_SLOTS] };

    /// The reference in `slot` (possibly stale: `Caps` checks on use).
    pub fn get(&self, slot: u64) -> Result<CapRef, Error> {
        let c = self.slots[Self::index(slot)?];
        if c.is_none() {
            return Err(INVALID);
        }
        Ok(c)
    }

    /// Stores live `c` in the first slot that is empty or holds a stale
    /// reference (revocation never has to visit every list).
    pub fn insert(&mut self, caps: &Caps, c: CapRef) -> Result<u64, Error> {
        if !caps.valid(c) {
            return Err(INVALID);
        }
        let s = self.slots.iter().position(|s| !caps.valid(*s)).ok_or(Error::NoMemory)?;
        self.slots[s] = c;
        Ok(s as u64)
    }

    /// Every reference held (possibly stale).
    pub fn refs(&self) -> impl Iterator<Item = CapRef> + '_ {
        self.slots.iter().copied().filter(|c| !c.is_none())
    }

    /// Overwrites `slot` (NONE empties it).
    pub fn set(&mut self, slot: u64, c: CapRef) -> Result<(), Error> {
        self.slots[Self::index(slot)?] = c;
        Ok(())
    }

    /// Empties `slot`, returning what it held.
    pub fn clear(&mut self, slot: u64) -> Result<CapRef, Error> {
        let c = self.get(slot)?;
        self.slots[slot as usize] = CapRef::NONE;
        Ok(c)
    }

    fn index(slot: u64) -> Result<usize, Error> {
        usize::try_from(slot).ok().filter(|&s| s < CLIST_SLOTS).ok_or(Error::BadLength)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    const READ: Rights = Rights::READ;
    const WRITE: Rights = Rights::WRITE;
    const GRANT: Rights = Rights::GRANT;
    const ALL: Rights = Rights::ALL;
    use std::boxed::Box;
    use std::vec::Vec;

    fn caps() -> Box<Caps> {
        Box::new(Caps::new())
    }

    #[test]
    fn capref_pack_and_none() {
        let c = CapRef { index: 17, generation: 0xdead_beef };
        assert_eq!(CapRef::unpack(c.pack()), c);
        assert_eq!(CapRef::unpack(0), CapRef::NONE);
        assert!(CapRef::NONE.is_none() && CapRef::default().is_none() && !c.is_none());
    }

    #[test]
    fn rights_never_widen() {
        let mut t = caps();
        let r = t.create_root(READ | GRANT).unwrap();
        assert_eq!(t.derive(r, READ | WRITE), Err(Error::NotPermitted));
        assert_eq!(Rights::from_bits(8), Err(Error::BadFlags));
        assert_eq!(Rights::from_bits(7 | 16), Err(Error::BadFlags));
        assert_eq!(Rights::from_bits(7), Ok(ALL));
        let ro = t.derive(r, READ).unwrap();
        assert_eq!(t.rights(ro), Some(READ));
        // Without GRANT nothing can be derived, not even a weaker capability.
        assert_eq!(t.derive(ro, READ), Err(Error::NotPermitted));
        assert_eq!(t.derive(ro, Rights::NONE), Err(Error::NotPermitted));
        let g = t.derive(r, GRANT).unwrap();
        assert_eq!(t.derive(g, READ), Err(Error::NotPermitted));
        assert!(t.derive(g, Rights::NONE).is_ok());
        assert_eq!(t.live(), 4);
    }

    #[test]
    fn revoke_takes_exactly_the_subtree() {
        let mut t = caps();
        let r = t.create_root(ALL).unwrap();
        let a = t.derive(r, ALL).unwrap();
        let a1 = t.derive(a, READ).unwrap();
        let a2 = t.derive(a, ALL).unwrap();
        let a21 = t.derive(a2, WRITE).unwrap();
        let a3 = t.derive(a, ALL).unwrap();
        let b = t.derive(r, ALL).unwrap();
        let b1 = t.derive(b, ALL).unwrap();
        let other = t.create_root(ALL).unwrap();
        assert_eq!(t.revoke(a2), Ok(2));
        assert!(t.valid(a1) && t.valid(a3) && t.valid(a));
        assert_eq!(t.revoke(a), Ok(3));
        for c in [a, a1, a2, a21, a3] {
            assert!(!t.valid(c));
            assert_eq!(t.rights(c), None);
        }
        for c in [r, b, b1, other] {
            assert!(t.valid(c));
        }
        assert!(t.dominates(r, b1));
        assert_eq!(t.live(), 4);
        assert_eq!(t.revoke(r), Ok(3));
        assert_eq!(t.revoke(other), Ok(1));
        assert_eq!(t.live(), 0);
    }

    #[test]
    fn move_under_an_ancestor_outlives_the_old_parent() {
        let mut t = caps();
        let r = t.create_root(ALL).unwrap();
        let a = t.derive(r, ALL).unwrap();
        let b = t.derive(a, ALL).unwrap();
        let c = t.derive(b, ALL).unwrap();
        let c1 = t.derive(c, ALL).unwrap();
        let c11 = t.derive(c1, READ).unwrap();
        let c2 = t.derive(c, READ).unwrap();
        let other = t.derive(r, ALL).unwrap();
        let loan = t.lend(a).unwrap();
        // Only under one that dominates it already, never a loan or itself.
        assert_eq!(t.move_under(c, other), Err(Error::NotPermitted));
        assert_eq!(t.move_under(c, c1), Err(Error::NotPermitted));
        assert_eq!(t.move_under(c, c), Err(Error::NotPermitted));
        assert_eq!(t.move_under(c, loan), Err(Error::NotPermitted));
        let before = t.clone();
        assert_eq!(t.move_under(c, r), Ok(()));
        assert!(t.dominates(r, c11) && t.dominates(c, c11) && t.dominates(c1, c11) && t.dominates(r, c2));
        assert!(!t.dominates(b, c) && !t.dominates(a, c1) && !t.dominates(loan, c2));
        assert_eq!((t.depth[c.index as usize], t.depth[c11.index as usize]), (1, 3));
        // The old parent goes; the moved subtree stays, whole.
        assert_eq!(t.revoke(a), Ok(3));
        for x in [c, c1, c11, c2] {
            assert!(t.valid(x));
        }
        assert_eq!(t.revoke(r), Ok(6));
        assert_eq!(t.live(), 0);
        // A refused move changed nothing.
        let mut u = before.clone();
        assert_eq!(u.move_under(c1, other), Err(Error::NotPermitted));
        assert!(u == before);
    }

    #[test]
    fn stale_refs_stay_stale_after_reuse() {
        let mut t = caps();
        let r = t.create_root(ALL).unwrap();
        let c = t.derive(r, ALL).unwrap();
        t.revoke(c).unwrap();
        let reused = t.derive(r, ALL).unwrap();
        assert_eq!(reused.index, c.index);
        assert_ne!(reused.generation, c.generation);
        assert!(!t.valid(c) && t.valid(reused));
        assert!(!t.dominates(c, reused) && !t.dominates(c, c));
        assert!(!t.dominates(r, c));
        let before = t.clone();
        assert_eq!(t.derive(c, READ), Err(Error::NotPermitted));
        assert_eq!(t.revoke(c), Err(Error::NotPermitted));
        assert!(t == before);
        assert!(t.valid(reused));
    }

    #[test]
    fn none_and_bogus_refs_fail_and_change_nothing() {
        let mut t = caps();
        let r = t.create_root(ALL).unwrap();
        let before = t.clone();
        let bogus = [
            CapRef::NONE,
            CapRef { index: 0, generation: r.generation },
            CapRef { index: CAPS as u32, generation: 0 },
            CapRef { index: u32::MAX, generation: 0 },
            CapRef { index: r.index + 1, generation: 0 },
        ];
        for c in bogus {
            assert!(!t.valid(c));
            assert_eq!(t.rights(c), None);
            assert_eq!(t.derive(c, Rights::NONE), Err(Error::NotPermitted));
            assert_eq!(t.revoke(c), Err(Error::NotPermitted));
            assert!(!t.dominates(c, r) && !t.dominates(r, c) && !t.dominates(c, c));
        }
        assert!(t == before);
    }

    #[test]
    fn dominance_follows_derivation_only() {
        let mut t = caps();
        let r = t.create_root(ALL).unwrap();
        let a = t.derive(r, ALL).unwrap();
        let b = t.derive(r, ALL).unwrap();
        let aa = t.derive(a, ALL).unwrap();
        let q = t.create_root(ALL).unwrap();
        for c in [r, a, b, aa, q] {
            assert!(t.dominates(c, c));
        }
        assert!(t.dominates(r, a) && t.dominates(r, aa) && t.dominates(a, aa));
        assert!(!t.dominates(a, r) && !t.dominates(aa, a) && !t.dominates(aa, r));
        assert!(!t.dominates(a, b) && !t.dominates(b, a) && !t.dominates(b, aa));
        assert!(!t.dominates(q, r) && !t.dominates(r, q) && !t.dominates(q, aa));
    }

    #[test]
    fn depth_limit() {
        let mut t = caps();
        let root = t.create_root(ALL).unwrap();
        let mut c = root;
        for _ in 1..MAX_DEPTH {
            c = t.derive(c, ALL).unwrap();
        }
        assert_eq!(t.derive(c, ALL), Err(Error::NoMemory));
        assert_eq!(t.live(), MAX_DEPTH as usize);
        assert!(t.dominates(root, c) && !t.dominates(c, root));
        assert_eq!(t.revoke(root), Ok(MAX_DEPTH));
        assert_eq!(t.live(), 0);
    }

    #[test]
    fn table_full_then_reuse_without_leaks() {
        let mut t = caps();
        let root = t.create_root(ALL).unwrap();
        // A wide fan under the root and deep chains beside it.
        let mut kids = Vec::new();
        while kids.len() < CAPS - 3 - 3 * (MAX_DEPTH as usize - 2) {
            kids.push(t.derive(root, ALL).unwrap());
        }
        for k in &kids[..3] {
            let mut c = *k;
            for _ in 2..MAX_DEPTH {
                c = t.derive(c, ALL).unwrap();
            }
        }
        let last = t.create_root(READ).unwrap();
        assert_eq!(t.live(), CAPS - 1);
        assert_eq!(t.create_root(ALL), Err(Error::NoMemory));
        assert_eq!(t.derive(root, ALL), Err(Error::NoMemory));
        assert_eq!(t.revoke(last), Ok(1));
        let again = t.create_root(ALL).unwrap();
        assert_eq!(again.index, last.index);
        assert_eq!(t.revoke(root), Ok(CAPS as u32 - 2));
        assert_eq!(t.revoke(again), Ok(1));
        assert_eq!(t.live(), 0);
        // Every entry came back to the free list.
        for _ in 1..CAPS {
            t.create_root(Rights::NONE).unwrap();
        }
        assert_eq!(t.create_root(Rights::NONE), Err(Error::NoMemory));
    }

    #[test]
    fn exhausted_generation_retires_the_entry() {
        let mut t = caps();
        let c = t.create_root(ALL).unwrap();
        t.revoke(c).unwrap();
        let d = t.create_root(ALL).unwrap();
        assert_eq!(d.index, c.index);
        t.generation[d.index as usize] = u32::MAX;
        let d = CapRef { index: d.index, generation: u32::MAX };
        assert!(t.valid(d));
        t.revoke(d).unwrap();
        let e = t.create_root(ALL).unwrap();
        assert_ne!(e.index, d.index);
        assert!(!t.valid(d) && !t.valid(CapRef { index: d.index, generation: 0 }));
    }

    #[test]
    fn clist_slots() {
        let mut t = caps();
        let mut l = CList::EMPTY;
        let r = t.create_root(ALL).unwrap();
        assert_eq!(l.get(0), Err(Error::NotPermitted));
        assert_eq!(l.get(CLIST_SLOTS as u64), Err(Error::BadLength));
        assert_eq!(l.get(u64::MAX), Err(Error::BadLength));
        assert_eq!(l.insert(&t, CapRef::NONE), Err(Error::NotPermitted));
        assert_eq!(l.insert(&t, r), Ok(0));
        let c = t.derive(r, READ).unwrap();
        assert_eq!(l.insert(&t, c), Ok(1));
        assert_eq!(l.get(1), Ok(c));
        // A revoked reference's slot is free for the next insert.
        t.revoke(c).unwrap();
        assert_eq!(l.get(1), Ok(c));
        assert_eq!(l.insert(&t, r), Ok(1));
        assert_eq!(l.clear(1), Ok(r));
        assert_eq!(l.clear(1), Err(Error::NotPermitted));
        assert_eq!(l.set(CLIST_SLOTS as u64, r), Err(Error::BadLength));
        assert_eq!(l.set(5, r), Ok(()));
        assert_eq!(l.get(5), Ok(r));
        l.set(5, CapRef::NONE).unwrap();
        assert_eq!(l.get(5), Err(Error::NotPermitted));
        for i in 1..CLIST_SLOTS as u64 {
            assert_eq!(l.insert(&t, r), Ok(i));
        }
        assert_eq!(l.insert(&t, r), Err(Error::NoMemory));
    }

    /// Paper 000 §3.3: a lent capability is derived from the lender's, so
    /// the borrower cannot revoke the lender's, and the lender can revoke
    /// the loan.
    #[test]
    fn loans_form_a_hierarchy() {
        let mut t = caps();
        let root = t.create_root(ALL).unwrap();
        let c = t.derive(root, READ | GRANT).unwrap();
        let below = t.derive(c, READ).unwrap();
        let l1 = t.lend(c).unwrap();
        assert!(t.is_loan(l1) && !t.is_loan(c));
        assert_eq!(t.rights(l1), Some(READ | GRANT));
        // A loan carries the lender's authority.
        assert_eq!(t.check(l1, c, READ), Ok(()));
        assert_eq!(t.check(l1, below, READ), Ok(()));
        assert_eq!(t.lent_from(l1), Some(c));
        assert!(!t.dominates(l1, root));
        // Lending a loan lends what it stands for: no chains.
        let l2 = t.lend(l1).unwrap();
        assert_eq!(t.lent_from(l2), Some(c));
        // The borrower revoking its loan leaves the lender's and the others.
        assert_eq!(t.revoke(l1), Ok(1));
        assert!(t.valid(c) && t.valid(below) && t.valid(l2));
        assert_eq!(t.check(l2, below, READ), Ok(()));
        // What a borrower derives from its loan is below the loan.
        let d = t.derive(l2, READ).unwrap();
        assert!(t.dominates(c, d) && t.dominates(l2, d) && !t.dominates(d, c));
        // The lender's revocation ends every loan.
        assert_eq!(t.revoke(c), Ok(4));
        assert!(!t.valid(l2) && !t.valid(d) && !t.valid(below));
        // No grant right, no loan.
        let ro = t.derive(root, READ).unwrap();
        assert_eq!(t.lend(ro), Err(Error::NotPermitted));
        assert_eq!(t.lend(CapRef::NONE), Err(Error::NotPermitted));
    }

    /// Paper 000 §3.3: a buggy child presenting the wrong capability is
    /// denied; a granted credential dies with its revocation.
    #[test]
    fn paper_scenario() {
        let mut t = caps();
        let (mut owner, mut friend, mut child) = (CList::EMPTY, CList::EMPTY, CList::EMPTY);
        let root = t.create_root(ALL).unwrap();
        owner.insert(&t, root).unwrap();
        // The owner mints a read-only credential that guards the page, and
        // a separate one for another object.
        let page = t.derive(root, READ).unwrap();
        let other = t.derive(root, ALL).unwrap();
        // Grant: a copy of the reference in the second party's list.
        let s = friend.insert(&t, page).unwrap();
        let held = friend.get(s).unwrap();
        assert_eq!(t.check(held, page, READ), Ok(()));
        assert_eq!(t.check(held, page, WRITE), Err(Error::NotPermitted));
        assert_eq!(t.check(root, page, WRITE), Ok(()));
        // The buggy child holds its own root and the other object's
        // capability; neither opens the page.
        let stray = t.create_root(ALL).unwrap();
        child.insert(&t, stray).unwrap();
        child.insert(&t, other).unwrap();
        for slot in 0..2 {
            let c = child.get(slot).unwrap();
            assert!(!t.dominates(c, page));
            assert_eq!(t.check(c, page, READ), Err(Error::NotPermitted));
        }
        // Revocation: the friend's copy is dead, and stays dead when the
        // owner re-guards the page with an entry that reuses the index.
        assert_eq!(t.revoke(page), Ok(1));
        let page2 = t.derive(root, READ).unwrap();
        assert_eq!(page2.index, page.index);
        let held = friend.get(s).unwrap();
        assert!(!t.dominates(held, page2) && !t.dominates(held, page));
        assert_eq!(t.check(held, page2, READ), Err(Error::NotPermitted));
        assert_eq!(t.check(owner.get(0).unwrap(), page2, READ), Ok(()));
    }

    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    /// Reference model: every capability ever made, with its parent.
    struct Node {
        r: CapRef,
        parent: Option<usize>,
        rights: Rights,
        depth: u32,
        live: bool,
    }

    fn ancestor_or_self(m: &[Node], a: usize, mut b: usize) -> bool {
        loop {
            if a == b {
                return true;
            }
            match m[b].parent {
                Some(p) => b = p,
                None => return false,
            }
        }
    }

    #[test]
    fn randomized_against_model() {
        let mut t = caps();
        let mut m: Vec<Node> = Vec::new();
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        // How often each derive outcome and multi-entry revocation happened.
        let (mut outcomes, mut subtrees) = ([0u32; 4], 0);
        for _ in 0..4000 {
            let live = m.iter().filter(|n| n.live).count();
            match rng.below(10) {
                0 => {
                    let rights = Rights::from_bits(rng.below(8) as u64).unwrap();
                    let r = t.create_root(rights).unwrap();
                    m.push(Node { r, parent: None, rights, depth: 0, live: true });
                }
                1..=5 if !m.is_empty() => {
                    // Often extend the deepest one that can grant, to build
                    // chains that reach the depth limit.
                    let deepest = (0..m.len())
                        .filter(|&i| m[i].live && m[i].rights.contains(GRANT))
                        .max_by_key(|&i| m[i].depth);
                    let p = match (rng.below(3), deepest) {
                        (0, Some(d)) => d,
                        (1, _) => m.len() - 1,
                        _ => rng.below(m.len()),
                    };
                    let bits = match rng.below(8) {
                        0 => rng.below(16) as u64,
                        _ => m[p].rights.0 as u64 & (rng.below(8) as u64 | GRANT.0 as u64),
                    };
                    // Unknown bits are refused before the capability is
                    // looked at.
                    let rights = match Rights::from_bits(bits) {
                        Ok(r) => r,
                        Err(e) => {
                            assert!(bits > 7);
                            assert_eq!(e, Error::BadFlags);
                            outcomes[2] += 1;
                            continue;
                        }
                    };
                    let pn = &m[p];
                    let want = if !pn.live || !pn.rights.contains(GRANT) || !pn.rights.contains(rights) {
                        Err(Error::NotPermitted)
                    } else if pn.depth + 1 >= MAX_DEPTH {
                        Err(Error::NoMemory)
                    } else {
                        Ok(())
                    };
                    let depth = pn.depth + 1;
                    let got = t.derive(m[p].r, rights);
                    assert_eq!(got.map(|_| ()), want);
                    outcomes[match want {
                        Ok(()) => 0,
                        Err(Error::NotPermitted) => 1,
                        Err(Error::BadFlags) => 2,
                        Err(_) => 3,
                    }] += 1;
                    if let Ok(r) = got {
                        m.push(Node { r, parent: Some(p), rights, depth, live: true });
                    }
                }
                6..=9 if !m.is_empty() && (live > 300 || rng.below(3) == 0) => {
                    let c = rng.below(m.len());
                    let got = t.revoke(m[c].r);
                    if m[c].live {
                        let mut n = 0;
                        for i in 0..m.len() {
                            if m[i].live && ancestor_or_self(&m, c, i) {
                                m[i].live = false;
                                n += 1;
                            }
                        }
                        assert_eq!(got, Ok(n));
                        subtrees += (n > 1) as u32;
                    } else {
                        assert_eq!(got, Err(Error::NotPermitted));
                    }
                }
                _ => {}
            }
            assert_eq!(t.live(), m.iter().filter(|n| n.live).count());
            for n in &m {
                assert_eq!(t.valid(n.r), n.live);
                assert_eq!(t.rights(n.r), n.live.then_some(n.rights));
            }
            if m.is_empty() {
                continue;
            }
            for _ in 0..16 {
                let g = rng.below(m.len());
                // Half the time test an actual ancestor, so `true` is common.
                let mut p = rng.below(m.len());
                if rng.below(2) == 0 {
                    p = g;
                    for _ in 0..rng.below(4) {
                        p = m[p].parent.unwrap_or(p);
                    }
                }
                let want = m[p].live && m[g].live && ancestor_or_self(&m, p, g);
                assert_eq!(t.dominates(m[p].r, m[g].r), want);
            }
        }
        assert!(outcomes.iter().all(|&n| n >= 20) && subtrees >= 20);
        for n in m.iter().filter(|n| n.parent.is_none() && n.live) {
            t.revoke(n.r).unwrap();
        }
        assert_eq!(t.live(), 0);
        assert!(m.iter().all(|n| !t.valid(n.r)));
    }
}
