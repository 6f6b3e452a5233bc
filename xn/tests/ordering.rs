//! Ordered writes (paper 000 §4.3.2): tainted blocks, the will-free list,
//! temporary roots, and what a reboot keeps.

mod common;

use common::*;
use xn::{Error, HostPages, Parent};

#[test]
fn a_pointer_to_an_uninitialised_block_is_not_written() {
    let (mut xn, _, root) = setup();
    alloc(&mut xn, ALICE, A, root, 0, 60, 1, NODE).unwrap();
    new_node(&mut xn, ALICE, A, root, 60);
    alloc(&mut xn, ALICE, A, 60, 0, 100, 1, DATA).unwrap();
    assert_eq!(xn.write(A, root, 1), Err(Error::Tainted { block: root, child: 60 }));
    assert_eq!(xn.write(A, 60, 1), Err(Error::Tainted { block: 60, child: 100 }));
    let p = page(&mut xn, A);
    xn.insert_new(A, ALICE, Parent::Block(60), 100, p).unwrap();
    xn.write(A, 100, 1).unwrap();
    // Written but not flushed: the disk may still reorder it.
    assert_eq!(xn.write(A, 60, 1), Err(Error::Tainted { block: 60, child: 100 }));
    xn.flush().unwrap();
    xn.write(A, 60, 1).unwrap();
    assert_eq!(xn.write(A, root, 1), Err(Error::Tainted { block: root, child: 60 }));
    xn.flush().unwrap();
    xn.write(A, root, 1).unwrap();
    xn.flush().unwrap();
    let (xn, report) = remount(xn);
    assert!(report.conflicts.is_empty());
    assert_eq!((xn.claimants(60), xn.claimants(100)), (1, 1));
}

#[test]
fn a_temporary_root_has_no_ordering_rules_and_no_future() {
    let (mut xn, base, _) = setup();
    let p = page_with_owner(&mut xn, A, ALICE.uid);
    xn.add_root(A, "scratch", 50, base + NODE, &[p], false).unwrap();
    alloc(&mut xn, ALICE, A, 50, 0, 120, 2, DATA).unwrap();
    xn.write(A, 50, 1).unwrap();
    xn.flush().unwrap();
    let (xn, _) = remount(xn);
    assert!(xn.root("scratch").is_none());
    assert!(xn.is_free(50) && xn.is_free(120));
}

#[test]
fn a_freed_block_waits_until_no_disk_pointer_names_it() {
    let (mut xn, _, root) = setup();
    alloc(&mut xn, ALICE, A, root, 0, 100, 1, DATA).unwrap();
    let p = page(&mut xn, A);
    xn.insert_new(A, ALICE, Parent::Block(root), 100, p).unwrap();
    xn.sync_all(A).unwrap();
    let released = free(&mut xn, ALICE, A, root, 0, 100, 1).unwrap();
    assert_eq!(released, [p]);
    assert!(xn.will_free(100) && !xn.is_free(100));
    assert_eq!(alloc(&mut xn, ALICE, A, root, 1, 100, 1, DATA), Err(Error::NotFree { block: 100 }));
    xn.write(A, root, 1).unwrap();
    // Written, not flushed: the old root may still be what survives.
    assert!(xn.will_free(100));
    xn.flush().unwrap();
    assert!(xn.is_free(100));
    alloc(&mut xn, ALICE, A, root, 1, 100, 1, DATA).unwrap();
}

#[test]
fn a_freed_block_never_written_is_free_at_once() {
    let (mut xn, _, root) = setup();
    alloc(&mut xn, ALICE, A, root, 0, 100, 1, DATA).unwrap();
    free(&mut xn, ALICE, A, root, 0, 100, 1).unwrap();
    assert!(xn.is_free(100));
}

#[test]
fn a_freed_subtree_releases_its_disk_claims() {
    let (mut xn, _, root) = setup();
    alloc(&mut xn, ALICE, A, root, 0, 60, 1, NODE).unwrap();
    new_node(&mut xn, ALICE, A, root, 60);
    alloc(&mut xn, ALICE, A, 60, 0, 100, 2, DATA).unwrap();
    for b in [100, 101] {
        let p = page(&mut xn, A);
        xn.insert_new(A, ALICE, Parent::Block(60), b, p).unwrap();
    }
    xn.sync_all(A).unwrap();
    // Freeing node 60 from the root frees its subtree with it; all of it
    // waits until the root's new version is durable.
    free(&mut xn, ALICE, A, root, 0, 60, 1).unwrap();
    assert_eq!(xn.claimants(100), 0);
    assert!(xn.will_free(60) && xn.will_free(100) && xn.will_free(101));
    assert_eq!(alloc(&mut xn, ALICE, A, root, 1, 100, 1, DATA), Err(Error::NotFree { block: 100 }));
    xn.write(A, root, 1).unwrap();
    xn.flush().unwrap();
    assert!(xn.is_free(60) && xn.is_free(100) && xn.is_free(101));
}

#[test]
fn after_a_crash_only_durable_allocations_remain() {
    let (mut xn, _, root) = setup();
    alloc(&mut xn, ALICE, A, root, 0, 100, 1, DATA).unwrap();
    let p = page(&mut xn, A);
    xn.insert_new(A, ALICE, Parent::Block(root), 100, p).unwrap();
    xn.sync_all(A).unwrap();
    alloc(&mut xn, ALICE, A, root, 1, 101, 1, DATA).unwrap();
    // "Crash": reboot from the disk as written.
    let (disk, _) = xn.into_parts();
    let (xn, report) = TestXn::mount(disk, HostPages::new()).unwrap();
    assert_eq!(report.allocated_blocks, 2);
    assert!(!xn.is_free(100) && xn.is_free(101));
}

#[test]
fn sync_all_orders_a_deep_tree() {
    let (mut xn, _, root) = setup();
    let mut parent = root;
    for b in 60..70 {
        alloc(&mut xn, ALICE, A, parent, 0, b, 1, NODE).unwrap();
        new_node(&mut xn, ALICE, A, parent, b);
        parent = b;
    }
    xn.sync_all(A).unwrap();
    let (xn, _) = remount(xn);
    assert!((60..70).all(|b| xn.claimants(b) == 1));
    assert_eq!(xn.parent(69), Some(Parent::Block(68)));
}
