//! `futex(2)` over the library's futexes (`crate::futex`): WAIT, WAKE,
//! WAIT_BITSET, WAKE_BITSET, REQUEUE, CMP_REQUEUE, WAKE_OP, private or "shared"
//! (the same: a program's memory is its process's, `futex.rs`), with
//! relative (WAIT) and absolute (WAIT_BITSET) timeouts on the monotonic
//! clock or, with `FUTEX_CLOCK_REALTIME`, the wall clock.

use crate::errno::Errno;
use crate::errno::{LxResult, EAGAIN, EINVAL, ENOSYS};
use crate::futex::{self, Key, ALL};
use crate::uaccess;

const WAIT: u64 = 0;
const WAKE: u64 = 1;
const REQUEUE: u64 = 3;
const CMP_REQUEUE: u64 = 4;
const WAKE_OP: u64 = 5;
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
    let key = |addr: u64| -> Result<Key, Errno> {
        if !addr.is_multiple_of(4) {
            return Err(EINVAL);
        }
        // The word must be there.
        uaccess::get::<u32>(addr)?;
        Ok(if op & PRIVATE != 0 { Key::private(addr) } else { Key::shared(addr) })
    };
    let val = val as u32;
    match cmd {
        WAIT | WAIT_BITSET => {
            let bitset = if cmd == WAIT { ALL } else { val3 as u32 };
            if bitset == 0 {
                return Err(EINVAL);
            }
            let deadline = deadline(timeout, cmd == WAIT_BITSET, op & CLOCK_REALTIME != 0)?;
            futex::wait(key(uaddr)?, uaddr, val, bitset, deadline, crate::proc::deliver::pending).map(|_| 0)
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
        WAKE_OP => {
            // The second count comes in the timeout's register.
            let (n, n2) = (count(val), count(timeout as u32));
            let op = WakeOp::decode(val3 as u32)?;
            let (from, to) = (key(uaddr)?, key(uaddr2)?);
            let old = futex::update(uaddr2, |v| Some(op.apply(v)))?;
            let woken = futex::wake(from, n, ALL);
            let also = if op.holds(old) { futex::wake(to, n2, ALL) } else { 0 };
            Ok((woken + also) as i64)
        }
        _ => {
            crate::log::once(
                "futex operation other than WAIT, WAKE, REQUEUE, WAKE_OP and their variants",
                0x1_0000_0000 | cmd,
            );
            Err(ENOSYS)
        }
    }
}

/// FUTEX_WAKE_OP's `val3`: an operation on the second word (set, add, or,
/// and-not, xor, its argument optionally a shift count) and a comparison
/// of the word's old value that decides whether its waiters are woken.
struct WakeOp {
    op: u32,
    arg: i32,
    cmp: u32,
    cmp_arg: i32,
}

impl WakeOp {
    const SHIFT: u32 = 8;

    fn decode(v: u32) -> Result<WakeOp, Errno> {
        // Both arguments are signed 12-bit numbers.
        let signed12 = |x: u32| ((x << 20) as i32) >> 20;
        let (op, cmp) = (v >> 28, (v >> 24) & 15);
        let mut arg = signed12(v >> 12);
        if op & Self::SHIFT != 0 {
            // As Linux: a shift out of range is taken modulo 32.
            arg = 1i32.wrapping_shl(arg as u32 & 31);
        }
        if op & !Self::SHIFT > 4 || cmp > 5 {
            return Err(ENOSYS);
        }
        Ok(WakeOp { op: op & !Self::SHIFT, arg, cmp, cmp_arg: signed12(v) })
    }

    fn apply(&self, old: u32) -> u32 {
        let a = self.arg as u32;
        match self.op {
            0 => a,
            1 => old.wrapping_add(a),
            2 => old | a,
            3 => old & !a,
            _ => old ^ a,
        }
    }

    fn holds(&self, old: u32) -> bool {
        let (x, y) = (old as i32, self.cmp_arg);
        match self.cmp {
            0 => x == y,
            1 => x != y,
            2 => x < y,
            3 => x <= y,
            4 => x > y,
            _ => x >= y,
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
fn deadline(timeout: u64, absolute: bool, realtime: bool) -> Result<Option<u64>, Errno> {
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
