//! The vDSO (Linux's "virtual dynamic shared object", `AT_SYSINFO_EHDR`):
//! a small shared object mapped into every Linux program whose
//! `clock_gettime`, `gettimeofday`, `time`, `clock_getres` and `getcpu`
//! (versioned LINUX_2.6, as glibc and Go look them up) answer from the
//! kernel's clock page without a system call: the clock is the
//! application's to read (paper 000 §3: expose, do not abstract). The
//! image is `vdso/vdso.c`, built by `build.rs`; the "vvar" page below it
//! tells it where the clock page is and when the wall clock started.

use crate::layout::{PAGE, VDSO_BASE, VDSO_END};
use crate::loader;
use crate::vm;

static IMAGE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/vdso.so"));

/// The vvar page's contents (`struct vvar` in `vdso.c`).
#[repr(C)]
struct Vvar {
    clock: u64,
    epoch_ns: u64,
    adjust: u64,
}

/// The vDSO's `__vdso_clock_gettime`.
pub type ClockGettime = extern "C" fn(i64, *mut [i64; 2]) -> i64;

/// Maps the vDSO into this (native) program and returns its
/// `clock_gettime`, for the benchmark that compares it with Linux's.
pub fn map_clock_gettime() -> Option<ClockGettime> {
    let base = map();
    for r in vm::regions().into_iter().filter(|r| r.start >= base - PAGE && r.end <= VDSO_END) {
        vm::protect(r.start, r.end, r.prot);
    }
    let entry = loader::place(IMAGE, VDSO_BASE, VDSO_END, VDSO_BASE).ok()?.entry();
    // SAFETY: build.rs makes the image's entry point `__vdso_clock_gettime`,
    // which has this signature; its pages were just mapped executable.
    (base != 0).then(|| unsafe { core::mem::transmute::<u64, ClockGettime>(entry) })
}

/// Maps the vvar page and the vDSO into the program being loaded; returns
/// the vDSO's address (AT_SYSINFO_EHDR), 0 if it could not be mapped (a
/// program then makes system calls, as under a kernel without a vDSO).
pub fn map() -> u64 {
    let Ok(placed) = loader::place(IMAGE, VDSO_BASE, VDSO_END, VDSO_BASE) else {
        return 0;
    };
    let adjust = crate::shared::wall_adjust() as *const _ as u64;
    let vvar = Vvar { clock: abi::layout::CLOCK_VA, epoch_ns: crate::time::EPOCH_NS, adjust };
    // SAFETY: `Vvar` is plain `repr(C)` integers.
    let bytes =
        unsafe { core::slice::from_raw_parts(&raw const vvar as *const u8, core::mem::size_of::<Vvar>()) };
    vm::add(VDSO_BASE - PAGE, VDSO_BASE, vm::R);
    if loader::copy_in(VDSO_BASE - PAGE, bytes).is_err() || loader::map_segments(&placed).is_err() {
        vm::remove(VDSO_BASE - PAGE, VDSO_END);
        return 0;
    }
    VDSO_BASE
}
