//! Who runs in a slice: hierarchical slices (paper 001 §4.2.1's slice
//! vector, divided as paper 003 §4 divides a processor among nested
//! schedulers). An environment that owns slices is a *holder*; every
//! environment runs in the slices of its nearest ancestor-or-self that is
//! one. So a slice covers its owner's subtree, less the subtrees of
//! descendants that own slices of their own, and the members of that
//! group take turns in it: a process's threads (children of its first
//! environment) share the process's slices without taking any, and a
//! program that makes a thousand of them takes nothing from another
//! holder. Environments with no holder above them (the first one gave
//! its slices away) form one more ring, run in time no group can use.
//!
//! Each group is a ring of its live members (runnable or not: a sleeper
//! is looked at when its turn comes, as an owner's predicate is when its
//! slice does) with a cursor, the member the group's next slice looks at
//! first. The rings live here, beside the environment table, one entry
//! per slot; a holder whose ring has others in it carries
//! `notify::GROUP`, which sends its slices off the scheduler's fast path
//! (the fast path tests that byte already, so a lone owner's `yield`
//! costs what it did).

use crate::env::{notify, Envs, Slot};
use abi::tables::ENV_SLOTS;

/// No slot: no holder, not in a ring, an empty ring's cursor.
const NONE: u16 = u16::MAX;

/// Every group's ring, by slot.
pub struct Groups {
    /// The slot whose slices each member runs in (`NONE`: the ring of
    /// environments without a holder).
    holder: [u16; ENV_SLOTS],
    /// The ring: the next and previous member (`NONE`: in no ring).
    next: [u16; ENV_SLOTS],
    prev: [u16; ENV_SLOTS],
    /// For a holder: the member its next slice looks at first.
    first: [u16; ENV_SLOTS],
    /// The same for the ring of environments without a holder.
    spare_first: u16,
}

/// The rings, a static like the environment table (too big for the boot
/// stack), which the kernel state takes once at boot.
#[cfg(target_os = "none")]
pub static GROUPS: cell::Once<Groups> = cell::Once::new(Groups::EMPTY);

fn slot(raw: u16) -> Option<Slot> {
    Slot::new(raw as usize)
}

fn raw(s: Option<Slot>) -> u16 {
    s.map_or(NONE, |s| s.index() as u16)
}

impl Groups {
    pub const EMPTY: Groups = Groups {
        holder: [NONE; ENV_SLOTS],
        next: [NONE; ENV_SLOTS],
        prev: [NONE; ENV_SLOTS],
        first: [NONE; ENV_SLOTS],
        spare_first: NONE,
    };

    /// The holder whose slices slot `s` runs in, if it is in a ring.
    pub fn holder(&self, s: Slot) -> Option<Slot> {
        slot(self.holder[s.index()])
    }

    /// Whether slot `s` is in a ring (live, not exited).
    pub fn is_member(&self, s: Slot) -> bool {
        self.next[s.index()] != NONE
    }

    /// The member after `s` in its ring.
    pub fn next(&self, s: Slot) -> Slot {
        slot(self.next[s.index()]).unwrap_or(s)
    }

    /// The member group `h`'s next slice looks at first (`None`: the group
    /// is empty; `h` `None`: the ring without a holder).
    pub fn first(&self, h: Option<Slot>) -> Option<Slot> {
        slot(match h {
            Some(h) => self.first[h.index()],
            None => self.spare_first,
        })
    }

    /// Group `h`'s next slice looks at member `s` first.
    pub fn set_first(&mut self, h: Option<Slot>, s: Slot) {
        match h {
            Some(h) => self.first[h.index()] = s.index() as u16,
            None => self.spare_first = s.index() as u16,
        }
    }

    /// Slot `s` (new, or moved) joins the group it belongs to: its own if
    /// it holds slices, else its parent's. It goes last in the turn.
    pub fn join(&mut self, envs: &mut Envs, s: Slot) {
        debug_assert!(!self.is_member(s));
        let h = if envs[s].slices > 0 {
            Some(s)
        } else {
            envs[s].parent().map(|p| p.slot()).filter(|&p| self.is_member(p)).and_then(|p| self.holder(p))
        };
        let i = s.index();
        self.holder[i] = raw(h);
        match self.first(h) {
            None => {
                (self.next[i], self.prev[i]) = (i as u16, i as u16);
                self.set_first(h, s);
            }
            Some(f) => {
                // Just before the cursor: last in this round.
                let before = self.prev[f.index()];
                (self.next[i], self.prev[i]) = (f.index() as u16, before);
                self.next[before as usize] = i as u16;
                self.prev[f.index()] = i as u16;
            }
        }
        self.mark(envs, h);
    }

    /// Slot `s` leaves its ring (it ended, or is about to move).
    pub fn leave(&mut self, envs: &mut Envs, s: Slot) {
        if !self.is_member(s) {
            return;
        }
        let i = s.index();
        let h = self.holder(s);
        let (n, p) = (self.next[i], self.prev[i]);
        if self.first(h) == Some(s) {
            match h {
                Some(h) => self.first[h.index()] = if n as usize == i { NONE } else { n },
                None => self.spare_first = if n as usize == i { NONE } else { n },
            }
        }
        self.next[p as usize] = n;
        self.prev[n as usize] = p;
        (self.next[i], self.prev[i], self.holder[i]) = (NONE, NONE, NONE);
        self.mark(envs, h);
    }

    /// Slot `top`'s subtree joins the groups it belongs to now (`top`
    /// began or ceased to hold slices, or moved to another parent).
    /// Pre-order, so a parent's holder is settled before its children's.
    pub fn regroup(&mut self, envs: &mut Envs, top: Slot) {
        let mut at = Some(top);
        while let Some(s) = at {
            if self.is_member(s) {
                self.leave(envs, s);
                self.join(envs, s);
            }
            at = envs.next_in_subtree(top, s);
        }
    }

    /// Sets or clears `notify::GROUP` on holder `h`: set while its ring
    /// holds anyone but itself.
    fn mark(&self, envs: &mut Envs, h: Option<Slot>) {
        let Some(h) = h else { return };
        let i = h.index();
        let alone = self.first[i] == NONE || (self.next[i] as usize == i && self.holder[i] as usize == i);
        let e = &mut envs[h];
        e.notify = if alone { e.notify & !notify::GROUP } else { e.notify | notify::GROUP };
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::env::fixture::{child, envs, frames};
    use std::boxed::Box;
    use std::vec::Vec;

    fn groups() -> Box<Groups> {
        Box::new(Groups::EMPTY)
    }

    /// The ring of group `h`, from its cursor.
    fn ring(g: &Groups, h: Option<Slot>) -> Vec<Slot> {
        let Some(f) = g.first(h) else { return Vec::new() };
        let mut v = std::vec![f];
        let mut s = g.next(f);
        while s != f {
            v.push(s);
            s = g.next(s);
        }
        v
    }

    #[test]
    fn members_join_their_nearest_holders_ring_and_leave_it() {
        let (mut e, fr, mut g) = (envs(), frames(), groups());
        let root = child(&mut e, &fr, None);
        e[root].slices = 1;
        g.join(&mut e, root);
        assert_eq!(ring(&g, Some(root)), [root]);
        assert_eq!(e[root].notify & notify::GROUP, 0, "alone: the fast path stays");
        let a = child(&mut e, &fr, Some(root));
        g.join(&mut e, a);
        let t = child(&mut e, &fr, Some(a));
        g.join(&mut e, t);
        assert_eq!(ring(&g, Some(root)), [root, a, t], "a grandchild runs in the holder's slices");
        assert_eq!(g.holder(t), Some(root));
        assert_ne!(e[root].notify & notify::GROUP, 0, "others: the general path");
        g.leave(&mut e, a);
        g.leave(&mut e, a);
        assert_eq!(ring(&g, Some(root)), [root, t], "leaving twice is leaving once");
        g.leave(&mut e, t);
        assert_eq!(e[root].notify & notify::GROUP, 0);
        g.leave(&mut e, root);
        assert_eq!(g.first(Some(root)), None);
    }

    #[test]
    fn a_new_holder_takes_its_subtree_and_gives_it_back() {
        let (mut e, fr, mut g) = (envs(), frames(), groups());
        let root = child(&mut e, &fr, None);
        e[root].slices = 1;
        g.join(&mut e, root);
        let p = child(&mut e, &fr, Some(root));
        g.join(&mut e, p);
        let threads: Vec<Slot> = (0..3)
            .map(|_| {
                let t = child(&mut e, &fr, Some(p));
                g.join(&mut e, t);
                t
            })
            .collect();
        let q = child(&mut e, &fr, Some(p));
        e[q].slices = 2;
        g.join(&mut e, q);
        let qt = child(&mut e, &fr, Some(q));
        g.join(&mut e, qt);
        assert_eq!(ring(&g, Some(q)), [q, qt], "a holder below keeps its own");
        // p takes a slice: it and its threads leave the root's ring, q's
        // subtree stays q's.
        e[p].slices = 1;
        g.regroup(&mut e, p);
        assert_eq!(ring(&g, Some(root)), [root]);
        let mut mine = ring(&g, Some(p));
        mine.sort_by_key(|s| s.index());
        assert_eq!(mine, [p, threads[0], threads[1], threads[2]]);
        assert_eq!(ring(&g, Some(q)), [q, qt]);
        // And gives it back.
        e[p].slices = 0;
        g.regroup(&mut e, p);
        assert_eq!(ring(&g, Some(p)), []);
        assert_eq!(ring(&g, Some(root)).len(), 5);
        assert_eq!(e[p].notify & notify::GROUP, 0);
    }

    #[test]
    fn without_a_holder_the_spare_ring() {
        let (mut e, fr, mut g) = (envs(), frames(), groups());
        let root = child(&mut e, &fr, None);
        g.join(&mut e, root);
        let a = child(&mut e, &fr, Some(root));
        g.join(&mut e, a);
        assert_eq!(ring(&g, None), [root, a]);
        assert_eq!(g.holder(a), None);
        g.set_first(None, a);
        assert_eq!(ring(&g, None), [a, root], "the cursor moves");
        g.leave(&mut e, a);
        assert_eq!(ring(&g, None), [root], "the cursor leaves with its member");
    }
}
