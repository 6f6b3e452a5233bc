//! What boot tests share: one verdict line per check, and an exception
//! handler that collects the interrupt bits an environment receives.

use abi::exception::{vector, ExceptionFrame};
use core::sync::atomic::{AtomicU64, Ordering};

/// Prints `what: ok` or `what: FAILED`; `ok` remembers a failure.
pub fn check(ok: &mut bool, what: &str, cond: bool) {
    crate::println!("{what}: {}", if cond { "ok" } else { "FAILED" });
    *ok &= cond;
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
