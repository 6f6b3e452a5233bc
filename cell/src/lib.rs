//! Cells for state kept in statics, shared by the kernel, the library OS
//! and the driver glue: one way to reach such state, checked.
//!
//! - [`Global`]: a value reached only inside [`Global::with`], which
//!   refuses nesting (a borrow flag), so no two `&mut` to it ever exist and
//!   none outlives the call. For one CPU, or code that holds a lock around
//!   it: a trap handler that may interrupt a holder uses
//!   [`Global::try_with`] and copes with `None`.
//! - [`Once`]: a value handed out as `&'static mut` exactly once (a table
//!   given to its owner at boot); a second take is refused.
#![no_std]

use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicBool, Ordering};

/// A value reached only through scoped, non-nesting borrows.
pub struct Global<T> {
    busy: AtomicBool,
    value: UnsafeCell<T>,
}

// SAFETY: every access is serialised by `busy`: `try_with` takes it with an
// atomic swap, `peek` reads only while it is clear and writes nothing.
unsafe impl<T: Send> Sync for Global<T> {}

impl<T> Global<T> {
    pub const fn new(v: T) -> Self {
        Global { busy: AtomicBool::new(false), value: UnsafeCell::new(v) }
    }

    /// Runs `f` on the value, or returns `None` if it is already lent (a
    /// nested call). `f` must return: leaving it another way (an abort
    /// that unwinds by hand) would keep the value lent for ever.
    pub fn try_with<R>(&self, f: impl FnOnce(&mut T) -> R) -> Option<R> {
        if self.busy.swap(true, Ordering::Acquire) {
            return None;
        }
        // SAFETY: `busy` was clear and is now set: this is the only
        // reference, and it does not outlive `f`.
        let r = f(unsafe { &mut *self.value.get() });
        self.busy.store(false, Ordering::Release);
        Some(r)
    }

    /// `try_with` where nesting is a bug of the caller.
    pub fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        let lent = || panic!("a Global lent twice: {}", core::any::type_name::<T>());
        self.try_with(f).unwrap_or_else(lent)
    }

    /// Ends a loan whose holder was abandoned: code left by a hand-made
    /// unwind (a driver's crossing left by `abort` from inside a wrapper),
    /// whose frames will never run again.
    pub fn release_abandoned(&self) {
        self.busy.store(false, Ordering::Release);
    }

    /// Runs `f` on the value, shared, or returns `None` if it is lent. It
    /// writes nothing (not even the flag), so it may run where the static
    /// is mapped read-only (a driver's domain); the caller guarantees that
    /// nothing takes the value while `f` runs (interrupts off, one CPU).
    pub fn peek<R>(&self, f: impl FnOnce(&T) -> R) -> Option<R> {
        if self.busy.load(Ordering::Acquire) {
            return None;
        }
        // SAFETY: not lent (checked above) and, as the caller promised,
        // not lent while `f` runs.
        Some(f(unsafe { &*self.value.get() }))
    }
}

/// A value handed out once, for ever: a static table its one owner takes
/// at boot. The value sits at offset 0, so assembly may name the static
/// (`sym`) as the value's address.
#[repr(C)]
pub struct Once<T> {
    value: UnsafeCell<T>,
    taken: AtomicBool,
}

// SAFETY: the value is reachable only through `take`, which hands it out
// at most once.
unsafe impl<T: Send> Sync for Once<T> {}

impl<T> Once<T> {
    pub const fn new(v: T) -> Self {
        Once { value: UnsafeCell::new(v), taken: AtomicBool::new(false) }
    }

    /// The value, the first time; `None` ever after.
    #[allow(clippy::mut_from_ref)] // handed out once: `taken` guards it
    pub fn take(&'static self) -> Option<&'static mut T> {
        if self.taken.swap(true, Ordering::AcqRel) {
            return None;
        }
        // SAFETY: `taken` was clear and is now set for ever: this is the
        // only reference there will be.
        Some(unsafe { &mut *self.value.get() })
    }

    /// The value's address, for assembly that reaches it by name (`sym`)
    /// rather than through its owner.
    pub fn as_ptr(&self) -> *mut T {
        self.value.get()
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::{Global, Once};

    #[test]
    fn with_lends_and_returns() {
        let g = Global::new(5);
        assert_eq!(
            g.with(|v| {
                *v += 1;
                *v
            }),
            6
        );
        assert_eq!(g.with(|v| *v), 6);
    }

    #[test]
    fn nesting_is_refused() {
        let g = Global::new(0u32);
        let inner = g.with(|_| g.try_with(|v| *v));
        assert_eq!(inner, None);
        // And the flag is clear again afterwards.
        assert_eq!(g.try_with(|v| *v), Some(0));
    }

    #[test]
    #[should_panic(expected = "lent twice: u32")]
    fn with_nested_panics() {
        let g = Global::new(0u32);
        g.with(|_| g.with(|_| ()));
    }

    #[test]
    fn an_abandoned_loan_is_released() {
        let g = Global::new(1u32);
        // A holder that never returns: the flag stays set...
        g.busy.store(true, core::sync::atomic::Ordering::Release);
        assert_eq!(g.try_with(|v| *v), None);
        // ...until its abandonment is declared.
        g.release_abandoned();
        assert_eq!(g.try_with(|v| *v), Some(1));
    }

    #[test]
    fn peek_sees_only_an_unlent_value() {
        let g = Global::new(7u32);
        assert_eq!(g.peek(|v| *v), Some(7));
        assert_eq!(g.with(|_| g.peek(|v| *v)), None);
    }

    #[test]
    fn once_hands_out_once() {
        static T: Once<[u8; 4]> = Once::new([1, 2, 3, 4]);
        let a = T.take().expect("first take");
        a[0] = 9;
        assert!(T.take().is_none());
        assert!(T.take().is_none());
        // SAFETY: test only: reads the value the first take changed.
        assert_eq!(unsafe { (*T.as_ptr())[0] }, 9);
    }
}
