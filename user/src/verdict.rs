//! What boot tests share: one verdict line per check, and an exception
//! handler that collects the interrupt bits an environment receives.

use abi::exception::{vector, ExceptionFrame};
use abi::Error;
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// Prints `what: ok` or `what: FAILED`; `ok` remembers a failure.
pub fn check(ok: &mut bool, what: &str, cond: bool) {
    crate::println!("{what}: {}", if cond { "ok" } else { "FAILED" });
    *ok &= cond;
}

/// A test program's checks: silent while they hold, a line
/// `NAME: FAILED: what` for each that does not, and the verdict at the end.
pub struct Checks {
    name: &'static str,
    failed: AtomicU32,
}

impl Checks {
    pub const fn new(name: &'static str) -> Checks {
        Checks { name, failed: AtomicU32::new(0) }
    }

    pub fn check(&self, what: &str, ok: bool) {
        if !ok {
            crate::println!("{}: FAILED: {what}", self.name);
            self.failed.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// A call refused with `want`; what came instead is printed.
    pub fn refused(&self, what: &str, got: Result<u64, Error>, want: Error) {
        if got != Err(want) {
            crate::println!("{}: {what}: got {got:?}, want {want:?}", self.name);
        }
        self.check(what, got == Err(want));
    }

    /// `NAME: ok` when every check held; the program's exit status.
    pub fn verdict(&self) -> i32 {
        let failed = self.failed.load(Ordering::Relaxed);
        if failed == 0 {
            crate::println!("{}: ok", self.name);
        }
        i32::from(failed != 0)
    }
}

/// The interrupt bits `collect` has received.
pub static INTERRUPTS: AtomicU64 = AtomicU64::new(0);

/// An exception handler (`exc::install`) that takes interrupts, ORing
/// their bits into `INTERRUPTS`, and nothing else.
pub fn collect(f: &mut ExceptionFrame) -> bool {
    if f.vector != vector::INTERRUPT {
        return false;
    }
    INTERRUPTS.fetch_or(f.error_code, Ordering::SeqCst);
    true
}
