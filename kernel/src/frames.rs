//! Physical page ownership (paper 000 §3.1, 001 §3.1): every frame has an
//! owner, a state and a count of the mappings that name it.
//!
//! The records live in the exposed frame table (`abi::tables::FrameInfo`,
//! mapped read-only into every environment). Kernel-private links chain each
//! frame into either the free list or its owner's list, so allocation by
//! name, allocation of any frame, and reclaiming everything an environment
//! owns are all proportional to the work done, never to memory size.

use abi::tables::{env_slot, frame_state, FrameInfo, ENV_SLOTS};
use abi::Error;

const NIL: u32 = u32::MAX;

/// A physical frame, named by its number (the ABI's name for it: what
/// `frame_alloc` returns and the frame table is indexed by).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub struct Frame(u64);

impl Frame {
    pub const fn new(number: u64) -> Frame {
        Frame(number)
    }

    /// The frame holding physical address `addr`.
    pub const fn containing(addr: u64) -> Frame {
        Frame(addr >> 12)
    }

    pub const fn number(self) -> u64 {
        self.0
    }

    /// Its physical address.
    pub const fn addr(self) -> u64 {
        self.0 << 12
    }

    /// The frame `n` frames after this one.
    pub const fn add(self, n: u64) -> Frame {
        Frame(self.0 + n)
    }
}

/// Kernel-private list links of one frame.
#[derive(Clone, Copy, Debug)]
pub struct Link {
    prev: u32,
    next: u32,
}

impl Link {
    pub const UNLINKED: Link = Link { prev: NIL, next: NIL };
}

pub struct Frames<'a> {
    info: &'a mut [FrameInfo],
    links: &'a mut [Link],
    free_head: u32,
    free: u64,
    /// Head of each environment slot's owned-frame list, and its length.
    owned: [u32; ENV_SLOTS],
    owned_n: [u32; ENV_SLOTS],
}

impl<'a> Frames<'a> {
    /// A table in which every frame starts out reserved.
    pub fn new(info: &'a mut [FrameInfo], links: &'a mut [Link]) -> Self {
        assert_eq!(info.len(), links.len());
        assert!(info.len() < NIL as usize);
        for (i, l) in info.iter_mut().zip(links.iter_mut()) {
            *i = FrameInfo { state: frame_state::RESERVED, ..FrameInfo::default() };
            *l = Link::UNLINKED;
        }
        Frames { info, links, free_head: NIL, free: 0, owned: [NIL; ENV_SLOTS], owned_n: [0; ENV_SLOTS] }
    }

    pub fn len(&self) -> u64 {
        self.info.len() as u64
    }

    pub fn is_empty(&self) -> bool {
        self.info.is_empty()
    }

    pub fn free_count(&self) -> u64 {
        self.free
    }

    pub fn info(&self, frame: Frame) -> Option<&FrameInfo> {
        self.info.get(usize::try_from(frame.0).ok()?)
    }

    /// Boot: hands a reserved frame of usable RAM to the allocator.
    pub fn release_reserved(&mut self, frame: Frame) {
        let f = frame.0 as usize;
        if f < self.info.len() && self.info[f].state == frame_state::RESERVED {
            self.push_free(f as u32);
        }
    }

    /// Boot: takes a free frame for the kernel (image, tables, boot module).
    pub fn claim_for_kernel(&mut self, frame: Frame) {
        let f = frame.0 as usize;
        if f < self.info.len() && self.info[f].state == frame_state::FREE {
            self.unlink(f as u32);
            self.free -= 1;
            self.info[f] = FrameInfo { state: frame_state::KERNEL, ..FrameInfo::default() };
        }
    }

    /// Allocates frame `want` (or any free frame) to `owner` in `state`.
    pub fn alloc(&mut self, want: Option<Frame>, owner: u32, state: u8) -> Result<Frame, Error> {
        let f = match want {
            None if self.free_head == NIL => return Err(Error::NoMemory),
            None => self.free_head,
            Some(n) => {
                let rec = self.info(n).ok_or(Error::BadFrame)?;
                if rec.state != frame_state::FREE {
                    return Err(if rec.state == frame_state::RESERVED {
                        Error::BadFrame
                    } else {
                        Error::FrameTaken
                    });
                }
                n.0 as u32
            }
        };
        self.unlink(f);
        self.free -= 1;
        self.info[f as usize] = FrameInfo { owner, state, ..FrameInfo::default() };
        if owner != 0 {
            self.push_owned(owner, f);
        }
        Ok(Frame(f as u64))
    }

    /// Frees an unmapped frame.
    pub fn free(&mut self, frame: Frame) -> Result<(), Error> {
        let rec = *self.info(frame).ok_or(Error::BadFrame)?;
        if rec.refs != 0 {
            return Err(Error::FrameMapped);
        }
        if rec.owner != 0 {
            self.unlink_owned(rec.owner, frame.0 as u32);
        }
        self.push_free(frame.0 as u32);
        Ok(())
    }

    /// Whether `frame` can count `n` more mappings.
    pub fn can_add_refs(&self, frame: Frame, n: u64) -> bool {
        self.refs(frame) + n <= u16::MAX as u64
    }

    /// How many mappings `frame` counts.
    pub fn refs(&self, frame: Frame) -> u64 {
        self.info[frame.0 as usize].refs as u64
    }

    /// Counts a new mapping of `frame`.
    pub fn add_ref(&mut self, frame: Frame) -> Result<(), Error> {
        let rec = &mut self.info[frame.0 as usize];
        rec.refs = rec.refs.checked_add(1).ok_or(Error::NoMemory)?;
        Ok(())
    }

    /// `frame`'s owner lets go of it (`frame_disown`, whose caller checked
    /// the owner, and an owner's end): freed now if nothing maps it, else
    /// with its last mapping.
    pub fn disown(&mut self, frame: Frame) {
        let f = frame.0 as u32;
        let rec = self.info[f as usize];
        if rec.owner == 0 {
            return;
        }
        self.unlink_owned(rec.owner, f);
        if rec.refs == 0 {
            self.push_free(f);
        } else {
            self.info[f as usize].owner = 0;
        }
    }

    /// Drops a mapping of `frame`; an ownerless frame is freed with its last
    /// mapping.
    pub fn drop_ref(&mut self, frame: Frame) {
        let rec = &mut self.info[frame.0 as usize];
        rec.refs = rec.refs.saturating_sub(1);
        if rec.refs == 0 && rec.owner == 0 && rec.state == frame_state::USER {
            self.push_free(frame.0 as u32);
        }
    }

    /// XN's cache takes a frame its owner holds (`crate::xn`): it stays
    /// charged to the owner, is mapped only through `xn_bind`, and XN holds
    /// a reference so neither the owner nor its end frees it.
    /// (XN is offered only frames mapped nowhere: the count cannot
    /// overflow.)
    pub fn to_cache(&mut self, frame: Frame) {
        if let Some(rec) = self.info.get_mut(frame.0 as usize) {
            rec.refs = rec.refs.saturating_add(1);
            rec.state = frame_state::CACHE;
        }
    }

    /// XN's cache gives a frame back: to its owner if nothing maps it any
    /// more, else it becomes ownerless and is freed with its last mapping
    /// (whoever still maps it sees the old block, never someone's next use
    /// of the frame).
    pub fn from_cache(&mut self, frame: Frame) {
        let f = frame.0 as usize;
        let Some(rec) = self.info.get_mut(f).filter(|r| r.state == frame_state::CACHE) else { return };
        rec.state = frame_state::USER;
        let (owner, refs) = (rec.owner, rec.refs);
        if refs > 1 && owner != 0 {
            self.unlink_owned(owner, f as u32);
            self.info[f].owner = 0;
        }
        self.drop_ref(frame);
    }

    /// Reclaims everything `owner` holds: unmapped frames are freed at once,
    /// frames still mapped elsewhere lose their owner and are freed when
    /// their last mapping goes.
    pub fn release_owner(&mut self, owner: u32) {
        while self.owned[env_slot(owner)] != NIL {
            self.disown(Frame(self.owned[env_slot(owner)] as u64));
        }
    }

    /// The frames charged to `owner`.
    pub fn owned(&self, owner: u32) -> impl Iterator<Item = Frame> + '_ {
        let mut f = self.owned[env_slot(owner)];
        core::iter::from_fn(move || {
            (f != NIL).then(|| {
                let cur = f;
                f = self.links[f as usize].next;
                Frame(cur as u64)
            })
        })
    }

    /// Number of frames charged to `owner`.
    pub fn owned_count(&self, owner: u32) -> u64 {
        self.owned_n[env_slot(owner)] as u64
    }

    fn push_free(&mut self, f: u32) {
        debug_assert_eq!(self.info[f as usize].refs, 0, "a frame still mapped was freed");
        self.info[f as usize] = FrameInfo::default();
        self.links[f as usize] = Link { prev: NIL, next: self.free_head };
        if self.free_head != NIL {
            self.links[self.free_head as usize].prev = f;
        }
        self.free_head = f;
        self.free += 1;
    }

    fn push_owned(&mut self, owner: u32, f: u32) {
        self.owned_n[env_slot(owner)] += 1;
        let head = &mut self.owned[env_slot(owner)];
        self.links[f as usize] = Link { prev: NIL, next: *head };
        if *head != NIL {
            self.links[*head as usize].prev = f;
        }
        *head = f;
    }

    fn unlink_owned(&mut self, owner: u32, f: u32) {
        self.owned_n[env_slot(owner)] -= 1;
        if self.owned[env_slot(owner)] == f {
            self.owned[env_slot(owner)] = self.links[f as usize].next;
        }
        self.unlink_links(f);
    }

    /// Removes a free frame from the free list.
    fn unlink(&mut self, f: u32) {
        if self.free_head == f {
            self.free_head = self.links[f as usize].next;
        }
        self.unlink_links(f);
    }

    fn unlink_links(&mut self, f: u32) {
        let Link { prev, next } = self.links[f as usize];
        if prev != NIL {
            self.links[prev as usize].next = next;
        }
        if next != NIL {
            self.links[next as usize].prev = prev;
        }
        self.links[f as usize] = Link::UNLINKED;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec;

    fn with_frames(n: usize, f: impl FnOnce(&mut Frames)) {
        let mut info = vec![FrameInfo::default(); n];
        let mut links = vec![Link::UNLINKED; n];
        let mut fr = Frames::new(&mut info, &mut links);
        for i in 1..n as u64 {
            fr.release_reserved(Frame(i));
        }
        f(&mut fr)
    }

    const A: u32 = 1025; // slot 1
    const B: u32 = 2050; // slot 2

    #[test]
    fn alloc_by_name_and_any() {
        with_frames(16, |fr| {
            assert_eq!(fr.free_count(), 15);
            assert_eq!(fr.alloc(Some(Frame(7)), A, frame_state::USER), Ok(Frame(7)));
            assert_eq!(fr.alloc(Some(Frame(7)), A, frame_state::USER), Err(Error::FrameTaken));
            assert_eq!(fr.alloc(Some(Frame(0)), A, frame_state::USER), Err(Error::BadFrame));
            assert_eq!(fr.alloc(Some(Frame(99)), A, frame_state::USER), Err(Error::BadFrame));
            let any = fr.alloc(None, B, frame_state::USER).unwrap();
            assert_ne!(any, Frame(7));
            assert_eq!(fr.info(Frame(7)).unwrap().owner, A);
            assert_eq!(fr.free_count(), 13);
            assert_eq!(fr.owned_count(A), 1);
            fr.free(Frame(7)).unwrap();
            assert_eq!(fr.free_count(), 14);
            assert_eq!(fr.owned_count(A), 0);
        });
    }

    #[test]
    fn exhaustion_then_reuse() {
        with_frames(8, |fr| {
            let got: std::vec::Vec<Frame> =
                (0..7).map(|_| fr.alloc(None, A, frame_state::USER).unwrap()).collect();
            assert_eq!(fr.alloc(None, A, frame_state::USER), Err(Error::NoMemory));
            fr.free(got[3]).unwrap();
            assert_eq!(fr.alloc(None, B, frame_state::USER), Ok(got[3]));
        });
    }

    #[test]
    fn mapped_frames_outlive_their_owner() {
        with_frames(8, |fr| {
            let f = fr.alloc(None, A, frame_state::USER).unwrap();
            let g = fr.alloc(None, A, frame_state::PAGE_TABLE).unwrap();
            fr.add_ref(f).unwrap();
            assert_eq!(fr.free(f), Err(Error::FrameMapped));
            fr.release_owner(A);
            assert_eq!(fr.info(g).unwrap().state, frame_state::FREE);
            assert_eq!(fr.info(f).unwrap().owner, 0);
            assert_eq!(fr.free_count(), 6);
            fr.drop_ref(f);
            assert_eq!(fr.free_count(), 7);
            assert_eq!(fr.owned_count(A), 0);
        });
    }

    #[test]
    fn disowned_frames_go_with_their_last_mapping() {
        with_frames(8, |fr| {
            let f = fr.alloc(None, A, frame_state::USER).unwrap();
            let g = fr.alloc(None, A, frame_state::USER).unwrap();
            fr.add_ref(f).unwrap();
            fr.add_ref(f).unwrap();
            fr.disown(f);
            fr.disown(g);
            assert_eq!(fr.owned_count(A), 0);
            assert_eq!(fr.info(g).unwrap().state, frame_state::FREE);
            assert_eq!(fr.info(f).unwrap().owner, 0);
            assert_eq!(fr.free_count(), 6);
            fr.drop_ref(f);
            assert_eq!(fr.free_count(), 6);
            fr.drop_ref(f);
            assert_eq!(fr.free_count(), 7);
            // Ownerless now: a second disown changes nothing.
            fr.disown(f);
            assert_eq!(fr.free_count(), 7);
        });
    }

    #[test]
    fn owner_lists_stay_separate() {
        with_frames(32, |fr| {
            for i in 0..10 {
                fr.alloc(None, if i % 2 == 0 { A } else { B }, frame_state::USER).unwrap();
            }
            assert_eq!(fr.owned_count(A), 5);
            assert_eq!(fr.owned(A).count(), 5);
            assert!(fr.owned(A).all(|f| fr.info(f).unwrap().owner == A));
            fr.release_owner(B);
            assert_eq!(fr.owned_count(B), 0);
            assert_eq!(fr.owned_count(A), 5);
            assert_eq!(fr.free_count(), 31 - 5);
        });
    }
}
