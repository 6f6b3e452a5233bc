//! `/proc/stat` and `/proc/loadavg` (what `top`, `vmstat` and `uptime`
//! read): CPU time from the kernel's tick counts (every environment's
//! ticks as user time, the rest of the ticks since boot as idle: the
//! kernel does not split user from system time), the processes and the
//! ones runnable now. The load averages are 0: nobody samples the run
//! queue.

use super::procfile::text;
use crate::proc::table;
use abi::tables::env_state;
use alloc::vec::Vec;
use user::kinfo;

/// Ticks in `USER_HZ` (100 per second) units.
fn user_hz(ticks: u64) -> u64 {
    crate::time::clock_ticks(ticks * kinfo::clock().tick_ns)
}

/// `/proc/stat`.
pub fn stat() -> Vec<u8> {
    let busy: u64 = kinfo::envs().filter(|e| e.id != 0).map(|e| e.ticks).sum();
    let total = kinfo::clock().ticks;
    let (user, idle) = (user_hz(busy), user_hz(total.saturating_sub(busy)));
    let boot = crate::time::wall_ns().saturating_sub(crate::time::now_ns()) / 1_000_000_000;
    let (procs, running) = counts();
    let mut s = Vec::new();
    for cpu in ["cpu ", "cpu0"] {
        s.extend_from_slice(&text(format_args!("{cpu} {user} 0 0 {idle} 0 0 0 0 0 0\n")));
    }
    s.extend_from_slice(&text(format_args!(
        "intr 0\nctxt 0\nbtime {boot}\nprocesses {procs}\nprocs_running {running}\nprocs_blocked 0\n\
         softirq 0 0 0 0 0 0 0 0 0 0 0\n"
    )));
    s
}

/// The processes there are, and those runnable now.
fn counts() -> (usize, usize) {
    table::all().fold((0, 0), |(n, r), (info, _)| (n + 1, r + usize::from(info.state == env_state::RUNNABLE)))
}

/// `/proc/loadavg`: the averages, runnable/all, and the newest pid.
pub fn loadavg() -> Vec<u8> {
    let (procs, running) = counts();
    let newest = table::all().map(|(i, _)| crate::proc::pid::of(i.id)).max().unwrap_or(1);
    text(format_args!("0.00 0.00 0.00 {running}/{procs} {newest}\n"))
}
