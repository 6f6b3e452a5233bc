//! A word of this process's state kept by the module that uses it: a
//! `Cell` in a static, read and written by value (`get`, `set`), so no
//! reference into it is ever lent and two uses cannot alias. The hot paths
//! (every call's signal check, `getpid`, the lock) pay a load.

use core::cell::Cell;

pub struct Word<T: Copy>(Cell<T>);

// SAFETY: the threads of a process run lxrt one at a time: each Linux call
// and fault takes the big lock (`lock.rs`) and drops it only where it
// waits, and lxrt's handler is never re-entered on one thread. The words a
// call reads without the lock (`getpid`'s, the lock's own) are written only
// by their own thread, or before a second thread exists.
unsafe impl<T: Copy> Sync for Word<T> {}

impl<T: Copy> Word<T> {
    pub const fn new(v: T) -> Word<T> {
        Word(Cell::new(v))
    }
}

impl<T: Copy> core::ops::Deref for Word<T> {
    type Target = Cell<T>;

    #[inline]
    fn deref(&self) -> &Cell<T> {
        &self.0
    }
}
