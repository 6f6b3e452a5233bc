//! `cargo xtask stress`: hostile load against booted Veneer, with the seeds
//! printed so that any run can be replayed. Each boot ends with the
//! kernel's own audit (`audit` on the command line: the frame table agrees
//! with the free count, nothing belongs to a gone environment) and must
//! power off with success.
//!
//! - the native system-call fuzzer (`test_fuzz seed=S calls=N`), several
//!   seeds;
//! - the Linux load (`libos/stress/linux.sh`): random Linux calls with
//!   hostile arguments in forked children (`lxfuzz`), fork/exec/wait churn
//!   and shell commands with free memory back within 1%
//!   (`tests/memleak.sh`), filling and emptying the file system three
//!   times (`tests/fsfull.sh`), forking until the environment table is full
//!   (`forkfull`), a watching process that must never stall
//!   (`heartbeat`), issue 27's hostile programs (`lifetimes.sh`: thread
//!   bombs across processes, parents killed with children running, a
//!   sibling unmapping a blocked reader's buffer, a thread the kernel
//!   ends, a signal storm, 100 futex waiters requeued, CPU-bound programs
//!   under interval timers), a shell fork bomb ended by `kill -9 -1`
//!   (`forkbomb.sh`), and free memory back within 1% at the end.
//!
//! `--quick` is the short version `cargo xtask test` runs.

use crate::boottest::{self, BootTest};
use crate::{build, qemu};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How much of each kind of load a run makes.
struct Size {
    native_calls: u64,
    native_seeds: u64,
    linux_calls: u64,
    linux_seeds: u64,
    churn: u64,
    fills: u64,
}

const FULL: Size = Size {
    native_calls: 10_000_000,
    native_seeds: 4,
    linux_calls: 1_000_000,
    linux_seeds: 4,
    churn: 10_000,
    fills: 1,
};
const QUICK: Size = Size {
    native_calls: 200_000,
    native_seeds: 2,
    linux_calls: 20_000,
    linux_seeds: 1,
    churn: 200,
    fills: 1,
};

const USAGE: &str = "usage: cargo xtask stress [--quick] [--seed S]";

pub fn main(args: &[String]) -> Result<(), String> {
    let mut size = &FULL;
    let mut seed = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--quick" => size = &QUICK,
            "--seed" => seed = Some(it.next().and_then(|s| s.parse().ok()).ok_or(USAGE)?),
            _ => return Err(format!("unknown argument `{a}`\n{USAGE}")),
        }
    }
    // A new seed each run unless one is given to replay.
    let seed: u64 = seed.unwrap_or_else(|| {
        SystemTime::now().duration_since(UNIX_EPOCH).map_or(1, |d| d.as_secs()) % 1_000_000
    });
    crate::deps::ensure(crate::deps::TEST)?;
    let img = build::all()?;
    let mut tests = Vec::new();
    for k in 0..size.native_seeds {
        let calls = size.native_calls / size.native_seeds;
        tests.push(BootTest::new(
            format!("stress native seed={}", seed + k),
            boot_args(&img, &format!("test_fuzz seed={} calls={calls} audit", seed + k)),
            lines(&["fuzz: kernel alive and consistent", "audit: consistent"]),
            Duration::from_secs(60 + calls / 10_000),
        ));
    }
    for k in 0..size.linux_seeds {
        // One boot makes the full churn in one parent (the 10^4);
        // the others a short one.
        let calls = size.linux_calls / size.linux_seeds;
        let churn = if k == 0 { size.churn } else { size.churn.min(500) };
        let s = seed + 100 + k;
        tests.push(BootTest::new(
            format!("stress linux seed={s}"),
            boot_args(
                &img,
                &format!("lxrt /bin/sh /stress/linux.sh {s} {calls} {churn} {} audit", size.fills),
            ),
            lines(&[
                "lxfuzz: ",
                "churn: free memory back within 1%",
                "fill: run 1 of tests/fsfull.sh (3 fill/empty cycles): ok",
                "forkfull: ok",
                "threadbomb: ok",
                "orphans: ok",
                "unmapread: ok",
                "threaddeath: ok",
                "sigstorm: ok",
                "futexcrowd: ok",
                "itimers: ok",
                "no stall",
                "forkbomb: one kill -9 -1 left nothing of the bomb",
                "forkbomb: after kill -9 -1 the shell runs a pipeline",
                "memory: MemFree",
                "audit: consistent",
            ]),
            // (lifetimes.sh takes up to 300 s of its own on a busy host.)
            Duration::from_secs(540 + calls / 2_000 + churn / 10),
        ));
    }
    println!("xtask: stress, seed {seed} (replay with --seed {seed}): {} boots", tests.len());
    let logs = boottest::run_list(&tests)?;
    // Every verdict line, for the record (and the closing note).
    for (t, log) in tests.iter().zip(&logs) {
        println!("-- {}", t.name);
        for l in log.lines().filter(|l| is_verdict(l)) {
            println!("   {}", l.trim_end());
        }
    }
    let bad: Vec<&str> =
        logs.iter().flat_map(|l| l.lines()).filter(|l| is_verdict(l) && is_failure(l)).collect();
    if !bad.is_empty() {
        return Err(format!("stress: {} verdict(s) failed:\n{}", bad.len(), bad.join("\n")));
    }
    println!("xtask: stress passed (seed {seed})");
    Ok(())
}

/// The stress boots get 1 GiB: a thousand processes (a full environment
/// table) need about 350 MiB of their own (344 KiB a paused forked
/// child), with the fuzzers' and the file system's memory besides: 512
/// MiB would make forkfull a test of running out of memory, which `lx_oom`
/// checks on its own.
fn boot_args(img: &build::Image, init: &str) -> Vec<String> {
    let mut args = qemu::base_args(img, init);
    if let Some(i) = args.iter().position(|a| a == "-m") {
        args[i + 1] = "1G".into();
    }
    args
}

fn lines(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

const VERDICTS: &[&str] = &[
    "fuzz: ",
    "audit: ",
    "lxfuzz: ",
    "lxfuzz slow: ",
    "memloop: ",
    "shell: ",
    "churn: ",
    "fill: ",
    "forkfull: ",
    "heartbeat: ",
    "phase: ",
    "threadbomb: ",
    "orphans: ",
    "unmapread: ",
    "threaddeath: ",
    "sigstorm: ",
    "futexcrowd: ",
    "itimers: ",
    "spinwait: ",
    "forkbomb: ",
    "memory: ",
];

fn is_verdict(line: &str) -> bool {
    let l = line.trim_start_matches("veneer: ");
    VERDICTS.iter().any(|v| l.starts_with(v))
}

fn is_failure(line: &str) -> bool {
    ["NOT ", "FAILED", "FAILS", "STALLED", "INCONSISTENT"].iter().any(|w| line.contains(w))
}
