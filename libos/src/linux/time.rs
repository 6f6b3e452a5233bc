//! Clocks. Under QEMU with instruction counting the TSC runs at 1 GHz, so
//! a TSC reading is nanoseconds since boot; wall time starts at a fixed
//! epoch (no RTC driver yet).

/// 2024-01-01T00:00:00Z: the wall clock at boot.
const EPOCH_S: u64 = 1_704_067_200;

pub fn now_ns() -> u64 {
    // SAFETY: RDTSC has no side effects.
    let tsc = unsafe { core::arch::x86_64::_rdtsc() };
    if tsc > 0 {
        tsc
    } else {
        // 2 ms kernel ticks as a fallback.
        user::kinfo::ticks() * 2_000_000
    }
}

/// (seconds, nanoseconds) for clock `id`.
pub fn clock(id: u64) -> (i64, i64) {
    let ns = now_ns();
    let s = match id {
        // CLOCK_REALTIME and its coarse variant.
        0 | 5 => EPOCH_S + ns / 1_000_000_000,
        _ => ns / 1_000_000_000,
    };
    (s as i64, (ns % 1_000_000_000) as i64)
}

/// Wall-clock nanoseconds since 1970 (file timestamps).
pub fn wall_ns() -> u64 {
    EPOCH_S * 1_000_000_000 + now_ns()
}

/// `ns` as a `struct timeval` (seconds, microseconds).
pub fn timeval(ns: u64) -> [u64; 2] {
    [ns / 1_000_000_000, ns % 1_000_000_000 / 1000]
}

/// `ns` in clock ticks (`USER_HZ` = 100), as `times` and `/proc` count.
pub fn clock_ticks(ns: u64) -> u64 {
    ns / 10_000_000
}
