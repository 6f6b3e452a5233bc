//! The kernel's batched mapping calls (`MAP_FROM_RANGE`, `PROTECT_RANGE`),
//! split into pieces of at most `RANGE_MAX` pages. Fork uses them to share
//! or write-protect a whole run of pages with one kernel entry instead of
//! one per page.

use crate::layout::PAGE;
use abi::syscall::RANGE_MAX;
use abi::Error;
use user::sys;

/// Maps this environment's pages `[src, src + pages * PAGE)` into `env` at
/// `va` with `flags` (unmapped source pages are skipped).
pub fn map_from(env: u64, mut va: u64, mut src: u64, mut pages: u64, flags: u64) -> Result<(), Error> {
    while pages > 0 {
        let n = pages.min(RANGE_MAX);
        sys::map_from_range(env, va, src, n, flags)?;
        va += n * PAGE;
        src += n * PAGE;
        pages -= n;
    }
    Ok(())
}

/// Changes the rights of `env`'s pages `[va, va + pages * 4096)` to
/// `flags` (unmapped pages are skipped).
pub fn protect(env: u64, mut va: u64, mut pages: u64, flags: u64) -> Result<(), Error> {
    while pages > 0 {
        let n = pages.min(RANGE_MAX);
        sys::protect_range(env, va, n, flags)?;
        va += n * PAGE;
        pages -= n;
    }
    Ok(())
}
