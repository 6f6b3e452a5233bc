//! Access to an environment's memory from the kernel, by walking its page
//! tables: every page must be mapped with the user bit (and writable, for
//! writes) or the call fails with `BadPointer` before anything is copied.
//! The kernel never dereferences a user address directly.

use crate::frames::Frame;
use crate::mm::{self, PhysTables};
use crate::pagetable::{self, USER, WRITABLE};
use abi::Error;

/// Largest buffer one system call may pass.
pub const MAX_LEN: u64 = 1 << 20;

/// Runs `f` on each piece of `[va, va+len)` as kernel pointers, after
/// checking the whole range.
fn chunks(
    pml4: Frame,
    va: u64,
    len: u64,
    write: bool,
    mut f: impl FnMut(*mut u8, usize),
) -> Result<(), Error> {
    if len > MAX_LEN {
        return Err(Error::BadLength);
    }
    let end = va.checked_add(len).ok_or(Error::BadPointer)?;
    if end > abi::layout::EXPOSED_BASE + (1 << 39) {
        return Err(Error::BadPointer);
    }
    let need = if write { USER | WRITABLE } else { USER };
    for pass in 0..2 {
        let mut at = va;
        while at < end {
            let pte = pagetable::lookup(&mut PhysTables, pml4, at & !4095).ok_or(Error::BadPointer)?;
            if pte & need != need {
                return Err(Error::BadPointer);
            }
            let n = (4096 - (at & 4095)).min(end - at);
            if pass == 1 {
                let pa = (pte & pagetable::ADDR_MASK) + (at & 4095);
                f(mm::phys::<u8>(pa), n as usize);
            }
            at += n;
        }
    }
    Ok(())
}

/// Copies user memory at `va` into `buf`.
pub fn read(pml4: Frame, va: u64, buf: &mut [u8]) -> Result<(), Error> {
    let mut off = 0;
    chunks(pml4, va, buf.len() as u64, false, |p, n| {
        // SAFETY: `p..p+n` is a checked user page seen through the physical
        // window; `buf` is kernel memory that cannot overlap it.
        unsafe { core::ptr::copy_nonoverlapping(p, buf[off..].as_mut_ptr(), n) };
        off += n;
    })
}

/// Copies `data` into user memory at `va`.
pub fn write(pml4: Frame, va: u64, data: &[u8]) -> Result<(), Error> {
    let mut off = 0;
    chunks(pml4, va, data.len() as u64, true, |p, n| {
        // SAFETY: as in `read`, with the page checked writable.
        unsafe { core::ptr::copy_nonoverlapping(data[off..].as_ptr(), p, n) };
        off += n;
    })
}

/// Checks that `[va, va+len)` is mapped writable by user code.
pub fn check_writable(pml4: Frame, va: u64, len: u64) -> Result<(), Error> {
    chunks(pml4, va, len, true, |_, _| {})
}

/// Calls `f` with each checked, readable piece of user memory.
pub fn with_bytes(pml4: Frame, va: u64, len: u64, mut f: impl FnMut(&[u8])) -> Result<(), Error> {
    chunks(pml4, va, len, false, |p, n| {
        // SAFETY: a checked user page through the physical window, only
        // read for the duration of the call.
        f(unsafe { core::slice::from_raw_parts(p, n) })
    })
}

/// Reads a plain-old-data value from user memory.
pub fn read_value<T: Copy + Default>(pml4: Frame, va: u64) -> Result<T, Error> {
    let mut v = T::default();
    // SAFETY: T is Copy plain data (register sets); any byte pattern read
    // into it is a valid value for the integer fields it holds.
    let bytes =
        unsafe { core::slice::from_raw_parts_mut(&mut v as *mut T as *mut u8, core::mem::size_of::<T>()) };
    read(pml4, va, bytes)?;
    Ok(v)
}

/// Writes a plain-old-data value to user memory.
pub fn write_value<T: Copy>(pml4: Frame, va: u64, v: &T) -> Result<(), Error> {
    // SAFETY: viewing a Copy value's bytes is always valid.
    let bytes = unsafe { core::slice::from_raw_parts(v as *const T as *const u8, core::mem::size_of::<T>()) };
    write(pml4, va, bytes)
}
