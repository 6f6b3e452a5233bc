//! The inode table's borrow (`src/fs/node.rs`) on the host, over a table
//! in ordinary memory: readers get copies, writers a scoped borrow, and a
//! nested borrow of the table panics instead of aliasing.

// node.rs is compiled whole; these tests use part of it.
#![allow(dead_code)]

#[path = "../src/scoped.rs"]
mod scoped;

extern crate alloc;

#[path = "../src/fs/node.rs"]
mod node;

#[path = "../src/fs/pages.rs"]
mod pages;

#[path = "../src/fs/inode.rs"]
mod inode;

use node::Ino;
use std::alloc::{alloc_zeroed, dealloc, Layout};

/// What node.rs names as `super::`: the anchor in the shared header.
pub struct FsRoot {
    pub inodes: *mut node::Inode,
    pub count: u32,
    pub free: u32,
    pub unix_names: Ino,
}
pub const S_IFMT: u32 = 0o170000;
pub const S_IFDIR: u32 = 0o040000;
pub const S_ISGID: u32 = 0o2000;
const S_IFREG: u32 = 0o100000;

/// The shared arena, stood in for by the host's heap.
mod shared {
    use super::{alloc_zeroed, dealloc, Layout};
    use std::cell::Cell;
    use std::marker::PhantomData;

    thread_local! {
        /// Each test thread's arena roots (its own file system).
        static ROOTS: [Cell<usize>; 4] = const { [const { Cell::new(0) }; 4] };
    }

    /// As the arena's `Root`: an object found by slot.
    pub struct Root<T> {
        slot: usize,
        object: PhantomData<fn() -> T>,
    }

    /// The arena's size and use, as `statfs` sees it: a 512 MiB
    /// machine's (the inode table follows its size).
    pub fn usage() -> (usize, usize) {
        (64 << 20, 0)
    }

    impl<T> Root<T> {
        pub const fn new(slot: usize) -> Root<T> {
            Root { slot, object: PhantomData }
        }

        /// # Safety
        /// `T` is valid all zero.
        pub unsafe fn create_zeroed(&self) -> Result<(), ()> {
            let p = alloc(size_of::<T>(), align_of::<T>());
            ROOTS.with(|r| r[self.slot].set(p as usize));
            Ok(())
        }

        pub fn get(&self) -> *mut T {
            ROOTS.with(|r| r[self.slot].get()) as *mut T
        }
    }

    /// The count of shortened mapped files.
    pub fn shrinks() -> &'static std::sync::atomic::AtomicU64 {
        static SHRINKS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        &SHRINKS
    }

    pub fn alloc(size: usize, align: usize) -> *mut u8 {
        // SAFETY: every request here is non-empty.
        unsafe { alloc_zeroed(Layout::from_size_align(size, align).unwrap()) }
    }

    pub fn alloc_data(size: usize, align: usize) -> *mut u8 {
        alloc(size, align)
    }

    /// # Safety
    /// `p` came from `alloc` with this size.
    pub unsafe fn free(p: *mut u8, size: usize, align: usize) {
        // SAFETY: as the caller promises.
        unsafe { dealloc(p, Layout::from_size_align(size, align).unwrap()) }
    }

    /// # Safety
    /// As `free`; never grows in place.
    pub unsafe fn grow(_: *mut u8, _: usize, _: usize, _: usize) -> bool {
        false
    }

    /// # Safety
    /// As `grow`.
    pub unsafe fn grow_data(_: *mut u8, _: usize, _: usize, _: usize) -> bool {
        false
    }
}

#[path = "../src/errno.rs"]
#[allow(dead_code)]
mod errno;

mod layout {
    pub const SHARED_MAX: u64 = 1 << 30;
    pub const PAGE: u64 = 4096;
    pub fn page_up(v: u64) -> u64 {
        v.next_multiple_of(PAGE)
    }
}

mod time {
    pub fn wall_ns() -> u64 {
        7
    }
}

// One test: the table and its flag are the process's, and a panic leaves
// the flag set (as in lxrt, where it ends the process). It looks at a
// mapped file's pages on the way.
#[test]
#[should_panic(expected = "the inode table borrowed twice")]
fn copies_for_readers_a_scoped_borrow_for_writers_and_no_nesting() {
    assert!(node::init_table());
    let ino: Ino = node::alloc(S_IFREG | 0o644).unwrap();
    let before = node::get(ino);
    node::update(ino, |n| n.nlink = 9);
    assert_eq!((before.nlink, node::get(ino).nlink), (0, 9), "a copy does not change under a writer");
    node::update(ino, |n| n.nlink = 0);
    node::update(ino, |n| node::write_at(n, 3, b"abc")).unwrap();
    let n = node::get(ino);
    assert_eq!((n.size, n.mtime_ns), (6, 7));
    assert_eq!(node::bytes(&n), b"\0\0\0abc");
    node::release(ino);
    assert_eq!(node::alloc(S_IFDIR).unwrap(), ino, "released inodes are reused");
    let other = node::alloc(S_IFREG).unwrap();
    // The abstract names' directory: made once, its own parent, linked
    // nowhere else.
    let d = node::unix_names().unwrap();
    assert_eq!(node::unix_names(), Ok(d), "the same directory every time");
    let names = node::get(d);
    assert_eq!((names.mode & S_IFMT, names.nlink, names.parent), (S_IFDIR, 1, d));
    assert!(d != ino && d != other);
    a_mapped_files_pages_stay_put();
    // Without the check, `get` would make a second `&mut` to the table
    // while `n` is live.
    node::update(ino, |n| n.size = node::get(other).size);
}

/// A mapped file's pages (`src/fs/pages.rs`): made from the buffer at the
/// first shared mapping, they never move as the file grows; a truncation
/// while mapped keeps them (zeroed) until the last mapping goes.
fn a_mapped_files_pages_stay_put() {
    let ino: Ino = node::alloc(S_IFREG | 0o644).unwrap();
    let text: Vec<u8> = (0..10_000u32).map(|i| i as u8).collect();
    node::update(ino, |n| node::write_at(n, 0, &text)).unwrap();
    node::update(ino, node::page_in).unwrap();
    let n = node::get(ino);
    assert!(pages::paged(&n));
    assert_eq!(pages::count(&n), 3);
    assert_eq!(node::contents(&n).as_ref(), &text[..], "the bytes came along");
    let first: Vec<u64> = (0..3).map(|i| pages::page(&n, i).unwrap()).collect();
    assert!(first.iter().all(|p| p % 4096 == 0), "whole pages");
    // Growth by write (past a hole) and by truncate: the pages stay.
    node::update(ino, |n| node::write_at(n, 40_000, b"end")).unwrap();
    node::update(ino, |n| node::truncate(n, 70_000)).unwrap();
    let n = node::get(ino);
    // Runs double the file: 3 pages, then 7 more, then 10.
    assert_eq!((n.size, pages::count(&n)), (70_000, 20));
    assert_eq!((0..3).map(|i| pages::page(&n, i).unwrap()).collect::<Vec<_>>(), first);
    let mut buf = [9u8; 8];
    assert_eq!(node::read_at(&n, 9_998, &mut buf), 8);
    assert_eq!(buf, [14, 15, 0, 0, 0, 0, 0, 0], "the hole reads as zeros");
    assert_eq!(node::read_at(&n, 40_000, &mut buf[..3]), 3);
    assert_eq!(&buf[..3], b"end");
    // A mapping's store past the end does not come back with growth.
    node::update(ino, |n| n.maps = 1);
    node::update(ino, |n| node::truncate(n, 5000)).unwrap();
    let n = node::get(ino);
    assert_eq!((n.size, pages::count(&n)), (5000, 20), "mapped: the pages stay the file's");
    // SAFETY: page 1 is the file's; byte 904 of it is file byte 5000.
    unsafe { *((pages::page(&n, 1).unwrap() + 904) as *mut u8) = 0xee };
    let page3 = pages::page(&n, 3).unwrap();
    // SAFETY: as above: page 3 is kept, and zeroed.
    assert_eq!(unsafe { *((page3 + 10) as *const u8) }, 0, "cut pages are zeroed");
    node::update(ino, |n| node::truncate(n, 6000)).unwrap();
    assert_eq!(node::read_at(&node::get(ino), 5000, &mut buf[..1]), 1);
    assert_eq!(buf[0], 0, "grown again: zeros, not the mapping's store");
    assert_eq!(node::update(ino, node::flatten), Err(errno::ETXTBSY), "mapped: not made one buffer");
    // The last mapping goes: the runs past the end are freed (the first
    // holds the end: it stays whole).
    node::update(ino, node::unmapped);
    assert_eq!(pages::count(&node::get(ino)), 3);
    node::update(ino, node::flatten).unwrap();
    let n = node::get(ino);
    assert!(!pages::paged(&n));
    assert_eq!(node::bytes(&n)[..4999], text[..4999]);
    assert_eq!(n.size, 6000);
    node::update(ino, |n| n.nlink = 0);
    node::release(ino);
}
