//! `/proc/PID/status`: Linux's fields, in its order, from the process
//! table (any process) and, for the caller's own directory, from what only
//! it knows (its threads, signal mask and dispositions, umask, descriptors,
//! mappings). Another process's signal words read 0 and its thread count
//! 1; capabilities are a root's (every process is root).

use super::procfile::{comm, text};
use crate::proc::table::{self, Entry};
use abi::tables::{env_state, EnvInfo};
use alloc::vec::Vec;

/// The highest capability number Linux 6.1 knows (CAP_CHECKPOINT_RESTORE).
pub const CAP_LAST_CAP: u64 = 40;

/// Signals that can be pending at once: one of each (no real-time
/// signal queue), as `RLIMIT_SIGPENDING` says too.
pub const SIGPENDING: u64 = 64;

/// What only the process itself can tell (`Own::mine`).
pub struct Own {
    threads: usize,
    umask: u32,
    fd_size: usize,
    vm_kib: u64,
    blocked: u64,
    ignored: u64,
    caught: u64,
}

impl Own {
    /// The calling process's own words.
    pub fn mine() -> Own {
        let (mut ignored, mut caught) = (0, 0);
        for sig in 1..=64u32 {
            match crate::proc::signal::action(sig).handler {
                0 => {}
                1 => ignored |= 1 << (sig - 1),
                _ => caught |= 1 << (sig - 1),
            }
        }
        Own {
            threads: 1 + crate::proc::thread::envs().len(),
            umask: crate::proc::UMASK.get(),
            fd_size: crate::fd::all().last().map_or(0, |&n| n as usize + 1).next_multiple_of(64).max(64),
            vm_kib: crate::vm::regions().iter().map(|r| (r.end - r.start) / 1024).sum(),
            blocked: crate::proc::signal::mask(),
            ignored,
            caught,
        }
    }
}

/// The state letter and word Linux shows.
pub fn state(info: &EnvInfo, e: &Entry) -> (char, &'static str) {
    match info.state {
        env_state::EXITED => ('Z', "zombie"),
        _ if e.stopped != 0 => ('T', "stopped"),
        env_state::SLEEPING | env_state::WAITING => ('S', "sleeping"),
        env_state::STOPPED => ('T', "stopped"),
        _ => ('R', "running"),
    }
}

/// The status file of the process `info`/`e`; `own` for the caller's.
pub fn status(info: &EnvInfo, e: &Entry, own: Option<&Own>) -> Vec<u8> {
    let pid = crate::proc::pid::of(e.env);
    let (letter, word) = state(info, e);
    let rss = info.frames * 4;
    let vm = own.map_or(rss, |o| o.vm_kib);
    let mut s = text(format_args!(
        "Name:\t{}\nUmask:\t{:04o}\nState:\t{letter} ({word})\nTgid:\t{pid}\nNgid:\t0\nPid:\t{pid}\n\
         PPid:\t{}\nTracerPid:\t0\nUid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\nFDSize:\t{}\nGroups:\t\n\
         NStgid:\t{pid}\nNSpid:\t{pid}\nNSpgid:\t{}\nNSsid:\t{}\n",
        core::str::from_utf8(comm(e)).unwrap_or("?"),
        own.map_or(0o022, |o| o.umask),
        table::ppid(e),
        own.map_or(64, |o| o.fd_size),
        e.pgid,
        e.sid,
    ));
    for (name, kib) in [
        ("VmPeak", vm),
        ("VmSize", vm),
        ("VmLck", 0),
        ("VmPin", 0),
        ("VmHWM", rss),
        ("VmRSS", rss),
        ("RssAnon", rss),
        ("RssFile", 0),
        ("RssShmem", 0),
        ("VmData", vm),
        ("VmStk", 0),
        ("VmExe", 0),
        ("VmLib", 0),
        ("VmPTE", 0),
        ("VmSwap", 0),
    ] {
        s.extend_from_slice(&text(format_args!("{name}:\t{kib:>8} kB\n")));
    }
    let all_caps = (1u64 << (CAP_LAST_CAP + 1)) - 1;
    s.extend_from_slice(&text(format_args!(
        "HugetlbPages:\t       0 kB\nCoreDumping:\t0\nTHP_enabled:\t1\nThreads:\t{}\nSigQ:\t0/{}\n\
         SigPnd:\t{:016x}\nShdPnd:\t{:016x}\nSigBlk:\t{:016x}\nSigIgn:\t{:016x}\nSigCgt:\t{:016x}\n\
         CapInh:\t{:016x}\nCapPrm:\t{all_caps:016x}\nCapEff:\t{all_caps:016x}\nCapBnd:\t{all_caps:016x}\n\
         CapAmb:\t{:016x}\nNoNewPrivs:\t0\nSeccomp:\t0\nSeccomp_filters:\t0\n\
         Speculation_Store_Bypass:\tthread vulnerable\nSpeculationIndirectBranch:\tconditional enabled\n\
         Cpus_allowed:\t1\nCpus_allowed_list:\t0\nMems_allowed:\t1\nMems_allowed_list:\t0\n\
         voluntary_ctxt_switches:\t0\nnonvoluntary_ctxt_switches:\t0\n",
        own.map_or(1, |o| o.threads),
        SIGPENDING,
        0,
        0,
        own.map_or(0, |o| o.blocked),
        own.map_or(0, |o| o.ignored),
        own.map_or(0, |o| o.caught),
        0,
        0,
    )));
    s
}
