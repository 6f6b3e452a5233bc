//! `close_range(first, last, flags)`: closes, or with
//! `CLOSE_RANGE_CLOEXEC` marks close-on-exec, every open descriptor from
//! `first` to `last` (`~0` for all above `first`). `CLOSE_RANGE_UNSHARE`
//! asks for a private table first: without threads lxrt's table is
//! already the process's own, so it changes nothing; with threads it is
//! shared and cannot be unshared for one of them, so the call is refused
//! rather than close the siblings' descriptors. EINVAL for other flags or
//! `first > last`. (glibc's `closefrom`, used by Erlang's
//! `erl_child_setup`, needs it: its fallback re-reads `/proc/self/fd`.)

use crate::errno::{LxResult, EINVAL};
use crate::fd;

const CLOSE_RANGE_UNSHARE: u64 = 1 << 1;
const CLOSE_RANGE_CLOEXEC: u64 = 1 << 2;

pub fn close_range(first: u64, last: u64, flags: u64) -> LxResult {
    let (first, last) = (first as u32, last as u32);
    if flags & !(CLOSE_RANGE_UNSHARE | CLOSE_RANGE_CLOEXEC) != 0 || first > last {
        return Err(EINVAL);
    }
    if flags & CLOSE_RANGE_UNSHARE != 0 && crate::lock::OTHER_THREADS.get() != 0 {
        crate::log::once("close_range with CLOSE_RANGE_UNSHARE in a threaded process", 3002);
        return Err(EINVAL);
    }
    for n in fd::all().into_iter().filter(|&n| (first as i64..=last as i64).contains(&n)) {
        if flags & CLOSE_RANGE_CLOEXEC != 0 {
            fd::set_cloexec(n, true)?;
        } else {
            fd::close(n)?;
        }
    }
    Ok(0)
}
