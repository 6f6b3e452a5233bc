//! Linux's clocks (`clock_gettime` ids) and time records (`timespec`,
//! `timeval`) over the library's clocks (`crate::time`).

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
/// have (dynamic and other processes' CPU clocks included). TAI is the
/// wall clock (Linux's TAI offset is 0 until someone sets it); the machine
/// never suspends, so boot time is monotonic time.
pub fn clock_ns(c: u64) -> Result<u64, i64> {
    match c {
        id::REALTIME | id::REALTIME_COARSE | id::REALTIME_ALARM | id::TAI => Ok(wall_ns()),
        id::MONOTONIC | id::MONOTONIC_RAW | id::MONOTONIC_COARSE | id::BOOTTIME | id::BOOTTIME_ALARM => {
            Ok(now_ns())
        }
        id::PROCESS_CPUTIME => Ok(crate::proc::process_cpu_ns()),
        id::THREAD_CPUTIME => Ok(crate::proc::cpu_ns(crate::lock::my_id() as u32)),
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
