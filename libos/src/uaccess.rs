//! Reading and writing the Linux program's memory from lxrt. Every range
//! is checked against the program's regions and made present first: a page
//! fault inside lxrt's handler would end the environment.

use crate::entry::Local;
use crate::errno::Errno;
use crate::errno::{LxResult, EFAULT, ENAMETOOLONG};
use crate::vm;
use alloc::vec::Vec;
use core::cell::Cell;

/// The buffer (address, length) of the program's memory lent to a
/// thread's call (`with_bytes_mut`), made writable again whenever the call
/// retakes the big lock after sleeping (`relend`, `lock::reacquire`).
pub struct Loan {
    lent: Cell<bool>,
    ptr: Cell<u64>,
    len: Cell<u64>,
}

// SAFETY: `Loan` is made of `Cell`s, valid all zero; the lowest part.
pub const LOCAL: Local<Loan> = unsafe { Local::after(0) };

pub fn bytes(ptr: u64, len: u64) -> Result<&'static [u8], Errno> {
    if !vm::prepare(ptr, len, false) {
        return Err(EFAULT);
    }
    if len == 0 {
        return Ok(&[]);
    }
    // SAFETY: `prepare` made every page of the range present and readable.
    Ok(unsafe { core::slice::from_raw_parts(ptr as *const u8, len as usize) })
}

/// The program's memory is lent mutably once at a time per thread: a
/// nested `with_bytes_mut` (or a `write` inside one) panics instead of
/// making a second `&mut` that may overlap the first. The loan is the
/// thread's, not the process's: a call that sleeps inside it (a read on an
/// empty pipe) drops the big lock, and its siblings' calls go on lending
/// their own buffers meanwhile.
fn lend<R>(ptr: u64, len: u64, f: impl FnOnce() -> R) -> R {
    let loan = LOCAL.get();
    if loan.lent.replace(true) {
        lent_twice();
    }
    loan.ptr.set(ptr);
    loan.len.set(len);
    let r = f();
    loan.lent.set(false);
    r
}

/// After a sleep inside a loan (the big lock retaken): a sibling may have
/// forked meanwhile, which made the buffer's pages copy-on-write, so they
/// are made writable again before the call fills them. A sibling may also
/// have unmapped some of them: the loan shrinks to the part before the
/// first page that is gone, and the call fills only that (`still_lent`),
/// answering with a partial count or EFAULT as Linux does (before, lxrt
/// faulted writing there and the kernel ended the thread).
#[inline]
pub fn relend() {
    let loan = LOCAL.get();
    if loan.lent.get() {
        prepare_again(loan.ptr.get(), loan.len.get());
    }
}

#[cold]
#[inline(never)]
fn prepare_again(ptr: u64, len: u64) {
    if vm::prepare(ptr, len, true) {
        return;
    }
    let mut ok = 0;
    while ok < len {
        let chunk = (crate::layout::page_up(ptr + ok + 1) - (ptr + ok)).min(len - ok);
        if !vm::prepare(ptr + ok, chunk, true) {
            break;
        }
        ok += chunk;
    }
    LOCAL.get().len.set(ok);
}

/// After a sleep: the part of `b` (lent by `with_bytes_mut`) that is still
/// the program's to write (`relend` shrank the loan), or EFAULT if none of
/// it is.
pub fn still_lent(b: &mut [u8]) -> Result<&mut [u8], Errno> {
    let loan = LOCAL.get();
    if !loan.lent.get() {
        return Ok(b);
    }
    let end = loan.ptr.get() + loan.len.get();
    let n = end.saturating_sub(b.as_ptr() as u64).min(b.len() as u64) as usize;
    if n == 0 && !b.is_empty() {
        return Err(EFAULT);
    }
    Ok(&mut b[..n])
}

#[cold]
#[inline(never)]
fn lent_twice() -> ! {
    panic!("the program's memory borrowed twice")
}

/// Makes `len` bytes at `ptr` present and writable, or fails with EFAULT.
pub fn writable(ptr: u64, len: u64) -> Result<(), Errno> {
    if vm::prepare(ptr, len, true) {
        Ok(())
    } else {
        Err(EFAULT)
    }
}

/// Runs `f` on the `len` bytes at `ptr`, for code that fills a buffer
/// (a file's read, `getdents`): `f` must not reach the program's memory
/// again.
pub fn with_bytes_mut<R>(ptr: u64, len: u64, f: impl FnOnce(&mut [u8]) -> R) -> Result<R, Errno> {
    writable(ptr, len)?;
    Ok(lend(ptr, len, || {
        if len == 0 {
            return f(&mut []);
        }
        // SAFETY: `writable` made every page of the range present and
        // writable, and the flag makes this the only `&mut` this thread's
        // lxrt holds to the program's memory (another thread's call may
        // fill a buffer of its own meanwhile, as the program's own threads
        // write its memory: lxrt only copies bytes through these slices).
        f(unsafe { core::slice::from_raw_parts_mut(ptr as *mut u8, len as usize) })
    }))
}

/// Copies `src` to `ptr`.
pub fn write(ptr: u64, src: &[u8]) -> Result<(), Errno> {
    with_bytes_mut(ptr, src.len() as u64, |b| b.copy_from_slice(src))
}

/// Zeroes the `len` bytes at `ptr`.
pub fn zero(ptr: u64, len: u64) -> Result<(), Errno> {
    with_bytes_mut(ptr, len, |b| b.fill(0))
}

/// Stores `v` at `ptr`.
pub fn put<T: Copy>(ptr: u64, v: T) -> LxResult {
    with_bytes_mut(ptr, size_of::<T>() as u64, |b| {
        // SAFETY: `b` is exactly the size of T; the program's pointer need
        // not be aligned, so write unaligned.
        unsafe { core::ptr::write_unaligned(b.as_mut_ptr() as *mut T, v) }
    })?;
    Ok(0)
}

/// Loads a `T` from `ptr`.
pub fn get<T: Copy>(ptr: u64) -> Result<T, Errno> {
    let b = bytes(ptr, size_of::<T>() as u64)?;
    // SAFETY: as in `put`; T is plain data in every use.
    Ok(unsafe { core::ptr::read_unaligned(b.as_ptr() as *const T) })
}

/// A NUL-terminated string (without the NUL), at most `max` bytes.
pub fn cstr(ptr: u64, max: usize) -> Result<&'static [u8], Errno> {
    let mut at = ptr;
    loop {
        // Check a page at a time, then scan it.
        let chunk = crate::layout::page_up(at + 1) - at;
        let b = bytes(at, chunk)?;
        if let Some(i) = b.iter().position(|&c| c == 0) {
            let len = at - ptr + i as u64;
            if len as usize >= max {
                return Err(ENAMETOOLONG);
            }
            return bytes(ptr, len);
        }
        at += chunk;
        if (at - ptr) as usize >= max {
            return Err(ENAMETOOLONG);
        }
    }
}

/// A path argument.
pub fn path(ptr: u64) -> Result<&'static [u8], Errno> {
    cstr(ptr, 4096)
}

/// A NULL-terminated array of strings (argv, envp), copied out.
pub fn strings(ptr: u64) -> Result<Vec<Vec<u8>>, Errno> {
    let mut v = Vec::new();
    if ptr == 0 {
        return Ok(v);
    }
    loop {
        let p: u64 = get(ptr + 8 * v.len() as u64)?;
        if p == 0 {
            return Ok(v);
        }
        v.push(cstr(p, 128 * 1024)?.to_vec());
    }
}
