//! The memory primitives the compiler expects (there is no libc here).

use core::arch::asm;

/// # Safety
/// Standard C `memcpy` contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memcpy(dst: *mut u8, src: *const u8, n: usize) -> *mut u8 {
    // Eight bytes per step, then the rest: a CPU without fast byte
    // strings (ERMS) takes `rep movsb` one byte at a time.
    // SAFETY: the caller guarantees both ranges are valid and disjoint.
    unsafe {
        asm!("rep movsq", "mov rcx, {rest}", "rep movsb",
             rest = in(reg) n % 8,
             inout("rcx") n / 8 => _, inout("rdi") dst => _, inout("rsi") src => _,
             options(nostack, preserves_flags));
    }
    dst
}

/// # Safety
/// Standard C `memmove` contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memmove(dst: *mut u8, src: *const u8, n: usize) -> *mut u8 {
    if (dst as usize) <= (src as usize) || (dst as usize) >= (src as usize + n) {
        // SAFETY: a forward copy is correct when dst is below src or disjoint.
        return unsafe { memcpy(dst, src, n) };
    }
    // SAFETY: overlapping with dst above src: copy backwards (DF set, then
    // cleared again as the ABI requires).
    unsafe {
        asm!("std", "rep movsb", "cld",
             inout("rcx") n => _, inout("rdi") dst.add(n - 1) => _, inout("rsi") src.add(n - 1) => _,
             options(nostack));
    }
    dst
}

/// # Safety
/// Standard C `memset` contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memset(dst: *mut u8, c: i32, n: usize) -> *mut u8 {
    // Eight bytes per step, then the rest (as `memcpy`).
    let word = (c as u8 as u64) * 0x0101_0101_0101_0101;
    // SAFETY: the caller guarantees the range is valid.
    unsafe {
        asm!("rep stosq", "mov rcx, {rest}", "rep stosb",
             rest = in(reg) n % 8,
             inout("rcx") n / 8 => _, inout("rdi") dst => _, in("rax") word,
             options(nostack, preserves_flags));
    }
    dst
}

/// # Safety
/// Standard C `memcmp` contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    for i in 0..n {
        // SAFETY: the caller guarantees both ranges hold n bytes.
        let (x, y) = unsafe { (*a.add(i), *b.add(i)) };
        if x != y {
            return x as i32 - y as i32;
        }
    }
    0
}

/// # Safety
/// Standard C `bcmp` contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn bcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    // SAFETY: same contract as memcmp.
    unsafe { memcmp(a, b, n) }
}
