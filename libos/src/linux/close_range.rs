//! `close_range(first, last, flags)`: glibc's `closefrom` and Erlang's
//! `erl_child_setup` close every descriptor above their own with it.
//! Without it glibc falls back to reading `/proc/self/fd`.

use crate::errno::{LxResult, EINVAL};
use crate::fd;

/// Leaves the closed descriptors' table unshared (a no-op without threads).
const CLOSE_RANGE_UNSHARE: u64 = 2;
/// Marks the descriptors close-on-exec instead of closing them.
const CLOSE_RANGE_CLOEXEC: u64 = 4;

pub fn close_range(first: u64, last: u64, flags: u64) -> LxResult {
    if flags & !(CLOSE_RANGE_UNSHARE | CLOSE_RANGE_CLOEXEC) != 0 || first > last {
        return Err(EINVAL);
    }
    // The threads of a process share one table: unsharing it for the
    // caller alone is not possible here, so refuse rather than close the
    // siblings' descriptors.
    if flags & CLOSE_RANGE_UNSHARE != 0 && crate::proc::vars().threads.get() != 0 {
        crate::log::once("close_range with CLOSE_RANGE_UNSHARE in a threaded process", 3002);
        return Err(EINVAL);
    }
    // The arguments are C unsigned ints.
    let (first, last) = (first as u32 as i64, last as u32 as i64);
    for n in fd::all().into_iter().filter(|&n| n >= first && n <= last) {
        if flags & CLOSE_RANGE_CLOEXEC != 0 {
            fd::set_cloexec(n, true)?;
        } else {
            fd::close(n)?;
        }
    }
    Ok(0)
}
