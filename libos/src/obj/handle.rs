//! Typed handles on what lives in the shared arena: open file
//! descriptions and the objects behind them (a pipe's ring, an epoll set,
//! an eventfd's counter ...).
//!
//! The arena is mapped at the same address in every lxrt process
//! (`shared.rs`), so an address in it names the same object in each of
//! them, and a handle stored in the arena (a description's `Object`, an
//! epoll interest's file) means the same thing to whoever reads it. A
//! handle is that address with its type: it is made only by `alloc` or by
//! the `unsafe` `from_raw`, whose caller vouches that it names a live `T`,
//! so code holding one need not cast an untyped pointer or take a raw
//! pointer argument on trust. What a handle does not say is who else is
//! using the object: the big lock (`lock.rs`) keeps the other processes
//! and threads out while a call runs, and `get_mut`'s caller promises that
//! it makes the only reference in use.

use crate::errno::Errno;
use crate::errno::ENOMEM;
use crate::shared;
use core::ptr::NonNull;

/// A live `T` in the shared arena.
#[repr(transparent)]
pub struct Handle<T>(NonNull<T>);

impl<T> Clone for Handle<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Handle<T> {}
impl<T> PartialEq for Handle<T> {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}
impl<T> Eq for Handle<T> {}
impl<T> core::fmt::Debug for Handle<T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Handle({:#x})", self.addr())
    }
}

impl<T> Handle<T> {
    /// `v`, placed in the arena (ENOMEM when it is full).
    pub fn alloc(v: T) -> Result<Self, Errno> {
        let p = NonNull::new(shared::alloc(size_of::<T>(), align_of::<T>()) as *mut T).ok_or(ENOMEM)?;
        // SAFETY: a fresh block big enough and aligned for a T.
        unsafe { p.write(v) };
        Ok(Handle(p))
    }

    /// The handle of the `T` at `p`.
    ///
    /// # Safety
    /// `p` points at a live `T` in the shared arena (or in a pipe's own
    /// frames, `pipemem`), which stays there while the handle is used.
    #[inline]
    pub unsafe fn from_raw(p: *mut T) -> Self {
        // SAFETY: per the caller, not null.
        Handle(unsafe { NonNull::new_unchecked(p) })
    }

    #[inline]
    pub fn as_ptr(self) -> *mut T {
        self.0.as_ptr()
    }

    /// The address (the same in every process).
    #[inline]
    pub fn addr(self) -> u64 {
        self.0.as_ptr() as u64
    }

    /// The object, for reading what may be read while others change it
    /// (its atomics) or what never changes once made.
    ///
    /// # Safety
    /// No `&mut` to the object is in use meanwhile (`get_mut`).
    #[inline]
    pub unsafe fn get<'a>(self) -> &'a T {
        // SAFETY: live by the handle's making; the caller rules out a
        // conflicting `&mut`.
        unsafe { self.0.as_ref() }
    }

    /// The object, to change it.
    ///
    /// # Safety
    /// The big lock is held (or the object is not yet anyone else's), and
    /// no other reference to it is in use while the result is.
    #[inline]
    pub unsafe fn get_mut<'a>(self) -> &'a mut T {
        // SAFETY: live by the handle's making; exclusive per the caller.
        unsafe { &mut *self.0.as_ptr() }
    }

    /// Gives the object's memory back to the arena.
    ///
    /// # Safety
    /// It came from `alloc`, and nobody refers to it any more.
    pub unsafe fn free(self) {
        // SAFETY: passed on from the caller.
        unsafe { shared::free(self.as_ptr() as *mut u8, size_of::<T>(), align_of::<T>()) };
    }
}
