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

/// Swaps the user's fs and gs bases (TLS pointers) while in the kernel:
/// returns the leaving environment's and installs `(fs, gs)`, the
/// entering one's. fs is live; the user's gs is swapped out (SWAPGS), so
/// it is read and written within one SWAPGS pair. Uses the FSGSBASE
/// instructions enabled in `init`.
pub fn swap_bases((fs, gs): (u64, u64)) -> (u64, u64) {
    let (old_fs, old_gs): (u64, u64);
    // SAFETY: the new values were read by an earlier swap (or are 0), so
    // they are canonical; user bases only affect user-mode fs/gs
    // addressing, and the SWAPGS pair leaves the kernel gs in place.
    unsafe {
        asm!(
            "rdfsbase {of}", "wrfsbase {f}", "swapgs", "rdgsbase {og}", "wrgsbase {g}", "swapgs",
            of = out(reg) old_fs, og = out(reg) old_gs, f = in(reg) fs, g = in(reg) gs,
            options(nomem, nostack)
        )
    };
    (old_fs, old_gs)
}
