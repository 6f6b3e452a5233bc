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

/// What one scan of the environment table finds: every environment's
/// ticks, the processes, the ones runnable now, the newest pid. (One
/// scan a file, where there were two and three: a quick `shell_build`
/// reads each file 22 times.)
struct Census {
    busy: u64,
    procs: usize,
    running: usize,
    newest: u32,
}

fn census() -> Census {
    let mut c = Census { busy: 0, procs: 0, running: 0, newest: 1 };
    for info in kinfo::envs().filter(|e| e.id != 0) {
        c.busy += info.ticks;
        if table::entry_of(&info).is_some() {
            c.procs += 1;
            c.running += usize::from(info.state == env_state::RUNNABLE);
            c.newest = c.newest.max(crate::proc::pid::of(info.id));
        }
    }
    c
}

/// `/proc/stat`.
pub fn stat() -> Vec<u8> {
    let Census { busy, procs, running, .. } = census();
    let total = kinfo::clock().ticks;
    let (user, idle) = (user_hz(busy), user_hz(total.saturating_sub(busy)));
    let boot = crate::time::wall_ns().saturating_sub(crate::time::now_ns()) / 1_000_000_000;
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

/// `/proc/loadavg`: the averages, runnable/all, and the newest pid.
pub fn loadavg() -> Vec<u8> {
    let Census { procs, running, newest, .. } = census();
    text(format_args!("0.00 0.00 0.00 {running}/{procs} {newest}\n"))
}
