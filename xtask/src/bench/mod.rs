//! `cargo xtask bench [NAME] [--quick] [--kvm]`: the papers' experiments on
//! Veneer and on Debian's Linux, both in QEMU with the same configuration,
//! reported as ratios (Linux / Veneer, higher means Veneer is faster).
//!
//! # What the benchmark programs print
//!
//! Both sides (Linux's `/init` built from `bench/linux/`, Veneer's user
//! program `bench`) print these lines on the serial console, each on a line
//! of its own, fields separated by one space:
//!
//! ```text
//! BENCH-PLAN <name> <name> ...           once, first: what this run measures
//! BENCH <name> <iterations> <total>      one line per trial
//! BENCH-FAIL <name> <reason ...>         optional: an experiment that broke
//! BENCH-DONE                             last, then power off
//! ```
//!
//! `<total>` is the difference of two `rdtsc` readings around all
//! `<iterations>` operations of one trial, in decimal. Under
//! `-icount shift=0` the TSC counts guest instructions, so the harness
//! reports `total / iterations` as instructions per operation, the median
//! (and min and max) of the trials. Every name announced in `BENCH-PLAN`
//! must get at least one `BENCH` line, or the run fails.
//!
//! Veneer's `bench` is started with the command line `bench [quick] [NAME
//! ...]`: `quick` asks for tiny iteration counts (one trial is enough), and
//! names, if any, restrict the run to those benchmarks. It should measure
//! `calib` like Linux does: 10 000 iterations of a loop of 998 `nop`s,
//! `dec` and `jnz`, which must read as 1000 instructions per iteration.

mod linux;
mod report;
mod rows;
mod veneer;

use std::collections::BTreeMap;
use std::time::Duration;

/// How this run was asked for.
pub struct Options {
    pub quick: bool,
    pub kvm: bool,
    /// Rows to run (`rows::Row::name`); empty means all.
    pub names: Vec<String>,
}

impl Options {
    /// QEMU's acceleration arguments: instruction counting by default.
    fn accel(&self) -> Vec<String> {
        let args: &[&str] = if self.kvm {
            &["-accel", "kvm"]
        } else {
            &["-accel", "tcg", "-icount", "shift=0,align=off,sleep=off"]
        };
        args.iter().map(|s| s.to_string()).collect()
    }

    /// How long one side's boot may take: a full run under TCG takes well
    /// under a minute per side today; KVM is faster still, and a KVM that
    /// opens but never runs the guest should not stall the run.
    fn timeout(&self) -> Duration {
        Duration::from_secs(match (self.quick, self.kvm) {
            (_, true) => 120,
            (true, false) => 150,
            (false, false) => 540,
        })
    }
}

/// What one side's serial console said.
#[derive(Default)]
pub struct Side {
    pub plan: Option<Vec<String>>,
    /// Per benchmark, the trials as (iterations, total).
    pub trials: BTreeMap<String, Vec<(u64, u64)>>,
    pub failed: Vec<String>,
    pub done: bool,
    /// Why this side has no (or incomplete) figures.
    pub problem: Option<String>,
}

impl Side {
    pub fn absent(why: String) -> Self {
        Side { problem: Some(why), ..Side::default() }
    }

    /// Collects the `BENCH` lines; anything else on the console is ignored.
    /// A line may carry a kernel message before it, so the tag is searched.
    pub fn parse(serial: &str) -> Self {
        let mut side = Side::default();
        for line in serial.lines() {
            let Some(at) = line.find("BENCH") else {
                continue;
            };
            let mut words = line[at..].split_whitespace();
            match words.next() {
                Some("BENCH-PLAN") => side.plan = Some(words.map(str::to_string).collect()),
                Some("BENCH-DONE") => side.done = true,
                Some("BENCH-FAIL") => side.failed.push(words.collect::<Vec<_>>().join(" ")),
                Some("BENCH") => {
                    let fields: Vec<&str> = words.collect();
                    if let [name, iterations, total] = fields[..] {
                        if let (Ok(n), Ok(t)) = (iterations.parse(), total.parse()) {
                            if n > 0 {
                                side.trials.entry(name.to_string()).or_default().push((n, t));
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        side
    }

    /// The per-operation figure of one benchmark, if it was measured.
    pub fn figure(&self, name: &str) -> Option<Figure> {
        let trials = self.trials.get(name)?;
        let mut per_op: Vec<f64> = trials.iter().map(|&(n, t)| t as f64 / n as f64).collect();
        per_op.sort_by(f64::total_cmp);
        let mid = per_op.len() / 2;
        let median = if per_op.len() % 2 == 1 { per_op[mid] } else { (per_op[mid - 1] + per_op[mid]) / 2.0 };
        Some(Figure {
            median,
            min: per_op[0],
            max: per_op[per_op.len() - 1],
            iterations: trials[0].0,
            trials: trials.len(),
        })
    }
}

/// A benchmark's result: per-operation statistics over its trials.
#[derive(Clone, Copy)]
pub struct Figure {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub iterations: u64,
    pub trials: usize,
}

pub fn main(args: &[String]) -> Result<(), String> {
    let mut opts = Options { quick: false, kvm: false, names: Vec::new() };
    for arg in args {
        match arg.as_str() {
            "--quick" => opts.quick = true,
            "--kvm" => opts.kvm = true,
            name if rows::ROWS.iter().any(|r| r.name == name) => opts.names.push(name.into()),
            other => {
                let names: Vec<&str> = rows::ROWS.iter().map(|r| r.name).collect();
                return Err(format!("bench: unknown argument `{other}`; experiments: {}", names.join(" ")));
            }
        }
    }
    if opts.kvm && std::fs::OpenOptions::new().read(true).write(true).open("/dev/kvm").is_err() {
        return Err("bench: --kvm needs a usable /dev/kvm".into());
    }
    crate::deps::ensure(crate::deps::TEST)?;

    let selected: Vec<&rows::Row> = rows::ROWS
        .iter()
        .filter(|r| opts.names.is_empty() || opts.names.iter().any(|n| n == r.name))
        .collect();
    let linux_names = distinct(selected.iter().filter_map(|r| r.linux));
    let veneer_names = distinct(selected.iter().filter_map(|r| r.veneer));

    // The two sides are independent and their figures do not depend on host
    // load, so they run side by side.
    let (linux, veneer) = std::thread::scope(|s| {
        let v = s.spawn(|| veneer::run(&opts, &veneer_names));
        let l = linux::run(&opts, &linux_names);
        (l, v.join().unwrap_or_else(|_| Side::absent("panicked".into())))
    });
    let linux = linux?;

    let results = report::Results::new(&opts, &selected, &linux, &veneer);
    results.print();
    results.save()?;
    check(&opts, &selected, &linux, &veneer)
}

fn distinct<'a>(names: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut v: Vec<&str> = names.collect();
    v.sort();
    v.dedup();
    v
}

/// The checks that make a run trustworthy: the clock counts instructions,
/// and every row that should have a number has one (all Linux rows, and the
/// Veneer rows its `bench` announced). The results are written before this,
/// so a failed full run still leaves its table behind.
fn check(opts: &Options, rows: &[&rows::Row], linux: &Side, veneer: &Side) -> Result<(), String> {
    let mut errors = Vec::new();
    for (side, data) in [("Linux", linux), ("Veneer", veneer)] {
        if let (false, Some(f)) = (opts.kvm, data.figure(rows::CALIBRATION)) {
            if (f.median / rows::CALIBRATION_INSNS - 1.0).abs() > 0.01 {
                errors.push(format!(
                    "{side}: the {}-instruction calibration loop reads {:.1}: the clock is not counting instructions",
                    rows::CALIBRATION_INSNS,
                    f.median
                ));
            }
        }
        for failure in &data.failed {
            errors.push(format!("{side}: BENCH-FAIL {failure}"));
        }
    }
    for row in rows {
        if let Some(name) = row.linux.filter(|n| linux.figure(n).is_none()) {
            errors.push(format!("Linux produced no figure for `{name}` ({})", row.name));
        }
        let announced = |n: &&str| veneer.plan.iter().flatten().any(|p| p == n);
        if let Some(name) = row.veneer.filter(announced) {
            if veneer.figure(name).is_none() {
                errors.push(format!("Veneer announced `{name}` but produced no figure"));
            }
        }
    }
    if let Some(problem) = &linux.problem {
        errors.push(format!("Linux: {problem}"));
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(format!("bench:\n  {}", errors.join("\n  ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lines_and_takes_the_median() {
        let serial = "boot noise\n\
            BENCH-PLAN getpid fork\n\
            BENCH getpid 100 30000\n\
            [   1.0] kernel says BENCH getpid 100 32000\n\
            BENCH getpid 100 31000\n\
            BENCH fork 0 5\n\
            BENCH broken line\n\
            BENCH-DONE\n";
        let side = Side::parse(serial);
        assert!(side.done);
        assert_eq!(side.plan.as_deref(), Some(&["getpid".into(), "fork".into()][..]));
        let f = side.figure("getpid").expect("getpid measured");
        assert_eq!((f.median, f.min, f.max), (310.0, 300.0, 320.0));
        assert_eq!((f.iterations, f.trials), (100, 3));
        // Zero iterations cannot give a figure.
        assert!(side.figure("fork").is_none());
    }

    #[test]
    fn quick_fails_on_announced_rows_without_figures() {
        let opts = Options { quick: true, kvm: false, names: Vec::new() };
        let rows: Vec<&rows::Row> = rows::ROWS.iter().filter(|r| r.name == "fork").collect();
        let linux = Side::parse("BENCH fork 10 2500000\nBENCH-DONE\n");
        let silent = Side::parse("BENCH-PLAN fork\nBENCH-DONE\n");
        let absent = Side::absent("no bench program".into());
        assert!(check(&opts, &rows, &linux, &silent).is_err());
        assert!(check(&opts, &rows, &linux, &absent).is_ok());
        assert!(check(&opts, &rows, &absent, &absent).is_err());
    }
}
