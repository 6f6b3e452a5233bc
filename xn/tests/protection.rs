//! XN's protection rules, attack first: every refused request names its
//! reason and changes nothing.

mod common;

use common::*;
use xn::{Change, Error, Pages, Parent, TemplateError, Udf};

/// What a refused call must leave alone.
fn snapshot(xn: &TestXn, node: u64) -> (Vec<u8>, Vec<bool>, Option<Vec<xn::Claim>>) {
    let bytes = xn.pages().bytes(xn.entry(node).unwrap().page).unwrap().to_vec();
    let free = (0..xn.nblocks()).map(|b| xn.is_free(b)).collect();
    (bytes, free, xn.claims(node).map(|c| c.to_vec()))
}

#[test]
fn a_library_allocates_only_free_blocks() {
    let (mut xn, _, root) = setup();
    alloc(&mut xn, ALICE, A, root, 0, 60, 1, NODE).unwrap();
    let p = page_with_owner(&mut xn, A, BOB.uid);
    xn.insert_new(A, ALICE, Parent::Block(root), 60, p).unwrap();
    alloc(&mut xn, BOB, B, 60, 0, 100, 4, DATA).unwrap();
    assert!(!xn.is_free(101));
    let before = snapshot(&xn, root);
    // Claim a block already allocated (another node's, another user's).
    assert_eq!(alloc(&mut xn, ALICE, A, root, 1, 102, 1, DATA), Err(Error::NotFree { block: 102 }));
    // Claim XN's own blocks, past the disk, or as an unknown template.
    assert_eq!(
        alloc(&mut xn, ALICE, A, root, 1, 3, 1, DATA),
        Err(Error::BadClaim { block: root, slot: 1, why: xn::ClaimError::Reserved })
    );
    assert_eq!(
        alloc(&mut xn, ALICE, A, root, 1, 250, 10, DATA),
        Err(Error::BadClaim { block: root, slot: 1, why: xn::ClaimError::PastEnd })
    );
    assert_eq!(
        alloc(&mut xn, ALICE, A, root, 1, 200, 1, 7),
        Err(Error::BadClaim { block: root, slot: 1, why: xn::ClaimError::UnknownTemplate })
    );
    // Two slots of one node claiming one block.
    assert_eq!(alloc(&mut xn, ALICE, A, root, 1, 60, 1, DATA), Err(Error::Overlap { block: root, at: 60 }));
    assert_eq!(snapshot(&xn, root), before);
}

#[test]
fn the_change_must_do_what_it_declares() {
    let (mut xn, _, root) = setup();
    let s = slot(100, 2, DATA);
    let ch = [Change { block: root, off: slot_off(0), bytes: &s }];
    let before = snapshot(&xn, root);
    // Allocates 100-101 but declares only 100.
    assert_eq!(xn.modify(A, ALICE, &ch, &[(100, 1)], &[]), Err(Error::Undeclared { block: 101 }));
    // Declares 100-102 but allocates only 100-101.
    assert_eq!(xn.modify(A, ALICE, &ch, &[(100, 3)], &[]), Err(Error::NotDone { block: 102 }));
    // Declares a free of a block it does not hold.
    assert_eq!(xn.modify(A, ALICE, &ch, &[(100, 2)], &[(150, 1)]), Err(Error::NotDone { block: 150 }));
    assert_eq!(snapshot(&xn, root), before);
    xn.modify(A, ALICE, &ch, &[(100, 2)], &[]).unwrap();
    assert_eq!(xn.claimants(100), 1);
}

#[test]
fn a_library_frees_only_what_it_owns() {
    let (mut xn, _, root) = setup();
    alloc(&mut xn, ALICE, A, root, 0, 100, 1, DATA).unwrap();
    // Slot 1 is empty: "freeing" block 100 through it frees nothing.
    let ch = [Change { block: root, off: slot_off(1), bytes: &[0u8; 16] }];
    assert_eq!(xn.modify(A, ALICE, &ch, &[], &[(100, 1)]), Err(Error::NotDone { block: 100 }));
    free(&mut xn, ALICE, A, root, 0, 100, 1).unwrap();
    assert_eq!(xn.claimants(100), 0);
}

#[test]
fn acl_decides_who_may_change_and_bind() {
    let (mut xn, _, root) = setup();
    let before = snapshot(&xn, root);
    assert_eq!(alloc(&mut xn, BOB, B, root, 0, 100, 1, DATA), Err(Error::Denied { block: root }));
    // Bob may not make the node his either, nor may Alice give it away.
    let ch = [Change { block: root, off: 0, bytes: &BOB.uid.to_le_bytes() }];
    assert_eq!(xn.modify(B, BOB, &ch, &[], &[]), Err(Error::Denied { block: root }));
    assert_eq!(xn.modify(A, ALICE, &ch, &[], &[]), Err(Error::Denied { block: root }));
    assert_eq!(snapshot(&xn, root), before);
    // Bob may read Alice's data, not write it.
    alloc(&mut xn, ALICE, A, root, 0, 100, 1, DATA).unwrap();
    let p = page(&mut xn, A);
    xn.insert_new(A, ALICE, Parent::Block(root), 100, p).unwrap();
    xn.page_mut(A, 100).unwrap()[0] = 42;
    assert_eq!(xn.page(B, 100), Err(Error::NotBound { block: 100 }));
    xn.bind(B, BOB, Parent::Block(root), 100, false).unwrap();
    assert_eq!(xn.page(B, 100).unwrap()[0], 42);
    assert_eq!(xn.page_mut(B, 100).map(|_| ()), Err(Error::NotBound { block: 100 }));
    assert_eq!(xn.bind(B, BOB, Parent::Block(root), 100, true), Err(Error::Denied { block: root }));
}

#[test]
fn metadata_is_never_writable_and_fresh_metadata_claims_nothing() {
    let (mut xn, base, root) = setup();
    alloc(&mut xn, ALICE, A, root, 0, 60, 1, NODE).unwrap();
    assert_eq!(xn.allocated(60), Some(base + NODE));
    // A fresh node whose page already claims Bob's block.
    let p = page_with_owner(&mut xn, A, ALICE.uid);
    xn.pages_mut().bytes_mut(p).unwrap()[slot_off(0)..slot_off(1)].copy_from_slice(&slot(61, 1, DATA));
    assert_eq!(xn.insert_new(A, ALICE, Parent::Block(root), 60, p), Err(Error::FreshClaims { block: 60 }));
    new_node(&mut xn, ALICE, A, root, 60);
    assert_eq!(
        xn.bind(A, ALICE, Parent::Block(root), 60, true),
        Err(Error::MetadataNotWritable { block: 60 })
    );
    assert_eq!(xn.page_mut(A, 60).map(|_| ()), Err(Error::NotBound { block: 60 }));
    // A block that has been written is read from disk, never inserted.
    xn.write(A, 60, 1).unwrap();
    xn.flush().unwrap();
    xn.write(A, root, 1).unwrap();
    let q = page(&mut xn, A);
    let p60 = xn.entry(60).unwrap().page;
    assert_eq!(xn.evict(B, 60), Err(Error::NotBound { block: 60 }));
    assert_eq!(xn.evict(A, 60), Ok(p60));
    assert_eq!(xn.insert_new(A, ALICE, Parent::Block(root), 60, q), Err(Error::NotFresh { block: 60 }));
    let r = page(&mut xn, B);
    xn.read_insert(B, BOB, Parent::Block(root), 60, &[r]).unwrap();
    assert_eq!(xn.entry(60).unwrap().owner, B);
}

#[test]
fn read_and_insert_checks_parent_pages_and_state() {
    let (mut xn, _, root) = setup();
    alloc(&mut xn, ALICE, A, root, 0, 100, 2, DATA).unwrap();
    let mine = page(&mut xn, A);
    let theirs = page(&mut xn, B);
    // Not claimed by the parent, another's page, a never-written block.
    assert_eq!(
        xn.read_insert(A, ALICE, Parent::Block(root), 150, &[mine]),
        Err(Error::NotClaimed { block: 150, parent: root })
    );
    assert_eq!(
        xn.read_insert(A, ALICE, Parent::Block(root), 100, &[mine]),
        Err(Error::Uninitialised { block: 100 })
    );
    let fresh = [page(&mut xn, A), page(&mut xn, A)];
    xn.insert_new(A, ALICE, Parent::Block(root), 100, fresh[0]).unwrap();
    xn.insert_new(A, ALICE, Parent::Block(root), 101, fresh[1]).unwrap();
    xn.write(A, 100, 2).unwrap();
    assert_eq!(xn.evict(A, 100), Ok(fresh[0]));
    assert_eq!(xn.evict(A, 101), Ok(fresh[1]));
    assert_eq!(xn.read_insert(A, ALICE, Parent::Block(root), 100, &[theirs]), Err(Error::BadPage));
    assert_eq!(xn.read_insert(A, ALICE, Parent::Block(root), 100, &[mine, mine]), Err(Error::BadPage));
    // Past the claim's end.
    let two = [mine, page(&mut xn, A), page(&mut xn, A)];
    assert_eq!(
        xn.read_insert(A, ALICE, Parent::Block(root), 100, &two),
        Err(Error::NotClaimed { block: 102, parent: root })
    );
}

#[test]
fn a_locked_block_is_left_alone() {
    let (mut xn, _, root) = setup();
    xn.lock(A, root).unwrap();
    assert_eq!(alloc(&mut xn, ALICE, B, root, 0, 100, 1, DATA), Err(Error::Locked { block: root }));
    assert_eq!(xn.write(B, root, 1), Err(Error::Locked { block: root }));
    assert_eq!(xn.unlock(B, root), Err(Error::Locked { block: root }));
    alloc(&mut xn, ALICE, A, root, 0, 100, 1, DATA).unwrap();
    xn.release(A);
    alloc(&mut xn, ALICE, B, root, 1, 101, 1, DATA).unwrap();
}

#[test]
fn malformed_templates_are_refused() {
    let (mut xn, _, _) = setup();
    let mut bad = specs();
    bad[0].name = "other".into();
    bad[1].name = "other.data".into();
    // A loop in owns.
    let mut a = bpf::Asm::new();
    let top = a.label();
    a.bind(top).mov64_imm(0, 0).ja(top).exit();
    bad[0].owns = a.finish().unwrap();
    match xn.install(&bad) {
        Err(Error::BadTemplate { index: 0, why: TemplateError::Rejected(Udf::Owns, r) }) => {
            assert_eq!(r.reason, bpf::Reason::BackwardJump { target: 0 })
        }
        other => panic!("loop accepted: {other:?}"),
    }
    let mut dup = specs();
    dup[1].name = "x.data".into();
    assert_eq!(xn.install(&dup), Err(Error::BadTemplate { index: 0, why: TemplateError::DuplicateName }));
    let mut coded = specs();
    coded[0].name = "y".into();
    coded[1].name = "y.data".into();
    coded[1].owns = owns();
    assert_eq!(xn.install(&coded), Err(Error::BadTemplate { index: 1, why: TemplateError::WrongFunctions }));
    coded[1].owns.clear();
    coded[0].slots = 5000;
    assert_eq!(xn.install(&coded), Err(Error::BadTemplate { index: 0, why: TemplateError::TooManySlots }));
    coded[0].slots = 1;
    coded[0].name = "has space".into();
    assert_eq!(xn.install(&coded), Err(Error::BadTemplate { index: 0, why: TemplateError::BadName }));
    assert_eq!(xn.install(&[]), Err(Error::BadTemplate { index: 0, why: TemplateError::BadGroup }));
    assert!(xn.template_id("other").is_none() && xn.template_id("y").is_none());
    // The installed ones survive a reboot, unchanged.
    let (xn, _) = remount(xn);
    assert_eq!(xn.template_id("tfs.node"), Some(1));
    assert_eq!(xn.template(2).unwrap().slots, 0);
}

#[test]
fn a_move_transfers_ownership_but_not_into_its_own_subtree() {
    let (mut xn, _, root) = setup();
    alloc(&mut xn, ALICE, A, root, 0, 60, 1, NODE).unwrap();
    new_node(&mut xn, ALICE, A, root, 60);
    alloc(&mut xn, ALICE, A, root, 1, 61, 1, NODE).unwrap();
    new_node(&mut xn, ALICE, A, root, 61);
    alloc(&mut xn, ALICE, A, 60, 0, 100, 3, DATA).unwrap();
    // Move 100-102 from node 60 to node 61 in one request.
    let s = slot(100, 3, DATA);
    let ch = [
        Change { block: 60, off: slot_off(0), bytes: &[0; 16] },
        Change { block: 61, off: slot_off(5), bytes: &s },
    ];
    xn.modify(A, ALICE, &ch, &[], &[]).unwrap();
    assert_eq!(xn.claimants(101), 1);
    assert_eq!(xn.claims(61).unwrap()[0].start, 100);
    // Node 61 may not move under itself, nor may half a move pass.
    let s61 = slot(61, 1, NODE);
    let cyc = [
        Change { block: root, off: slot_off(1), bytes: &[0; 16] },
        Change { block: 61, off: slot_off(9), bytes: &s61 },
    ];
    assert_eq!(xn.modify(A, ALICE, &cyc, &[], &[]), Err(Error::Cycle { block: 61 }));
    let half = [Change { block: 60, off: slot_off(3), bytes: &s }];
    assert_eq!(xn.modify(A, ALICE, &half, &[], &[]), Err(Error::Undeclared { block: 100 }));
}

#[test]
fn a_page_already_caching_a_block_cannot_cache_another() {
    let (mut xn, _, root) = setup();
    alloc(&mut xn, ALICE, A, root, 0, 100, 1, DATA).unwrap();
    // The root's own page, offered as the fresh data block's page: a
    // write binding to the data would then write the root's metadata.
    let root_page = xn.entry(root).unwrap().page;
    assert_eq!(xn.insert_new(A, ALICE, Parent::Block(root), 100, root_page), Err(Error::BadPage));
    let p = page(&mut xn, A);
    xn.insert_new(A, ALICE, Parent::Block(root), 100, p).unwrap();
    xn.write(A, 100, 1).unwrap();
    xn.evict(A, 100).unwrap();
    assert_eq!(xn.read_insert(A, ALICE, Parent::Block(root), 100, &[root_page]), Err(Error::BadPage));
    // Its own page back is fine once evicted.
    xn.read_insert(A, ALICE, Parent::Block(root), 100, &[p]).unwrap();
}
