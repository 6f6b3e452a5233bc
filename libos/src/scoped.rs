//! A value reached only through a scoped borrow (the pattern of Theseus'
//! `with_current_task`): `with(|v| ...)` hands the closure the one `&mut`
//! to the value, and a second `with` while the first is running panics
//! instead of making two references that alias. The check is a flag test
//! and two stores.
//!
//! Closures should only read and write the value: one that calls code
//! which borrows the same value again is the bug this catches, and one that
//! never returns (exit) leaves it borrowed.

use core::cell::{Cell, UnsafeCell};

pub struct Scoped<T> {
    value: UnsafeCell<T>,
    borrowed: Cell<bool>,
    /// What the value is, for the panic message.
    name: &'static str,
}

// SAFETY: a process's threads share its `Scoped` statics, but run lxrt's
// code one at a time: each Linux call and fault takes the big lock
// (`lock.rs`; `lock::guarded` outside calls once a second thread exists)
// and drops it only where it waits, with no borrow live; and one thread's
// handler is never re-entered (the kernel enters it only when it is not
// busy). So no two threads use a `Scoped` at once, and the flag makes
// each borrow exclusive. The lock-free looks of `native::poll` and
// `native::select` take the lock first in a threaded process.
unsafe impl<T> Sync for Scoped<T> {}

impl<T> Scoped<T> {
    pub const fn new(name: &'static str, value: T) -> Scoped<T> {
        Scoped { value: UnsafeCell::new(value), borrowed: Cell::new(false), name }
    }

    /// Runs `f` on the value; panics if it is borrowed already.
    #[inline]
    pub fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        if self.borrowed.replace(true) {
            reentered(self.name);
        }
        // SAFETY: the flag was clear, so no other reference to the value
        // exists until it is cleared again below.
        let r = f(unsafe { &mut *self.value.get() });
        self.borrowed.set(false);
        r
    }

    /// Whether a borrow is in progress (fork must not copy one).
    pub fn borrowed(&self) -> bool {
        self.borrowed.get()
    }
}

#[cold]
#[inline(never)]
fn reentered(name: &str) -> ! {
    panic!("{name} borrowed twice")
}
