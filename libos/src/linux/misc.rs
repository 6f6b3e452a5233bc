//! Identity, limits, randomness, signals bookkeeping and other small calls.

use crate::errno::{LxResult, EAGAIN, EINTR, EINVAL, EOPNOTSUPP, EPERM};
use crate::proc::{deliver, signal};
use crate::uaccess;

pub fn uname(buf: u64) -> LxResult {
    use crate::fs::procsys::{name, RELEASE, VERSION};
    let fields: [&[u8]; 6] = [b"Linux", name(0), RELEASE.as_bytes(), VERSION.as_bytes(), b"x86_64", name(1)];
    uaccess::with_bytes_mut(buf, 6 * 65, |out| {
        out.fill(0);
        for (i, f) in fields.iter().enumerate() {
            out[65 * i..65 * i + f.len()].copy_from_slice(f);
        }
    })?;
    Ok(0)
}

/// `sethostname(name, len)` (`which` 0) and `setdomainname` (1): every
/// process is root, so the name changes for every process (`uname`,
/// `/proc/sys/kernel`).
pub fn set_name(which: usize, ptr: u64, len: u64) -> LxResult {
    if len as i32 as i64 > crate::shared::NAME_LEN as i64 || (len as i32) < 0 {
        return Err(EINVAL);
    }
    let name = uaccess::bytes(ptr, len as u32 as u64)?;
    crate::shared::set_name(which, name);
    Ok(0)
}

const ARCH_SET_FS: u64 = 0x1002;
const ARCH_GET_FS: u64 = 0x1003;

/// Linux's `TASK_SIZE_MAX`: a thread pointer must lie below it (the
/// process would die at its next TLS access otherwise).
pub const TASK_SIZE_MAX: u64 = 0x7fff_ffff_f000;

pub fn arch_prctl(code: u64, addr: u64) -> LxResult {
    match code {
        ARCH_SET_FS if addr >= TASK_SIZE_MAX => Err(EPERM),
        ARCH_SET_FS => {
            // SAFETY: CR4.FSGSBASE is on and the kernel keeps fs base per
            // environment; lxrt itself never uses fs.
            unsafe { core::arch::asm!("wrfsbase {}", in(reg) addr, options(nomem, nostack)) };
            Ok(0)
        }
        ARCH_GET_FS => {
            let fs: u64;
            // SAFETY: as above.
            unsafe { core::arch::asm!("rdfsbase {}", out(reg) fs, options(nomem, nostack)) };
            uaccess::put(addr, fs)
        }
        _ => Err(EINVAL),
    }
}

const GRND_NONBLOCK: u64 = 1;
const GRND_RANDOM: u64 = 2;
const GRND_INSECURE: u64 = 4;
/// The most one read or write moves (Linux's `MAX_RW_COUNT`).
const MAX_RW_COUNT: u64 = 0x7fff_f000;

/// `getrandom`: the generator is always ready, so no flag waits.
pub fn getrandom(buf: u64, len: u64, flags: u64) -> LxResult {
    if flags & !(GRND_NONBLOCK | GRND_RANDOM | GRND_INSECURE) != 0
        || flags & (GRND_INSECURE | GRND_RANDOM) == GRND_INSECURE | GRND_RANDOM
    {
        return Err(EINVAL);
    }
    let len = len.min(MAX_RW_COUNT);
    uaccess::with_bytes_mut(buf, len, crate::random::fill)?;
    Ok(len as i64)
}

/// `rt_sigaction(sig, act, old, sigsetsize)`: SIGKILL's and SIGSTOP's
/// actions can be read, not set.
pub fn rt_sigaction(sig: u64, act: u64, old: u64, size: u64) -> LxResult {
    let fixed = sig == signal::SIGKILL as u64 || sig == signal::SIGSTOP as u64;
    if size != 8 || sig == 0 || sig > 64 || (fixed && act != 0) {
        return Err(EINVAL);
    }
    let sig = sig as u32;
    if old != 0 {
        uaccess::put(old, signal::action(sig))?;
    }
    if act != 0 {
        signal::set_action(sig, uaccess::get(act)?);
    }
    Ok(0)
}

pub fn rt_sigsuspend(set: u64, size: u64) -> LxResult {
    if size != 8 {
        return Err(EINVAL);
    }
    deliver::suspend(uaccess::get(set)?)
}

pub fn rt_sigpending(set: u64, size: u64) -> LxResult {
    if size != 8 {
        return Err(EINVAL);
    }
    // Unblocked ones would have been delivered: what waits is blocked.
    uaccess::put(set, deliver::pending_in(signal::blocked()) >> 1).map(|_| 0)
}

/// `rt_sigtimedwait`: waits (at most `timeout`, a timespec; none: for
/// ever) for one of the signals in `set` to be pending, takes it and
/// returns it, with its `siginfo_t` at `info`.
pub fn rt_sigtimedwait(set: u64, info: u64, timeout: u64, size: u64) -> LxResult {
    if size != 8 {
        return Err(EINVAL);
    }
    let want = uaccess::get::<u64>(set)? << 1 & !(1 << signal::SIGKILL | 1 << signal::SIGSTOP);
    let until = if timeout == 0 {
        None
    } else {
        let t: [i64; 2] = uaccess::get(timeout)?;
        if t[0] < 0 || !(0..1_000_000_000).contains(&t[1]) {
            return Err(EINVAL);
        }
        Some(crate::time::now_ns() + t[0] as u64 * 1_000_000_000 + t[1] as u64)
    };
    // While it waits, a signal of the process that every thread blocks is
    // handed to this thread (`thread::wanting`).
    signal::set_sigwait(want);
    let r = loop {
        if let Some(taken) = deliver::take_pending_in(want) {
            break Ok(taken);
        }
        if until.is_some_and(|u| crate::time::now_ns() >= u) {
            break Err(EAGAIN);
        }
        // Another signal with a handler ends the wait.
        if deliver::pending() {
            break Err(EINTR);
        }
        crate::obj::console::poll_interrupt();
        crate::sleep::pause(until);
    };
    signal::set_sigwait(0);
    let (sig, code, words) = r?;
    if info != 0 {
        let mut si = [0u64; 16];
        (si[0], si[1], si[2], si[3]) = (sig as u64, code as u32 as u64, words[0], words[1]);
        uaccess::put(info, si)?;
    }
    Ok(sig as i64)
}

pub fn rt_sigprocmask(how: u64, set: u64, old: u64, size: u64) -> LxResult {
    if size != 8 || (set != 0 && how > 2) {
        return Err(EINVAL);
    }
    let m = signal::mask();
    if old != 0 {
        uaccess::put(old, m)?;
    }
    if set != 0 {
        let s: u64 = uaccess::get(set)?;
        signal::set_mask(match how {
            0 => m | s,
            1 => m & !s,
            2 => s,
            _ => return Err(EINVAL),
        });
    }
    Ok(0)
}

pub fn sysinfo(buf: u64) -> LxResult {
    let k = user::kinfo::kernel();
    let up = crate::time::now_ns() / 1_000_000_000;
    let free = user::kinfo::free_frames();
    uaccess::with_bytes_mut(buf, 112, |out| {
        out.fill(0);
        out[0..8].copy_from_slice(&up.to_le_bytes());
        out[32..40].copy_from_slice(&(k.frames * 4096).to_le_bytes());
        out[40..48].copy_from_slice(&(free * 4096).to_le_bytes());
        out[104..108].copy_from_slice(&1u32.to_le_bytes());
    })?;
    Ok(0)
}

/// `clock_nanosleep(clock, flags, req, rem)`: sleeps until `req` on
/// `clock` if `flags` has `TIMER_ABSTIME`, else for `req`; a signal ends it
/// with EINTR, and a relative sleep then writes the time left at `rem`.
/// Clocks Linux cannot sleep on give EOPNOTSUPP (a process's CPU clock too:
/// on Linux a one-thread process sleeping on its own CPU time never wakes).
pub fn clock_nanosleep(clock: u64, flags: u64, req: u64, rem: u64) -> LxResult {
    use super::time::{clock_ns, id, timespec};
    use crate::time::now_ns;
    const TIMER_ABSTIME: u64 = 1;
    match clock {
        id::REALTIME | id::MONOTONIC | id::BOOTTIME | id::TAI => {}
        // A thread's CPU clock is EINVAL, as Linux's posix_cpu_nsleep.
        _ if (clock as i32) < 0 && clock & 4 != 0 => return Err(EINVAL),
        _ => return Err(clock_ns(clock).map_or(EINVAL, |_| EOPNOTSUPP)),
    }
    let t: [i64; 2] = uaccess::get(req)?;
    if t[0] < 0 || !(0..1_000_000_000).contains(&t[1]) {
        return Err(EINVAL);
    }
    let asked = t[0] as u64 * 1_000_000_000 + t[1] as u64;
    let start = now_ns();
    // Every sleep runs on the monotonic clock: an absolute deadline on
    // another clock becomes the distance to it now.
    let until = if flags & TIMER_ABSTIME != 0 {
        start.saturating_add(asked.saturating_sub(clock_ns(clock)?))
    } else {
        start.saturating_add(asked)
    };
    while now_ns() < until {
        crate::sleep::pause(Some(until));
        // A signal ends the sleep (it takes effect at the next call).
        if crate::obj::console::poll_interrupt() || deliver::pending() {
            if flags & TIMER_ABSTIME == 0 && rem != 0 {
                uaccess::put(rem, timespec(until.saturating_sub(now_ns())))?;
            }
            return Err(EINTR);
        }
    }
    Ok(0)
}

pub fn clock_gettime(clock: u64, tp: u64) -> LxResult {
    let ns = super::time::clock_ns(clock)?;
    uaccess::put(tp, super::time::timespec(ns)).map(|_| 0)
}

/// `clock_getres`: every clock counts in nanoseconds.
pub fn clock_getres(clock: u64, res: u64) -> LxResult {
    super::time::clock_ns(clock)?;
    if res != 0 {
        uaccess::put(res, [0i64, 1])?;
    }
    Ok(0)
}

/// `getcpu`: one CPU, one node (the vDSO answers the same).
pub fn getcpu(cpu: u64, node: u64) -> LxResult {
    for p in [cpu, node].into_iter().filter(|&p| p != 0) {
        uaccess::put(p, 0u32)?;
    }
    Ok(0)
}

/// `clock_settime(clock, tp)`: only the wall clock can be set (every
/// process is root); a clock Linux does not have, or cannot set (the
/// monotonic and CPU clocks), is EINVAL, as is a time out of range.
pub fn clock_settime(clock: u64, tp: u64) -> LxResult {
    super::time::clock_ns(clock)?;
    let [s, ns]: [i64; 2] = uaccess::get(tp)?;
    if clock != super::time::id::REALTIME || s < 0 || !(0..1_000_000_000).contains(&ns) {
        return Err(EINVAL);
    }
    crate::time::set_wall_ns((s as u64).saturating_mul(1_000_000_000).saturating_add(ns as u64));
    Ok(0)
}

/// `settimeofday(tv, tz)`: sets the wall clock (`tv` may be absent; the
/// time zone is kept by nobody, as on Linux since long).
pub fn settimeofday(tv: u64, _tz: u64) -> LxResult {
    if tv == 0 {
        return Ok(0);
    }
    let [s, us]: [i64; 2] = uaccess::get(tv)?;
    if s < 0 || !(0..1_000_000).contains(&us) {
        return Err(EINVAL);
    }
    crate::time::set_wall_ns((s as u64).saturating_mul(1_000_000_000).saturating_add(us as u64 * 1000));
    Ok(0)
}

pub fn gettimeofday(tv: u64) -> LxResult {
    if tv != 0 {
        let (s, ns) = super::time::realtime();
        uaccess::put(tv, [s, ns / 1000])?;
    }
    Ok(0)
}

/// `times`: this process's CPU time and its reaped children's, in clock
/// ticks (all counted as user time: the kernel does not tell them apart).
pub fn times(buf: u64) -> LxResult {
    use crate::time::clock_ticks;
    if buf != 0 {
        let (me, children) = (crate::proc::env(), crate::proc::table::mine().children_ns);
        uaccess::put(buf, [clock_ticks(crate::proc::cpu_ns(me)), 0, clock_ticks(children), 0])?;
    }
    Ok(clock_ticks(crate::time::now_ns()) as i64)
}

/// `getrusage`: CPU time of this process (`RUSAGE_SELF`) or of its reaped
/// children (`RUSAGE_CHILDREN`); the other fields are 0.
pub fn getrusage(who: i64, buf: u64) -> LxResult {
    let ns = match who {
        0 => crate::proc::cpu_ns(crate::proc::env()),
        -1 => crate::proc::table::mine().children_ns,
        _ => return Err(EINVAL),
    };
    uaccess::zero(buf, 144)?;
    uaccess::put(buf, super::time::timeval(ns)).map(|_| 0)
}
