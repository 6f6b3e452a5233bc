//! Clocks: the TSC at the rate the kernel measured at boot (`kinfo::now_ns`)
//! is time since boot; wall time starts at a fixed epoch (no RTC driver
//! yet).

/// 2024-01-01T00:00:00Z: the wall clock at boot (the vDSO reads it too).
pub const EPOCH_NS: u64 = 1_704_067_200 * 1_000_000_000;

/// Nanoseconds since boot.
pub fn now_ns() -> u64 {
    user::kinfo::now_ns()
}

/// Wall-clock nanoseconds since 1970 (file timestamps).
pub fn wall_ns() -> u64 {
    EPOCH_NS + now_ns()
}

/// `ns` in clock ticks (UNIX's `CLK_TCK`, 100 per second), as `times` and
/// `/proc` count CPU time.
pub fn clock_ticks(ns: u64) -> u64 {
    ns / 10_000_000
}
