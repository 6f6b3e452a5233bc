//! Copying memory eight bytes per step (`rep movsq`), then the odd bytes.
//! The `memcpy` this target gets is `rep movsb`, one byte per step; that is
//! fast on current CPUs, but QEMU's instruction count (the benchmarks'
//! clock) charges every step, so the library's bulk copies (pipe rings,
//! pages at fork and copy-on-write) use words.

/// Copies `src` into `dst` (the same length, not overlapping). Short
/// copies take the string moves too: the count charges `rep movsb` one a
/// byte after a setup of seven, a byte loop four a byte (a 5-byte pipe
/// message: 13 against 23); a single byte is the pipe's `copy_small`.
#[inline]
pub fn copy(dst: &mut [u8], src: &[u8]) {
    assert_eq!(dst.len(), src.len());
    // SAFETY: both ranges are `src.len()` bytes long, valid, and distinct
    // (they are separate borrows); the direction flag is clear, as the ABI
    // requires.
    unsafe {
        core::arch::asm!(
            "rep movsq",
            "mov ecx, {tail:e}",
            "rep movsb",
            tail = in(reg) src.len() % 8,
            inout("rcx") src.len() / 8 => _,
            inout("rsi") src.as_ptr() => _,
            inout("rdi") dst.as_mut_ptr() => _,
            options(nostack, preserves_flags),
        )
    };
}

/// Copies the page at `src` to the page at `dst`.
///
/// # Safety
/// Both are mapped pages (`dst` writable) that do not overlap.
pub unsafe fn copy_page(dst: u64, src: u64) {
    // SAFETY: passed on from the caller.
    unsafe { copy_head(dst, src, crate::layout::PAGE as usize) };
}

/// Copies the first `n` bytes of the page at `src` to the page at `dst`.
///
/// # Safety
/// As `copy_page`, and `n` is at most a page.
pub unsafe fn copy_head(dst: u64, src: u64, n: usize) {
    // SAFETY: passed on from the caller.
    let (d, s) = unsafe {
        (core::slice::from_raw_parts_mut(dst as *mut u8, n), core::slice::from_raw_parts(src as *const u8, n))
    };
    copy(d, s);
}
