//! Linux's clocks (`clock_gettime` ids) and time records (`timespec`,
//! `timeval`) over the library's clocks (`crate::time`).

use crate::alarm::Clock;
use crate::errno::Errno;
use crate::time::{now_ns, wall_ns};

/// Linux's clock ids (`clock_gettime`, `clock_nanosleep`).
pub mod id {
    pub const REALTIME: u64 = 0;
    pub const MONOTONIC: u64 = 1;
    pub const PROCESS_CPUTIME: u64 = 2;
    pub const THREAD_CPUTIME: u64 = 3;
    pub const MONOTONIC_RAW: u64 = 4;
    pub const REALTIME_COARSE: u64 = 5;
    pub const MONOTONIC_COARSE: u64 = 6;
    pub const BOOTTIME: u64 = 7;
    pub const REALTIME_ALARM: u64 = 8;
    pub const BOOTTIME_ALARM: u64 = 9;
    pub const TAI: u64 = 11;
}

/// Clock `id`'s reading in nanoseconds; EINVAL for ids Linux does not
/// have. TAI is the wall clock (Linux's TAI offset is 0 until someone sets
/// it); the machine never suspends, so boot time is monotonic time.
pub fn clock_ns(c: u64) -> Result<u64, Errno> {
    // A `clockid_t` is a C int: only the low 32 bits count.
    if (c as i32) < 0 {
        return cpu_clock(c as i32 as i64).map(Clock::now);
    }
    match c as u32 as u64 {
        id::REALTIME | id::REALTIME_COARSE | id::REALTIME_ALARM | id::TAI => Ok(wall_ns()),
        id::MONOTONIC | id::MONOTONIC_RAW | id::MONOTONIC_COARSE | id::BOOTTIME | id::BOOTTIME_ALARM => {
            Ok(now_ns())
        }
        id::PROCESS_CPUTIME => Ok(crate::proc::process_cpu_ns()),
        id::THREAD_CPUTIME => Ok(crate::proc::cpu_ns(crate::lock::my_id() as u32)),
        _ => Err(crate::errno::EINVAL),
    }
}

/// A CPU clock of a given process or thread (`clock_getcpuclockid`,
/// `pthread_getcpuclockid`): Linux's id is `~pid << 3` with the kind in
/// the low bits (0 profiling, 1 virtual, 2 scheduler time: all the CPU
/// time here; 3 none) and 4 for a thread; pid 0 is the caller. A thread
/// must be one of this process's; a process is counted by its first
/// thread unless it is this one.
fn cpu_clock(id: i64) -> Result<Clock, Errno> {
    if id & 3 == 3 {
        return Err(crate::errno::EINVAL);
    }
    let pid = !(id >> 3) as u32;
    let me = crate::proc::pid();
    if id & 4 != 0 {
        let env = if pid == 0 { Some(crate::lock::my_id() as u32) } else { crate::proc::thread::env_of(pid) };
        return env.map(Clock::Cpu).ok_or(crate::errno::EINVAL);
    }
    if pid == 0 || pid == me {
        return Ok(Clock::ProcessCpu);
    }
    let env = crate::proc::table::by_pid(pid).map(|e| e.env).ok_or(crate::errno::EINVAL)?;
    Ok(Clock::Cpu(env))
}

/// The clock a timer on Linux clock `c` runs on (`timer_create`), and
/// whether absolute times on it are wall-clock times: EINVAL for ids
/// Linux does not have, EOPNOTSUPP for those it cannot arm a timer on
/// (the raw and coarse clocks; the alarm clocks, which need a wake-up
/// device).
pub fn timer_clock(c: u64) -> Result<(Clock, bool), Errno> {
    if (c as i32) < 0 {
        return Ok((cpu_clock(c as i32 as i64)?, false));
    }
    match c as u32 as u64 {
        id::REALTIME | id::TAI => Ok((Clock::Monotonic, true)),
        id::MONOTONIC | id::BOOTTIME => Ok((Clock::Monotonic, false)),
        id::PROCESS_CPUTIME => Ok((Clock::ProcessCpu, false)),
        id::THREAD_CPUTIME => Ok((Clock::Cpu(crate::lock::my_id() as u32), false)),
        id::MONOTONIC_RAW
        | id::REALTIME_COARSE
        | id::MONOTONIC_COARSE
        | id::REALTIME_ALARM
        | id::BOOTTIME_ALARM => Err(crate::errno::EOPNOTSUPP),
        _ => Err(crate::errno::EINVAL),
    }
}

/// `ns` as (seconds, nanoseconds), a `struct timespec`.
pub fn timespec(ns: u64) -> [i64; 2] {
    [(ns / 1_000_000_000) as i64, (ns % 1_000_000_000) as i64]
}

/// The wall clock as (seconds, nanoseconds).
pub fn realtime() -> (i64, i64) {
    let [s, ns] = timespec(wall_ns());
    (s, ns)
}

/// `ns` as a `struct timeval` (seconds, microseconds).
pub fn timeval(ns: u64) -> [u64; 2] {
    [ns / 1_000_000_000, ns % 1_000_000_000 / 1000]
}
