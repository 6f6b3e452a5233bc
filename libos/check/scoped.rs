//! The scoped borrow (`src/scoped.rs`, the library's only way to its
//! per-process tables) on the host: one borrow at a time, a nested one
//! panics, and the value is free again after each.

#[path = "../src/scoped.rs"]
mod scoped;

use scoped::Scoped;

#[test]
fn borrows_one_after_another_see_each_others_writes() {
    let s = Scoped::new("a counter", 0u32);
    for _ in 0..3 {
        s.with(|n| *n += 1);
    }
    assert_eq!(s.with(|n| *n), 3);
    assert!(!s.borrowed());
}

#[test]
fn the_flag_is_set_only_inside() {
    let s = Scoped::new("a flag", ());
    assert!(!s.borrowed());
    s.with(|_| assert!(s.borrowed()));
    assert!(!s.borrowed());
}

#[test]
#[should_panic(expected = "the value borrowed twice")]
fn a_nested_borrow_panics() {
    let s = Scoped::new("the value", 1u64);
    s.with(|outer| {
        // Without the check this would be a second `&mut` aliasing `outer`.
        let inner = s.with(|inner| *inner);
        *outer += inner;
    });
}
