//! XCP's write (paper 000 §7.2): cache pages written to other blocks
//! without passing through the library. Attack first: every refused copy
//! names its reason and leaves the disk and XN's state as they were.

mod common;

use common::*;
use xn::{Error, Pages, Parent, BLOCK};

/// What a refused copy must leave alone: the disk, the write count, the
/// blocks written since the flush, the destination's state.
fn snapshot(xn: &TestXn) -> (Vec<u8>, u64, Vec<bool>) {
    let state = (0..xn.nblocks()).map(|b| xn.written(b) || xn.unstable(b) || xn.entry(b).is_some()).collect();
    (xn.disk().data.clone(), xn.stats().writes, state)
}

fn on_disk(xn: &TestXn, b: u64) -> &[u8] {
    &xn.disk().data[b as usize * BLOCK..(b as usize + 1) * BLOCK]
}

/// Alice's source 100-103 (written, durable, cached), her destination
/// 110-113 (allocated, never written, not cached), and Bob's node 60
/// with his data block 150 (allocated, not cached).
fn setup_copy() -> (TestXn, u64) {
    let (mut xn, _, root) = setup();
    alloc(&mut xn, ALICE, A, root, 0, 100, 4, DATA).unwrap();
    for b in 100..104 {
        let p = page(&mut xn, A);
        xn.pages_mut().bytes_mut(p).unwrap().fill(b as u8);
        xn.insert_new(A, ALICE, Parent::Block(root), b, p).unwrap();
    }
    xn.write(A, 100, 4).unwrap();
    xn.flush().unwrap();
    alloc(&mut xn, ALICE, A, root, 1, 110, 4, DATA).unwrap();
    alloc(&mut xn, ALICE, A, root, 2, 60, 1, NODE).unwrap();
    let p = page_with_owner(&mut xn, A, BOB.uid);
    xn.insert_new(A, ALICE, Parent::Block(root), 60, p).unwrap();
    alloc(&mut xn, BOB, B, 60, 0, 150, 1, DATA).unwrap();
    (xn, root)
}

#[test]
fn each_bad_copy_is_refused_with_its_reason_and_changes_nothing() {
    let (mut xn, root) = setup_copy();
    let r = Parent::Block(root);
    let before = snapshot(&xn);
    // No blocks; past the disk's end; inside XN's own blocks.
    assert_eq!(xn.copy(A, ALICE, r, 110, 100, 0), Err(Error::BadChange { block: 110 }));
    assert_eq!(xn.copy(A, ALICE, r, 250, 100, 10), Err(Error::OutOfRange { block: 259 }));
    assert_eq!(xn.copy(A, ALICE, r, 110, 1, 1), Err(Error::OutOfRange { block: 1 }));
    assert_eq!(xn.copy(A, ALICE, r, 110, u64::MAX, 2), Err(Error::OutOfRange { block: u64::MAX }));
    // Onto a block the parent does not claim (Bob's), or only partly.
    assert_eq!(xn.copy(A, ALICE, r, 150, 100, 1), Err(Error::NotClaimed { block: 150, parent: root }));
    assert_eq!(xn.copy(A, ALICE, r, 112, 100, 4), Err(Error::NotClaimed { block: 114, parent: root }));
    // Through a parent that is not metadata.
    assert_eq!(xn.copy(A, ALICE, Parent::Block(100), 110, 101, 1), Err(Error::NotMetadata { block: 100 }));
    // Onto metadata: it changes only through modify.
    assert_eq!(xn.copy(A, ALICE, r, 60, 100, 1), Err(Error::MetadataNotWritable { block: 60 }));
    // Onto Alice's blocks by Bob, who may read them but not write them.
    xn.bind(B, BOB, r, 100, false).unwrap();
    assert_eq!(xn.copy(B, BOB, r, 110, 100, 1), Err(Error::Denied { block: root }));
    // Onto a cached block: its page would no longer be what the disk holds.
    assert_eq!(xn.copy(A, ALICE, r, 103, 100, 1), Err(Error::AlreadyCached { block: 103 }));
    // From a block not cached, or cached but not bound to the caller
    // (Bob never read 101: its acl was not asked for him).
    assert_eq!(xn.copy(A, ALICE, r, 110, 149, 1), Err(Error::NotCached { block: 149 }));
    assert_eq!(xn.copy(B, BOB, Parent::Block(60), 150, 101, 1), Err(Error::NotBound { block: 101 }));
    // From a block another principal holds locked.
    xn.lock(A, 100).unwrap();
    assert_eq!(xn.copy(B, BOB, Parent::Block(60), 150, 100, 1), Err(Error::Locked { block: 100 }));
    xn.unlock(A, 100).unwrap();
    assert_eq!(snapshot(&xn), before);
    // Bob may copy what he may read into his own block.
    xn.copy(B, BOB, Parent::Block(60), 150, 100, 1).unwrap();
    assert_eq!(on_disk(&xn, 150), &[100u8; BLOCK][..]);
}

#[test]
fn a_copy_writes_the_cache_pages_to_the_new_blocks_in_order() {
    let (mut xn, root) = setup_copy();
    let writes = xn.stats().writes;
    xn.copy(A, ALICE, Parent::Block(root), 110, 100, 4).unwrap();
    // One request; the sources stay cached and clean, the copies are not
    // cached, and the data is on disk.
    assert_eq!(xn.stats().writes, writes + 1);
    for i in 0..4 {
        assert_eq!(on_disk(&xn, 110 + i), &[(100 + i) as u8; BLOCK][..]);
        assert!(xn.entry(110 + i).is_none());
        assert!(!xn.entry(100 + i).unwrap().dirty);
    }
    // Bob fills his block too, from Alice's (he may read it).
    xn.bind(B, BOB, Parent::Block(root), 100, false).unwrap();
    xn.copy(B, BOB, Parent::Block(60), 150, 100, 1).unwrap();
    // Copies are not durable before a flush: their parents are tainted.
    assert!((110..114).all(|b| xn.unstable(b)) && xn.unstable(150));
    assert_eq!(xn.write(B, 60, 1), Err(Error::Tainted { block: 60, child: 150 }));
    xn.flush().unwrap();
    assert!((110..114).all(|b| !xn.unstable(b)) && !xn.unstable(150));
    xn.write(A, 60, 1).unwrap();
    xn.flush().unwrap();
    xn.write(A, root, 1).unwrap();
    xn.flush().unwrap();
    // After a reboot the copy is read like any block.
    let (mut xn, _) = remount(xn);
    let (p, q) = (page(&mut xn, B), page(&mut xn, B));
    xn.read_insert(B, BOB, Parent::Root(0), root, &[p]).unwrap();
    xn.read_insert(B, BOB, Parent::Block(root), 112, &[q]).unwrap();
    assert_eq!(xn.page(B, 112).unwrap(), &[102u8; BLOCK]);
}
