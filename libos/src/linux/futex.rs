//! `futex(2)` over the library's futexes (`crate::futex`): WAIT, WAKE,
//! WAIT_BITSET, WAKE_BITSET, REQUEUE, CMP_REQUEUE, private or "shared"
//! (the same: a program's memory is its process's, `futex.rs`), with
//! relative (WAIT) and absolute (WAIT_BITSET) timeouts on the monotonic
//! clock or, with `FUTEX_CLOCK_REALTIME`, the wall clock.

use crate::errno::{LxResult, EAGAIN, EINVAL, ENOSYS};
use crate::futex::{self, Key, ALL};
use crate::uaccess;

const WAIT: u64 = 0;
const WAKE: u64 = 1;
const REQUEUE: u64 = 3;
const CMP_REQUEUE: u64 = 4;
const WAIT_BITSET: u64 = 9;
const WAKE_BITSET: u64 = 10;
const PRIVATE: u64 = 128;
const CLOCK_REALTIME: u64 = 256;

/// `futex(uaddr, op, val, timeout_or_val2, uaddr2, val3)`.
pub fn futex(uaddr: u64, op: u64, val: u64, timeout: u64, uaddr2: u64, val3: u64) -> LxResult {
    let cmd = op & !(PRIVATE | CLOCK_REALTIME);
    if op & CLOCK_REALTIME != 0 && !matches!(cmd, WAIT | WAIT_BITSET) {
        return Err(ENOSYS);
    }
    let key = |addr: u64| -> Result<Key, i64> {
        if !addr.is_multiple_of(4) {
            return Err(EINVAL);
        }
        // The word must be there.
        uaccess::get::<u32>(addr)?;
        Ok(Key::private(addr))
    };
    let val = val as u32;
    match cmd {
        WAIT | WAIT_BITSET => {
            let bitset = if cmd == WAIT { ALL } else { val3 as u32 };
            if bitset == 0 {
                return Err(EINVAL);
            }
            let deadline = deadline(timeout, cmd == WAIT_BITSET, op & CLOCK_REALTIME != 0)?;
            futex::wait(key(uaddr)?, uaddr, val, bitset, deadline).map(|_| 0)
        }
        WAKE | WAKE_BITSET => {
            let bitset = if cmd == WAKE { ALL } else { val3 as u32 };
            if bitset == 0 {
                return Err(EINVAL);
            }
            Ok(futex::wake(key(uaddr)?, count(val), bitset) as i64)
        }
        REQUEUE | CMP_REQUEUE => {
            // The count to requeue comes in the timeout's register.
            let (n, moved) = (val as i32, timeout as u32 as i32);
            if n < 0 || moved < 0 {
                return Err(EINVAL);
            }
            let (from, to) = (key(uaddr)?, key(uaddr2)?);
            if cmd == CMP_REQUEUE && uaccess::get::<u32>(uaddr)? != val3 as u32 {
                return Err(EAGAIN);
            }
            let (woken, requeued) = futex::requeue(from, to, n as u32, moved as u32);
            Ok(if cmd == CMP_REQUEUE { woken + requeued } else { woken } as i64)
        }
        _ => {
            crate::log::once(
                "futex operation other than WAIT, WAKE, REQUEUE and their variants",
                0x1_0000_0000 | cmd,
            );
            Err(ENOSYS)
        }
    }
}

/// A wake count: Linux takes it as a signed int, INT_MAX (or more) for all.
fn count(val: u32) -> u32 {
    (val as i32).max(0) as u32
}

/// The deadline on the monotonic clock, in nanoseconds, of a wait whose
/// timeout (a `timespec`, 0: none) is absolute or relative, on the wall
/// clock or the monotonic one.
fn deadline(timeout: u64, absolute: bool, realtime: bool) -> Result<Option<u64>, i64> {
    if timeout == 0 {
        return Ok(None);
    }
    let t: [i64; 2] = uaccess::get(timeout)?;
    if t[0] < 0 || !(0..1_000_000_000).contains(&t[1]) {
        return Err(EINVAL);
    }
    let ns = (t[0] as u64).saturating_mul(1_000_000_000).saturating_add(t[1] as u64);
    let now = crate::time::now_ns();
    Ok(Some(match (absolute, realtime) {
        (false, _) => now.saturating_add(ns),
        (true, false) => ns,
        // The wall clock runs at a fixed distance from the monotonic one.
        (true, true) => ns.saturating_sub(crate::time::wall_ns() - now),
    }))
}
