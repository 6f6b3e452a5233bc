//! FPU/SSE state: enabled at boot, saved and restored on every switch
//! between environments (the kernel itself never touches it).

use super::frame::FpuState;
use core::arch::asm;

pub fn init() {
    // SAFETY: sets CR0.MP/NE/AM (native x87 errors; user alignment checks),
    // clears EM/TS, sets CR4.OSFXSR/OSXMMEXCPT and
    // CR4.FSGSBASE: the architectural switches for SSE and user-settable
    // fs/gs bases (TLS); no memory is involved.
    unsafe {
        asm!(
            "mov {t}, cr0", "and {t}, ~0xC", "or {t}, 0x40022", "mov cr0, {t}",
            "mov {t}, cr4", "or {t}, 0x10600", "mov cr4, {t}",
            t = out(reg) _, options(nostack)
        );
    }
}

pub fn save(s: &mut FpuState) {
    // SAFETY: `s` is a 512-byte, 16-aligned buffer, as FXSAVE requires.
    unsafe { asm!("fxsave64 [{}]", in(reg) s.0.as_mut_ptr(), options(nostack)) }
}

pub fn restore(s: &FpuState) {
    // SAFETY: `s` holds an image made by FXSAVE or `INITIAL` (valid MXCSR).
    unsafe { asm!("fxrstor64 [{}]", in(reg) s.0.as_ptr(), options(nostack)) }
}

/// The user's fs and gs bases (TLS pointers) while in the kernel: fs is
/// live; the user's gs is swapped out (SWAPGS), so it is read and written
/// between two SWAPGS. Uses the FSGSBASE instructions enabled in `init`.
pub fn save_bases() -> (u64, u64) {
    let (fs, gs): (u64, u64);
    // SAFETY: reads only; the SWAPGS pair leaves the kernel gs in place.
    unsafe {
        asm!("rdfsbase {f}", "swapgs", "rdgsbase {g}", "swapgs", f = out(reg) fs, g = out(reg) gs, options(nomem, nostack))
    };
    (fs, gs)
}

pub fn restore_bases(fs: u64, gs: u64) {
    // SAFETY: the values were read by `save_bases` (or are 0), so they are
    // canonical; user bases only affect user-mode fs/gs addressing, and the
    // SWAPGS pair leaves the kernel gs in place.
    unsafe {
        asm!("wrfsbase {f}", "swapgs", "wrgsbase {g}", "swapgs", f = in(reg) fs, g = in(reg) gs, options(nomem, nostack))
    };
}
