//! `bind_run`: one call binds a run of a file's cached data blocks (paper
//! 000 §4.3.3: the access check at bind time, once for the run). Attack
//! first: a run the parent does not claim, one past the extent, an empty
//! or too long one, blocks not cached, metadata bound writable, a
//! credential the parent's `acl` refuses; a refusal binds none.

mod common;

use common::*;
use xn::{Error, Parent, Principal, MAX_RUN};

/// A third principal, bound to nothing before each attack.
const C: Principal = 9;

/// Alice's cached data blocks 100-103 (slot 0), uncached data 104-105
/// (slot 3, right after them on disk), her node 60 (slot 2).
fn setup_run() -> (TestXn, u64) {
    let (mut xn, _, root) = setup();
    alice_files(&mut xn, root);
    alloc(&mut xn, ALICE, A, root, 3, 104, 2, DATA).unwrap();
    for b in 104..106 {
        let p = page(&mut xn, A);
        xn.insert_new(A, ALICE, Parent::Block(root), b, p).unwrap();
    }
    xn.sync_all(A).unwrap();
    for b in 104..106 {
        xn.evict(A, b).unwrap();
    }
    (xn, root)
}

fn bound(xn: &TestXn, who: Principal) -> Vec<u64> {
    (90..120).filter(|&b| xn.page(who, b).is_ok()).collect()
}

#[test]
fn a_refused_run_binds_nothing() {
    let (mut xn, root) = setup_run();
    let r = Parent::Block(root);
    assert_eq!(xn.bind_run(C, BOB, r, 100, 0, false), Err(Error::BadChange { block: 100 }));
    assert_eq!(xn.bind_run(C, BOB, r, 100, MAX_RUN + 1, false), Err(Error::BadChange { block: 100 }));
    assert_eq!(
        xn.bind_run(C, BOB, r, u64::MAX - 1, 4, false),
        Err(Error::OutOfRange { block: u64::MAX - 1 })
    );
    // Node 60 claims none of them; the root claims nothing past 105.
    assert_eq!(
        xn.bind_run(C, BOB, Parent::Block(60), 100, 2, false),
        Err(Error::NotClaimed { block: 100, parent: 60 })
    );
    assert_eq!(xn.bind_run(C, BOB, r, 104, 4, false), Err(Error::NotClaimed { block: 106, parent: root }));
    // Claimed, but 104 is not cached.
    assert_eq!(xn.bind_run(C, BOB, r, 102, 4, false), Err(Error::NotCached { block: 104 }));
    // Metadata is never bound writable; Bob may not write Alice's data.
    assert_eq!(xn.bind_run(C, ALICE, r, 60, 1, true), Err(Error::MetadataNotWritable { block: 60 }));
    assert_eq!(xn.bind_run(C, BOB, r, 100, 4, true), Err(Error::Denied { block: root }));
    assert_eq!(bound(&xn, C), Vec::<u64>::new());
    assert_eq!(xn.mark_dirty(C, 100, 1), Err(Error::NotBound { block: 100 }));
}

#[test]
fn a_run_is_bound_with_one_check() {
    let (mut xn, root) = setup_run();
    let r = Parent::Block(root);
    xn.bind_run(C, BOB, r, 100, 4, false).unwrap();
    assert_eq!(bound(&xn, C), vec![100, 101, 102, 103]);
    // Read-only: not writable, not to be marked dirty.
    assert_eq!(xn.mark_dirty(C, 100, 4), Err(Error::NotBound { block: 100 }));
    // Alice's credential: writable, so her stores can be marked.
    xn.bind_run(C, ALICE, r, 100, 4, true).unwrap();
    xn.mark_dirty(C, 100, 4).unwrap();
    assert!(xn.page_mut(C, 103).is_ok());
}
