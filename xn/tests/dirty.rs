//! `mark_dirty`: a library says it stored into data blocks through its
//! writable bindings (the kernel does not see stores), so a write-back by
//! anyone, after it has gone, finds them. Attack first: only blocks bound
//! writable to the caller, never metadata, never under another's lock;
//! a refusal marks none.

mod common;

use common::*;
use xn::{Error, Parent};

/// Alice's data blocks 100-103 (written, durable, clean, cached) and her
/// node 60.
fn setup_dirty() -> (TestXn, u64) {
    let (mut xn, _, root) = setup();
    alice_files(&mut xn, root);
    xn.sync_all(A).unwrap();
    (xn, root)
}

fn dirty(xn: &TestXn) -> Vec<u64> {
    xn.registry().filter(|(_, e)| e.dirty).map(|(b, _)| b).collect()
}

#[test]
fn only_blocks_bound_writable_to_the_caller_are_marked() {
    let (mut xn, root) = setup_dirty();
    assert_eq!(dirty(&xn), Vec::<u64>::new());
    // No blocks; a run that wraps.
    assert_eq!(xn.mark_dirty(A, 100, 0), Err(Error::BadChange { block: 100 }));
    assert_eq!(xn.mark_dirty(A, u64::MAX, 2), Err(Error::BadChange { block: u64::MAX }));
    // Not cached.
    assert_eq!(xn.mark_dirty(A, 104, 1), Err(Error::NotCached { block: 104 }));
    // Bob never bound them; bound for reading is not enough.
    assert_eq!(xn.mark_dirty(B, 100, 1), Err(Error::NotBound { block: 100 }));
    xn.bind(B, BOB, Parent::Block(root), 100, false).unwrap();
    assert_eq!(xn.mark_dirty(B, 100, 1), Err(Error::NotBound { block: 100 }));
    // Metadata is never bound writable, so never marked this way.
    assert_eq!(xn.mark_dirty(A, 60, 1), Err(Error::NotBound { block: 60 }));
    // A run whose last block is locked by another: none marked.
    xn.bind(B, BOB, Parent::Block(root), 103, false).unwrap();
    xn.lock(B, 103).unwrap();
    assert_eq!(xn.mark_dirty(A, 100, 4), Err(Error::Locked { block: 103 }));
    assert_eq!(dirty(&xn), Vec::<u64>::new());
    xn.unlock(B, 103).unwrap();
    // Alice, bound writable since her inserts: marked, and written back by
    // anyone's sync after she has gone.
    xn.mark_dirty(A, 100, 4).unwrap();
    assert_eq!(dirty(&xn), vec![100, 101, 102, 103]);
    let writes = xn.stats().writes;
    xn.release(A);
    xn.sync_all(B).unwrap();
    assert_eq!(dirty(&xn), Vec::<u64>::new());
    assert!(xn.stats().writes > writes);
}
