//! Writing the program's memory (`src/uaccess.rs`) on the host, over a
//! buffer standing in for it: writes land, a range `vm` refuses fails
//! with EFAULT and is left alone, and lending the memory mutably inside a
//! loan panics instead of making two `&mut` that may overlap.

// uaccess.rs is compiled whole; this test uses part of it.
#![allow(dead_code)]

#[path = "../src/uaccess.rs"]
mod uaccess;

extern crate alloc;

#[path = "../src/errno.rs"]
#[allow(dead_code)]
mod errno;

mod layout {
    pub const fn page_up(a: u64) -> u64 {
        a.next_multiple_of(4096)
    }
}

/// The calling thread's block: each test thread's own, zeroed.
mod entry {
    use std::marker::PhantomData;

    pub struct Local<T>(PhantomData<fn() -> T>);

    impl<T> Local<T> {
        /// # Safety
        /// As the block's: `T` is valid all zero.
        pub const unsafe fn after(_from: usize) -> Local<T> {
            Local(PhantomData)
        }

        pub fn get(&self) -> &'static T {
            thread_local! {
                static PART: usize = Box::leak(vec![0u64; 8].into_boxed_slice()).as_ptr() as usize;
            }
            assert!(size_of::<T>() <= 64);
            // SAFETY: 64 zero bytes of this thread's, aligned to 8, never
            // freed; `T` is valid all zero.
            PART.with(|p| unsafe { &*(*p as *const T) })
        }
    }
}

/// The program's regions: the one buffer the test lends.
mod vm {
    use std::cell::Cell;

    thread_local! {
        pub static REGION: Cell<(u64, u64)> = const { Cell::new((0, 0)) };
    }

    pub fn prepare(ptr: u64, len: u64, _write: bool) -> bool {
        let (start, end) = REGION.get();
        ptr >= start && ptr.checked_add(len).is_some_and(|e| e <= end)
    }
}

/// A buffer of `n` bytes that `vm` lets the test reach.
fn memory(n: usize) -> (Box<[u8]>, u64) {
    let mut b = vec![b'.'; n].into_boxed_slice();
    let at = b.as_mut_ptr() as u64;
    vm::REGION.set((at, at + n as u64));
    (b, at)
}

// One test: the loan's flag is the thread's, and a panic leaves it set
// (as in lxrt, where it ends the process).
#[test]
#[should_panic(expected = "the program's memory borrowed twice")]
fn writes_land_bad_ranges_fail_and_a_nested_loan_panics() {
    let (buf, at) = memory(16);
    uaccess::write(at + 2, b"abc").unwrap();
    uaccess::zero(at + 10, 2).unwrap();
    uaccess::put(at + 12, 0x3433_3231u32).unwrap();
    assert_eq!(uaccess::write(at + 14, b"xyz"), Err(errno::EFAULT), "past the end");
    assert_eq!(uaccess::with_bytes_mut(at + 15, 4, |b| b.fill(b'!')), Err(errno::EFAULT));
    let n = uaccess::with_bytes_mut(at, 2, |b| {
        b.copy_from_slice(b"<>");
        b.len()
    });
    assert_eq!(n, Ok(2));
    assert_eq!(&buf[..], b"<>abc.....\0\x001234");
    let (_buf, at) = memory(8);
    // Without the check, `write` would make a second `&mut` over `outer`.
    let _ = uaccess::with_bytes_mut(at, 8, |outer| {
        let _ = uaccess::write(at, b"x");
        outer[0] = b'y';
    });
}
