//! Where cached blocks live: physical pages that belong to the libraries
//! that read them (paper 000 §4.3.3: "the registry only records the
//! mapping"). The kernel backs this with frames; the host with heap pages.

use alloc::boxed::Box;
use alloc::collections::BTreeMap;

use crate::{Principal, BLOCK};

/// A physical page, by number (a frame number in the kernel).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct PageId(pub u64);

/// The pages XN may read and fill on behalf of their owners.
pub trait Pages {
    /// True if `who` holds `page` (and so may hand it to XN).
    fn holds(&self, who: Principal, page: PageId) -> bool;
    /// The page's bytes (`None` if it no longer exists).
    fn bytes(&self, page: PageId) -> Option<&[u8; BLOCK]>;
    fn bytes_mut(&mut self, page: PageId) -> Option<&mut [u8; BLOCK]>;
    /// `page` now caches a block (the kernel takes the frame out of its
    /// owner's hands: it is reached only through bindings).
    fn taken(&mut self, _page: PageId) {}
    /// `page` caches no block any more (the kernel gives the frame back).
    fn released(&mut self, _page: PageId) {}
}

/// Heap pages for host use, each with an owner.
#[derive(Default)]
pub struct HostPages {
    pages: BTreeMap<u64, (Principal, Box<[u8; BLOCK]>)>,
    next: u64,
}

impl HostPages {
    pub fn new() -> HostPages {
        HostPages::default()
    }

    /// A zeroed page for `owner`.
    pub fn alloc(&mut self, owner: Principal) -> PageId {
        self.next += 1;
        self.pages.insert(self.next, (owner, Box::new([0; BLOCK])));
        PageId(self.next)
    }

    pub fn free(&mut self, page: PageId) {
        self.pages.remove(&page.0);
    }

    pub fn len(&self) -> usize {
        self.pages.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pages.is_empty()
    }
}

impl Pages for HostPages {
    fn holds(&self, who: Principal, page: PageId) -> bool {
        self.pages.get(&page.0).is_some_and(|(o, _)| *o == who)
    }

    fn bytes(&self, page: PageId) -> Option<&[u8; BLOCK]> {
        self.pages.get(&page.0).map(|(_, b)| &**b)
    }

    fn bytes_mut(&mut self, page: PageId) -> Option<&mut [u8; BLOCK]> {
        self.pages.get_mut(&page.0).map(|(_, b)| &mut **b)
    }
}
