//! Frame ranges: a capability that names a set of frames and nothing else,
//! which its holders can hand to any process (issue 25; paper 000 §3.3,
//! hierarchically-named capabilities and protected sharing).
//!
//! A range is made over frames its maker owns (`FRAME_RANGE`'s `MAKE`):
//! the kernel makes a capability root of its own (under no environment,
//! so it outlives the maker, as frames given away with `frame_disown` do)
//! and makes it the share guard of each frame. A holder of the root, or
//! of a loan of it, may map those frames (`MAP`, or `map` frame by frame)
//! with the loan's rights, and no other frame: the root dominates no other
//! guard.
//!
//! Loans are had by presenting the range's *ticket* (`CLAIM`): its index
//! here and a 47-bit key the kernel chose at `MAKE` (`keys.rs`: the CPU's
//! generator, or a ChaCha20 stream; nothing a process sees of its own
//! keys tells another's). A library keeps the ticket where only the
//! range's users read it (a pipe's header, in the pipe's own frames) and
//! puts it in the message that passes the object:
//! whoever the message reaches claims a loan, maps, and drops the loan.
//! The key is the secret; a wrong one is refused like a stale capability.
//! It is not the only check: a range has a rule, an owner uid and gid and
//! a file's read and write bits, which `CLAIM` judges against the caller's
//! identity as the kernel holds it (`ident.rs`), so a ticket read where
//! others can read it (a FIFO's, kept with its name) opens the range to no
//! one the rule refuses. Only while a message holds the range (it travels
//! to whoever Linux lets receive it) does the ticket alone suffice, and
//! only a process mapping the range may hold it.
//!
//! The frames live as long as they are mapped, as any frame does, and
//! while the range is *held*: a library holds it for each message that
//! carries the ticket (`HOLD`, one more count on each frame), and the
//! receiver lets go (`UNHOLD`) once it has mapped them, so an object in
//! flight, mapped by no one, keeps its frames. `DROP` ends a range at
//! once (its root and every loan revoked). Only a holder (a process
//! mapping the range's first frame) holds, lets go of or ends a range, so
//! a ticket read in the arena gives none of these. A range none of whose
//! frames lives any more (each freed, or reused: a frame's guard is reset
//! when it is allocated again) is swept when the table is full. Each
//! user's live ranges are counted as they come and go (`charges.rs`).

use crate::cap::{CapRef, Caps, Rights};
use crate::charges::Charges;
use crate::frames::Frame;
use crate::keys::Keys;
use abi::ident::Ident;
use abi::syscall::frame_range::{KEY_SHIFT, MODE_BITS, RANGE_FRAMES};
use abi::Error;

/// Ranges the kernel holds at once.
pub const RANGES: usize = 1024;

/// Live ranges one user other than root may be charged with: a quarter of
/// the table, so one user's pipes cannot take everyone's.
pub const PER_USER: usize = RANGES / 4;

const _: () = assert!(RANGES <= 1 << KEY_SHIFT);
const _: () = assert!(crate::charges::SLOTS >= RANGES, "a count for every user of a live range");

/// Who may claim a range unheld: an owner, a group and a file's
/// `rw-rw-rw-` bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rule {
    pub uid: u32,
    pub gid: u32,
    pub mode: u32,
}

impl Rule {
    pub const NONE: Rule = Rule { uid: 0, gid: 0, mode: 0 };

    /// The rule `MAKE`'s caller `maker` asks for (`owner`, `mode`):
    /// `BadFlags` for bits beyond `MODE_BITS`, `NotPermitted` for an owner
    /// it may not give (only root names another uid or a group it is not
    /// in, as `chown`).
    pub fn asked(maker: &Ident, owner: u64, mode: u64) -> Result<Rule, Error> {
        if mode & !MODE_BITS != 0 {
            return Err(Error::BadFlags);
        }
        let me = abi::ident::EFFECTIVE;
        let (uid, gid) = match owner {
            abi::syscall::frame_range::OWNER_SELF => (maker.uid[me], maker.gid[me]),
            o => (o as u32, (o >> 32) as u32),
        };
        let in_group = maker.gid[me] == gid || maker.groups().contains(&gid);
        if maker.uid[me] != 0 && (uid != maker.uid[me] || !in_group) {
            return Err(Error::NotPermitted);
        }
        Ok(Rule { uid, gid, mode: mode as u32 })
    }

    /// Does the rule let `who` have `rights`?
    pub fn admits(&self, who: &Ident, rights: Rights) -> bool {
        who.may_access(
            self.uid,
            self.gid,
            self.mode,
            rights.contains(Rights::READ),
            rights.contains(Rights::WRITE),
        )
    }
}

#[derive(Clone, Copy)]
pub struct Range {
    /// The capability every frame of the range is guarded by (`NONE`:
    /// a free entry).
    root: CapRef,
    key: u64,
    rule: Rule,
    /// The user charged with it: its maker's effective uid.
    user: u32,
    /// Messages in flight that carry the ticket (`hold`).
    holds: u32,
    /// Kept by name until dropped (`keep`): one more count on each frame.
    kept: bool,
    n: u8,
    frames: [u32; RANGE_FRAMES],
}

impl Range {
    pub const FREE: Range = Range {
        root: CapRef::NONE,
        key: 0,
        rule: Rule::NONE,
        user: 0,
        holds: 0,
        kept: false,
        n: 0,
        frames: [0; RANGE_FRAMES],
    };

    /// Its frames, in the order they were named.
    pub fn frames(&self) -> impl Iterator<Item = Frame> + '_ {
        self.frames[..self.n as usize].iter().map(|&f| Frame::new(f as u64))
    }

    pub fn root(&self) -> CapRef {
        self.root
    }

    /// The counts on each frame the range keeps: its holds' and its keep's.
    pub fn counts(&self) -> u32 {
        self.holds + u32::from(self.kept)
    }
}

/// The table (a static the kernel state takes once at boot).
pub static TABLE: cell::Once<[Range; RANGES]> = cell::Once::new([Range::FREE; RANGES]);

/// The kernel state's part that holds frame ranges.
pub struct Ranges {
    table: &'static mut [Range; RANGES],
    /// The live ranges charged to each user.
    charges: Charges,
    keys: Keys,
}

impl Ranges {
    pub fn new(table: &'static mut [Range; RANGES], charges: Charges, keys: Keys) -> Ranges {
        Ranges { table, charges, keys }
    }

    /// Mixes `w` into the key generator's stream (`Keys::stir`).
    pub fn stir(&mut self, w: u64) {
        self.keys.stir(w);
    }

    /// A range over `frames` (1 to `RANGE_FRAMES`, checked by the caller to
    /// be the maker's, distinct and unshared) under `rule`, charged to
    /// `user` (`OverQuota` past `PER_USER` live ranges, unless root);
    /// returns its ticket and root, which the caller makes each frame's
    /// share guard. `tsc` (the time stamp counter) goes into the key
    /// generator's stream, where it has one; `alive` says whether a frame still belongs to the range with that
    /// root (for the sweep).
    pub fn make(
        &mut self,
        caps: &mut Caps,
        frames: &[Frame],
        rule: Rule,
        user: u32,
        tsc: u64,
        alive: impl Fn(Frame, CapRef) -> bool,
    ) -> Result<(u64, CapRef), Error> {
        if frames.is_empty() || frames.len() > RANGE_FRAMES {
            return Err(Error::BadLength);
        }
        if user != 0 && self.charges.count(user) >= PER_USER {
            self.sweep(caps, &alive);
            if self.charges.count(user) >= PER_USER {
                return Err(Error::OverQuota);
            }
        }
        let i = match self.table.iter().position(|r| r.root.is_none()) {
            Some(i) => i,
            None => self.sweep(caps, &alive).ok_or(Error::NoMemory)?,
        };
        let root = caps.create_root(Rights::ALL)?;
        // Never 0 (a ticket of key 0 is as good as none), and 47 bits: a
        // ticket is a call's result, which is an error if negative.
        let key = (self.keys.next(tsc) >> (KEY_SHIFT + 1)).max(1);
        self.charges.add(user);
        let r = &mut self.table[i];
        *r = Range { root, key, rule, user, n: frames.len() as u8, ..Range::FREE };
        for (to, f) in r.frames.iter_mut().zip(frames) {
            *to = f.number() as u32;
        }
        Ok((key << KEY_SHIFT | i as u64, root))
    }

    /// Frees the ranges none of whose frames lives, held by no message
    /// (revoking their roots and every loan of them); returns one freed
    /// entry.
    fn sweep(&mut self, caps: &mut Caps, alive: &impl Fn(Frame, CapRef) -> bool) -> Option<usize> {
        let mut freed = None;
        for (i, r) in self.table.iter_mut().enumerate() {
            if !r.root.is_none() && r.counts() == 0 && !r.frames().any(|f| alive(f, r.root)) {
                let _ = caps.revoke(r.root);
                self.charges.remove(r.user);
                *r = Range::FREE;
                freed = Some(i);
            }
        }
        freed
    }

    /// The range `ticket` names (`ticketed`'s errors).
    pub fn get(&self, ticket: u64) -> Result<&Range, Error> {
        Ok(&self.table[self.ticketed(ticket)?])
    }

    /// One more (`up`) or one fewer message holds the range `ticket` names
    /// (`ticketed`'s errors): `BadState` to let go of a range nobody holds,
    /// `NoMemory` past the count. The caller changes the frames' counts.
    pub fn hold(&mut self, ticket: u64, up: bool) -> Result<(), Error> {
        let r = &mut self.table[self.ticketed(ticket)?];
        r.holds = match up {
            true => r.holds.checked_add(1).ok_or(Error::NoMemory)?,
            false => r.holds.checked_sub(1).ok_or(Error::BadState)?,
        };
        Ok(())
    }

    /// Gives the range `ticket` names (`ticketed`'s errors) the rule `who`
    /// asks for (`Rule::asked`'s errors), if `who` is root or the rule's
    /// owner (`Denied`).
    pub fn set_rule(&mut self, ticket: u64, who: &Ident, owner: u64, mode: u64) -> Result<(), Error> {
        let i = self.ticketed(ticket)?;
        let uid = who.uid[abi::ident::EFFECTIVE];
        if uid != 0 && uid != self.table[i].rule.uid {
            return Err(Error::Denied);
        }
        self.table[i].rule = Rule::asked(who, owner, mode)?;
        Ok(())
    }

    /// The range `ticket` names (`ticketed`'s errors) is kept by name until
    /// dropped: `BadState` if it is already. The caller counts one more
    /// mapping on each frame; unlike a hold, `claim` still judges the rule.
    pub fn keep(&mut self, ticket: u64) -> Result<(), Error> {
        let r = &mut self.table[self.ticketed(ticket)?];
        if r.kept {
            return Err(Error::BadState);
        }
        r.kept = true;
        Ok(())
    }

    /// The live range `ticket` names: `BadLength` for an index past the
    /// table, `NotPermitted` for a free entry or a wrong key.
    fn ticketed(&self, ticket: u64) -> Result<usize, Error> {
        let i = (ticket & ((1 << KEY_SHIFT) - 1)) as usize;
        let r = self.table.get(i).ok_or(Error::BadLength)?;
        if r.root.is_none() || r.key != ticket >> KEY_SHIFT {
            return Err(Error::NotPermitted);
        }
        Ok(i)
    }

    /// Ends the range `ticket` names (`ticketed`'s errors): its root and
    /// every loan of it are revoked. Returns it, for the caller to drop
    /// its holds' and keep's counts on the frames and their guards.
    pub fn drop_range(&mut self, caps: &mut Caps, ticket: u64) -> Result<Range, Error> {
        let i = self.ticketed(ticket)?;
        let r = core::mem::replace(&mut self.table[i], Range::FREE);
        let _ = caps.revoke(r.root);
        self.charges.remove(r.user);
        Ok(r)
    }

    /// A loan of the range `ticket` names (`ticketed`'s errors), with
    /// `rights` (bits: `BadFlags`; a loan without `GRANT` cannot be lent
    /// on), for `who`: `Denied` if the range is held by no message and its
    /// rule refuses `who` those rights.
    pub fn claim(&self, caps: &mut Caps, ticket: u64, rights: u64, who: &Ident) -> Result<CapRef, Error> {
        let rights = Rights::from_bits(rights)?;
        let r = &self.table[self.ticketed(ticket)?];
        if r.holds == 0 && !r.rule.admits(who, rights) {
            return Err(Error::Denied);
        }
        caps.lend_as(r.root, rights)
    }

    /// The range capability `c` names (it or what it was lent from is a
    /// range's root), checked for `need`: `NotPermitted` if `c` is stale
    /// or lacks a right, `NotOwner` if it names no range.
    pub fn named_by(&self, caps: &Caps, c: CapRef, need: Rights) -> Result<&Range, Error> {
        let root = caps.lent_from(c).ok_or(Error::NotPermitted)?;
        let r = self.table.iter().find(|r| r.root == root).ok_or(Error::NotOwner)?;
        caps.check(c, root, need)?;
        Ok(r)
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::boxed::Box;
    use std::collections::BTreeMap;

    /// A range table, a capability table, and each frame's share guard
    /// (absent: freed or reused).
    struct World {
        ranges: Ranges,
        caps: Box<Caps>,
        guards: BTreeMap<u64, CapRef>,
    }

    impl World {
        fn new() -> World {
            let table = Box::leak(Box::new([Range::FREE; RANGES]));
            let charges =
                Charges::new(Box::leak(Box::new([crate::charges::Charge::FREE; crate::charges::SLOTS])));
            let ranges = Ranges::new(table, charges, Keys::new(None, [1, 2, 3, 4]));
            World { ranges, caps: Box::new(Caps::new()), guards: BTreeMap::new() }
        }

        fn make(&mut self, frames: &[u64]) -> Result<u64, Error> {
            self.make_as(frames, Rule { uid: 0, gid: 0, mode: 0o600 })
        }

        fn make_as(&mut self, frames: &[u64], rule: Rule) -> Result<u64, Error> {
            let fs: std::vec::Vec<Frame> = frames.iter().map(|&f| Frame::new(f)).collect();
            let guards = &self.guards;
            let (ticket, root) = self
                .ranges
                .make(&mut self.caps, &fs, rule, rule.uid, 7, |f, g| guards.get(&f.number()) == Some(&g))?;
            for f in frames {
                self.guards.insert(*f, root);
            }
            Ok(ticket)
        }

        /// The frames a loan may map with `need`.
        fn frames(&self, c: CapRef, need: Rights) -> Result<std::vec::Vec<u64>, Error> {
            Ok(self.ranges.named_by(&self.caps, c, need)?.frames().map(|f| f.number()).collect())
        }
    }

    #[test]
    fn a_claimed_loan_maps_the_range_and_nothing_else() {
        let mut w = World::new();
        let t = w.make(&[10, 3, 7]).unwrap();
        let other = w.make(&[11]).unwrap();
        let loan = w.ranges.claim(&mut w.caps, t, 7, &Ident::ROOT).unwrap();
        assert_eq!(w.frames(loan, Rights::READ | Rights::WRITE), Ok(std::vec![10, 3, 7]));
        // Its guard is that range's root only: another range's frame is not
        // covered.
        let root11 = w.guards[&11];
        assert!(!w.caps.dominates(loan, root11));
        assert!(w.caps.dominates(loan, w.guards[&3]));
        assert_ne!(t, other);
    }

    #[test]
    fn forged_tickets_are_refused() {
        let mut w = World::new();
        let t = w.make(&[1, 2]).unwrap();
        let live = w.caps.live();
        // Wrong key, a free entry, an index past the table, no key at all.
        assert_eq!(w.ranges.claim(&mut w.caps, t ^ 1 << 40, 3, &Ident::ROOT), Err(Error::NotPermitted));
        assert_eq!(w.ranges.claim(&mut w.caps, t + 1, 3, &Ident::ROOT), Err(Error::NotPermitted));
        assert_eq!(w.ranges.claim(&mut w.caps, RANGES as u64, 3, &Ident::ROOT), Err(Error::BadLength));
        assert_eq!(w.ranges.claim(&mut w.caps, t & 0xffff, 3, &Ident::ROOT), Err(Error::NotPermitted));
        assert_eq!(w.ranges.claim(&mut w.caps, t, 8, &Ident::ROOT), Err(Error::BadFlags));
        assert_eq!(w.caps.live(), live, "a refused claim made a capability");
    }

    #[test]
    fn a_read_loan_cannot_map_writable() {
        let mut w = World::new();
        let t = w.make(&[5]).unwrap();
        let read = w.ranges.claim(&mut w.caps, t, 1, &Ident::ROOT).unwrap();
        assert_eq!(w.frames(read, Rights::READ), Ok(std::vec![5]));
        assert_eq!(w.frames(read, Rights::READ | Rights::WRITE), Err(Error::NotPermitted));
        // Without GRANT it cannot be lent on.
        assert_eq!(w.caps.lend(read), Err(Error::NotPermitted));
    }

    #[test]
    fn revoked_and_unrelated_capabilities_name_no_range() {
        let mut w = World::new();
        let t = w.make(&[5, 6]).unwrap();
        let loan = w.ranges.claim(&mut w.caps, t, 7, &Ident::ROOT).unwrap();
        w.caps.revoke(loan).unwrap();
        assert_eq!(w.frames(loan, Rights::READ), Err(Error::NotPermitted));
        // A capability of some other kind (an environment's root).
        let env_root = w.caps.create_root(Rights::ALL).unwrap();
        assert_eq!(w.frames(env_root, Rights::READ), Err(Error::NotOwner));
        // The range itself is untouched: a new claim works.
        let again = w.ranges.claim(&mut w.caps, t, 7, &Ident::ROOT).unwrap();
        assert_eq!(w.frames(again, Rights::READ), Ok(std::vec![5, 6]));
    }

    #[test]
    fn a_dropped_range_takes_its_loans_and_its_entry_is_reused() {
        let mut w = World::new();
        let t = w.make(&[100, 101]).unwrap();
        let loan = w.ranges.claim(&mut w.caps, t, 7, &Ident::ROOT).unwrap();
        assert_eq!(w.ranges.drop_range(&mut w.caps, t ^ 1 << 20).err(), Some(Error::NotPermitted));
        let gone = w.ranges.drop_range(&mut w.caps, t).unwrap();
        assert_eq!(gone.frames().map(|f| f.number()).collect::<std::vec::Vec<_>>(), [100, 101]);
        assert!(!w.caps.valid(loan), "a loan outlived its range");
        assert_eq!(w.frames(loan, Rights::READ), Err(Error::NotPermitted));
        assert_eq!(w.ranges.claim(&mut w.caps, t, 7, &Ident::ROOT), Err(Error::NotPermitted));
        assert_eq!(w.ranges.drop_range(&mut w.caps, t).err(), Some(Error::NotPermitted), "dropped twice");
        let fresh = w.make(&[102]).unwrap();
        assert_eq!(fresh & 0xffff, t & 0xffff, "the entry was reused");
        assert_ne!(fresh, t, "with a new key");
    }

    #[test]
    fn a_range_whose_frames_are_gone_is_swept_unless_held() {
        let mut w = World::new();
        let stale = w.make(&[100]).unwrap();
        let held = w.make(&[200]).unwrap();
        let loan = w.ranges.claim(&mut w.caps, stale, 7, &Ident::ROOT).unwrap();
        w.ranges.hold(held, true).unwrap();
        for f in 0..RANGES as u64 - 2 {
            w.make(&[1000 + f]).unwrap();
        }
        assert_eq!(w.make(&[5000]), Err(Error::NoMemory), "a full table of live ranges");
        // Frames 100 and 200 are freed (their guards reset on reuse): the
        // next range takes 100's entry; 200's is held by a message.
        w.guards.remove(&100);
        w.guards.remove(&200);
        let fresh = w.make(&[300]).unwrap();
        assert_eq!(fresh & 0xffff, stale & 0xffff, "the swept entry was reused");
        assert_eq!(w.ranges.claim(&mut w.caps, stale, 3, &Ident::ROOT), Err(Error::NotPermitted));
        assert!(!w.caps.valid(loan), "a loan outlived its swept range");
        assert!(w.ranges.get(held).is_ok(), "a held range was swept");
        assert_eq!(w.make(&[301]), Err(Error::NoMemory));
        w.ranges.hold(held, false).unwrap();
        assert_eq!(w.ranges.hold(held, false), Err(Error::BadState), "let go of twice");
        assert!(w.make(&[302]).is_ok(), "an unheld dead range is swept");
        assert_eq!(w.ranges.get(held).err(), Some(Error::NotPermitted));
    }

    fn user(uid: u32, gid: u32, groups: &[u32]) -> Ident {
        let mut id = Ident { uid: [uid; 3], gid: [gid; 3], ..Ident::ROOT };
        id.groups[..groups.len()].copy_from_slice(groups);
        id.ngroups = groups.len() as u32;
        id
    }

    #[test]
    fn a_ticket_read_by_another_user_is_refused_unless_held() {
        let mut w = World::new();
        // Root's 0600 range: its ticket, read from shared memory by uid 1000.
        let t = w.make(&[1, 2]).unwrap();
        let live = w.caps.live();
        let stranger = user(1000, 1000, &[]);
        let rw = 3;
        assert_eq!(w.ranges.claim(&mut w.caps, t, rw, &stranger), Err(Error::Denied));
        assert_eq!(w.ranges.claim(&mut w.caps, t, 1, &stranger), Err(Error::Denied));
        assert_eq!(w.caps.live(), live, "a refused claim made a capability");
        // A held range travels by ticket: whoever the message reaches claims.
        w.ranges.hold(t, true).unwrap();
        assert!(w.ranges.claim(&mut w.caps, t, rw, &stranger).is_ok());
        w.ranges.hold(t, false).unwrap();
        assert_eq!(w.ranges.claim(&mut w.caps, t, rw, &stranger), Err(Error::Denied));
        // Root claims anything.
        assert!(w.ranges.claim(&mut w.caps, t, rw, &Ident::ROOT).is_ok());
    }

    #[test]
    fn a_kept_range_is_not_swept_and_still_judges_its_rule() {
        let mut w = World::new();
        let t = w.make(&[1]).unwrap();
        w.ranges.keep(t).unwrap();
        assert_eq!(w.ranges.keep(t), Err(Error::BadState), "kept twice");
        let stranger = user(1000, 1000, &[]);
        assert_eq!(
            w.ranges.claim(&mut w.caps, t, 3, &stranger),
            Err(Error::Denied),
            "a keep opened the rule"
        );
        assert!(w.ranges.claim(&mut w.caps, t, 3, &Ident::ROOT).is_ok());
        for f in 0..RANGES as u64 - 1 {
            w.make(&[1000 + f]).unwrap();
        }
        w.guards.remove(&1);
        assert_eq!(w.make(&[5000]), Err(Error::NoMemory), "a kept range was swept");
        assert_eq!(w.ranges.drop_range(&mut w.caps, t).map(|r| r.counts()), Ok(1), "the keep's count");
        assert!(w.make(&[5001]).is_ok());
    }

    #[test]
    fn the_rule_is_judged_as_file_bits() {
        let mut w = World::new();
        // Owner 1000 rw, group 50 read, others nothing (0640).
        let t = w.make_as(&[9], Rule { uid: 1000, gid: 50, mode: 0o640 }).unwrap();
        let (r, rw) = (1u64, 3u64);
        let claim =
            |w: &mut World, rights, who: &Ident| w.ranges.claim(&mut w.caps, t, rights, who).map(|_| ());
        assert_eq!(claim(&mut w, rw, &user(1000, 1000, &[])), Ok(()));
        assert_eq!(claim(&mut w, r, &user(1001, 50, &[])), Ok(()));
        assert_eq!(claim(&mut w, r, &user(1001, 7, &[3, 50])), Ok(()), "a supplementary group");
        assert_eq!(claim(&mut w, rw, &user(1001, 50, &[])), Err(Error::Denied));
        assert_eq!(claim(&mut w, r, &user(1002, 1002, &[])), Err(Error::Denied));
        // The owner's class is the owner's bits, even when others' are wider.
        let t2 = w.make_as(&[10], Rule { uid: 1000, gid: 50, mode: 0o066 }).unwrap();
        assert_eq!(w.ranges.claim(&mut w.caps, t2, r, &user(1000, 1000, &[])).err(), Some(Error::Denied));
    }

    #[test]
    fn only_root_or_the_owner_changes_the_rule() {
        let mut w = World::new();
        let owner = user(1000, 1000, &[]);
        let t = w.make_as(&[11], Rule { uid: 1000, gid: 1000, mode: 0o600 }).unwrap();
        let (rw, stranger) = (3u64, user(1001, 1001, &[]));
        assert_eq!(w.ranges.claim(&mut w.caps, t, rw, &stranger).err(), Some(Error::Denied));
        // Another user may not open it to itself, nor the owner give it away.
        assert_eq!(w.ranges.set_rule(t, &stranger, 1001 | 1001 << 32, 0o666), Err(Error::Denied));
        assert_eq!(w.ranges.set_rule(t, &owner, 1001 | 1001 << 32, 0o666), Err(Error::NotPermitted));
        assert_eq!(w.ranges.set_rule(t, &owner, 1000 | 1000 << 32, 0o700), Err(Error::BadFlags));
        assert_eq!(
            w.ranges.set_rule(t + (1 << KEY_SHIFT), &owner, 1000 | 1000 << 32, 0o666),
            Err(Error::NotPermitted)
        );
        assert_eq!(
            w.ranges.claim(&mut w.caps, t, rw, &stranger).err(),
            Some(Error::Denied),
            "refusals changed it"
        );
        // The owner's chmod 0666 opens it; root's chown to 1001 with 0600 closes it to 1000.
        assert_eq!(w.ranges.set_rule(t, &owner, 1000 | 1000 << 32, 0o666), Ok(()));
        assert!(w.ranges.claim(&mut w.caps, t, rw, &stranger).is_ok());
        assert_eq!(w.ranges.set_rule(t, &Ident::ROOT, 1001 | 1001 << 32, 0o600), Ok(()));
        assert_eq!(w.ranges.claim(&mut w.caps, t, rw, &owner).err(), Some(Error::Denied));
        assert!(w.ranges.claim(&mut w.caps, t, rw, &stranger).is_ok());
        assert_eq!(w.ranges.set_rule(t, &owner, 1000 | 1000 << 32, 0o666), Err(Error::Denied));
    }

    #[test]
    fn a_maker_gives_only_what_chown_would() {
        let me = user(1000, 1000, &[60]);
        let mine = Rule { uid: 1000, gid: 1000, mode: 0o600 };
        assert_eq!(Rule::asked(&me, abi::syscall::frame_range::OWNER_SELF, 0o600), Ok(mine));
        assert_eq!(Rule::asked(&me, 1000 | 60 << 32, 0o660), Ok(Rule { gid: 60, mode: 0o660, ..mine }));
        // A forged owner (root, another user) or a group it is not in.
        assert_eq!(Rule::asked(&me, 0, 0o600), Err(Error::NotPermitted));
        assert_eq!(Rule::asked(&me, 1001 | 1000 << 32, 0o600), Err(Error::NotPermitted));
        assert_eq!(Rule::asked(&me, 1000 | 61 << 32, 0o600), Err(Error::NotPermitted));
        // A forged mode: execute, set-id or sticky bits, anything above.
        for bad in [0o700, 0o4600, 0o1666, 1 << 40] {
            assert_eq!(Rule::asked(&me, 1000 | 1000 << 32, bad), Err(Error::BadFlags), "{bad:#o}");
        }
        assert_eq!(
            Rule::asked(&Ident::ROOT, 1001 | 61 << 32, 0o600),
            Ok(Rule { uid: 1001, gid: 61, mode: 0o600 })
        );
    }

    #[test]
    fn one_user_cannot_take_everyones_ranges() {
        let mut w = World::new();
        let hostile = Rule { uid: 1000, gid: 1000, mode: 0o600 };
        let mut first = 0;
        for f in 0..PER_USER as u64 {
            let t = w.make_as(&[f], hostile).unwrap();
            first = if f == 0 { t } else { first };
        }
        let live = w.caps.live();
        assert_eq!(w.make_as(&[5000], hostile), Err(Error::OverQuota), "past its share");
        assert_eq!(w.caps.live(), live, "a refused make made a capability");
        // Everyone else still makes ranges: another user, and root.
        assert!(w.make_as(&[5001], Rule { uid: 1001, ..hostile }).is_ok());
        assert!(w.make(&[5002]).is_ok());
        // A range of its own that died is swept to make room.
        w.guards.remove(&0);
        assert!(w.make_as(&[5003], hostile).is_ok());
        assert_eq!(w.ranges.get(first).err(), Some(Error::NotPermitted), "the dead range was swept");
    }

    /// The live ranges charged to `user`, counted the slow way.
    fn scanned(w: &World, user: u32) -> usize {
        w.ranges.table.iter().filter(|r| !r.root.is_none() && r.user == user).count()
    }

    #[test]
    fn each_users_count_is_exact_through_make_drop_and_sweep() {
        let mut w = World::new();
        let users = [0u32, 1000, 1001];
        let mut live: std::vec::Vec<(u64, u64)> = std::vec::Vec::new();
        let mut frame = 0u64;
        // A fixed pseudo-random walk: makes (past the quota too), drops,
        // and frames that die (their ranges swept at the quota or when the
        // table is full).
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for step in 0..6000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let u = users[(x % 3) as usize];
            match x >> 32 & 7 {
                0..=4 => {
                    frame += 1;
                    if let Ok(t) = w.make_as(&[frame], Rule { uid: u, gid: u, mode: 0o600 }) {
                        live.push((t, frame));
                    }
                }
                5 if !live.is_empty() => {
                    let (t, _) = live.swap_remove((x >> 40) as usize % live.len());
                    let _ = w.ranges.drop_range(&mut w.caps, t);
                }
                _ if !live.is_empty() => {
                    let (_, f) = live.swap_remove((x >> 40) as usize % live.len());
                    w.guards.remove(&f);
                }
                _ => {}
            }
            for u in users {
                assert_eq!(w.ranges.charges.count(u), scanned(&w, u), "user {u} at step {step}");
            }
        }
        assert!(scanned(&w, 1000) > 0 && scanned(&w, 0) > 0);
    }

    #[test]
    fn bad_sizes_are_refused_and_change_nothing() {
        let mut w = World::new();
        let live = w.caps.live();
        assert_eq!(w.make(&[]), Err(Error::BadLength));
        let many: std::vec::Vec<u64> = (0..RANGE_FRAMES as u64 + 1).collect();
        assert_eq!(w.make(&many), Err(Error::BadLength));
        assert_eq!(w.caps.live(), live);
        assert!(w.guards.is_empty());
    }

    #[test]
    fn keys_differ_and_tickets_are_results() {
        let mut w = World::new();
        let tickets: std::vec::Vec<u64> = (0..200).map(|f| w.make(&[f]).unwrap()).collect();
        assert!(tickets.iter().all(|&t| (t as i64) > 0 && t >> KEY_SHIFT != 0), "a ticket read as an error");
        assert_ne!(tickets[0] >> KEY_SHIFT, tickets[1] >> KEY_SHIFT);
    }
}
