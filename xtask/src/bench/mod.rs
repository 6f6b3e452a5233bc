//! `cargo xtask bench [NAME] [--quick] [--kvm] [--profile]`: the papers'
//! experiments on Veneer and on Debian's Linux, both in QEMU with the same
//! configuration, reported as ratios (Linux / Veneer, higher means Veneer
//! is faster).
//!
//! # What the benchmark programs print
//!
//! Every boot (Linux's `/init` built from `bench/linux/`, Veneer's user
//! program `bench` and the library OS's `bench_libos`) prints these lines on
//! the serial console, each on a line of its own, fields separated by one
//! space:
//!
//! ```text
//! BENCH-PLAN <name> <name> ...           once, first: what this boot measures
//! BENCH <name> <iterations> <total>      one line per trial
//! BENCH-FAIL <name> <reason ...>         an experiment that broke
//! BENCH-DONE                             last, then power off
//! ```
//!
//! `<total>` is the difference of two `rdtsc` readings around all
//! `<iterations>` operations of one trial, in decimal. Under
//! `-icount shift=0` the TSC counts guest instructions, so the harness
//! reports `total / iterations` as instructions per operation, the median
//! (and min and max) of the trials.
//!
//! Each boot is started with the words `[quick] NAME ...` (Linux after `--`
//! on its command line, Veneer after `init=PROGRAM`): `quick` asks for tiny
//! iteration counts and one trial, and the names restrict the boot to those
//! benchmarks (all of its own when none of them is its own). Every boot
//! measures `calib`, whatever it is asked: 10 000 iterations (100 when
//! quick) of a loop of 998 `nop`s, `dec` and `jnz`, which must read as 1000
//! instructions per iteration.
//!
//! # When a run passes
//!
//! Only when every boot ran to `BENCH-DONE` and exited cleanly, announced a
//! plan, was calibrated, and printed the same number of well-formed trials
//! for every name it announced, with no `BENCH-FAIL`; when every selected
//! row's benchmarks were announced by some boot; and, in a run that is not
//! `--quick`, when every Linux figure under the ERMS clock is within 10% of
//! its reference. A run that fails writes nothing but says why; a run that
//! passes writes `bench/results/` (and, when it ran everything, the tables
//! of `docs/benchmarks.md`).

mod boot;
pub mod linux;
mod marks;
mod profile;
mod report;
mod rows;
mod tree;
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

/// The CPU model both sides boot on, which decides how string instructions
/// are charged (see `docs/benchmarks.md`, "Method"). Under `-icount` each
/// iteration of a `rep`-prefixed instruction counts once, so a kernel that
/// copies with `rep movsb` (as Linux does when the CPU advertises ERMS or
/// FSRM) pays eight times what one copying with `rep movsq` pays for the
/// same bytes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Clock {
    /// No ERMS or FSRM: both kernels copy and clear eight bytes per count.
    Fair,
    /// QEMU's `max` as is (ERMS advertised): the sensitivity table.
    Erms,
}

impl Clock {
    pub fn cpu(self) -> &'static str {
        match self {
            Clock::Fair => "max,-erms,-fsrm",
            Clock::Erms => "max",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Clock::Fair => "fair",
            Clock::Erms => "erms",
        }
    }
}

impl Options {
    /// QEMU's acceleration and CPU arguments: instruction counting by
    /// default.
    fn machine(&self, clock: Clock) -> Vec<String> {
        let accel: &[&str] = if self.kvm {
            &["-accel", "kvm"]
        } else {
            &["-accel", "tcg", "-icount", "shift=0,align=off,sleep=off"]
        };
        accel.iter().chain(&["-cpu", clock.cpu()]).map(|s| s.to_string()).collect()
    }

    /// The clocks this run measures under: the fair one, and for a run that
    /// produces results under instruction counting the ERMS one too.
    fn clocks(&self) -> &'static [Clock] {
        if self.quick || self.kvm {
            &[Clock::Fair]
        } else {
            &[Clock::Fair, Clock::Erms]
        }
    }

    /// How long one boot may take: a full boot under TCG takes a few
    /// minutes on a busy machine; KVM is faster still, and a KVM that opens
    /// but never runs the guest should not stall the run.
    fn timeout(&self) -> Duration {
        Duration::from_secs(match (self.quick, self.kvm) {
            (_, true) => 120,
            (true, false) => 150,
            (false, false) => 900,
        })
    }

    /// Whether this run's boots run the I/O-intensive workload: a full run
    /// does, a quick one only when the row is named (it is minutes of
    /// guest time: `tree`).
    fn runs_tree(&self) -> bool {
        if self.names.is_empty() {
            !self.quick
        } else {
            self.names.iter().any(|n| n == tree::TOTAL)
        }
    }

    /// How long a boot that may run the workload (Linux's, Veneer's
    /// `veneer::TREE`) may take: each trial is some 21 billion guest
    /// instructions on Veneer's side, minutes under TCG with the plugin.
    fn timeout_with_tree(&self) -> Duration {
        if self.runs_tree() {
            self.timeout().max(tree::TIMEOUT)
        } else {
            self.timeout()
        }
    }
}

/// What one boot's serial console said.
#[derive(Default)]
pub struct Side {
    pub plan: Option<Vec<String>>,
    /// Per benchmark, the trials as (iterations, total).
    pub trials: BTreeMap<String, Vec<(u64, u64)>>,
    pub failed: Vec<String>,
    /// `BENCH` lines that did not parse: each is a lost trial.
    pub garbled: Vec<String>,
    pub done: bool,
    /// Its figures were counted by the instruction-counting plugin (the
    /// boot row's Veneer boots), not read from the time-stamp counter:
    /// there is no clock to calibrate.
    pub counted: bool,
    /// Why the boot did not end as it should (died, hung, timed out).
    pub problem: Option<String>,
    /// Per phase of the I/O workload, each trial's disk requests and bytes
    /// (`IO NAME REQUESTS BYTES` lines: `tree::print_io`).
    pub io: BTreeMap<String, Vec<(u64, u64)>>,
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
            if let Some(rest) = line.strip_prefix("IO ") {
                if let [name, reqs, bytes] = rest.split_whitespace().collect::<Vec<_>>()[..] {
                    if let (Ok(r), Ok(b)) = (reqs.parse(), bytes.parse()) {
                        side.io.entry(name.to_string()).or_default().push((r, b));
                    }
                }
                continue;
            }
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
                    match fields[..] {
                        [name, iterations, total] => match (iterations.parse(), total.parse()) {
                            (Ok(n), Ok(t)) if n > 0 => {
                                side.trials.entry(name.to_string()).or_default().push((n, t))
                            }
                            _ => side.garbled.push(line[at..].to_string()),
                        },
                        _ => side.garbled.push(line[at..].to_string()),
                    }
                }
                _ => side.garbled.push(line[at..].to_string()),
            }
        }
        side
    }

    /// Gives every benchmark but the calibration the name `NAME<suffix>`
    /// (a nested boot's rows, `veneer::NESTED`).
    pub fn rename(&mut self, suffix: &str) {
        if suffix.is_empty() {
            return;
        }
        let new = |n: &str| if n == rows::CALIBRATION { n.to_string() } else { format!("{n}{suffix}") };
        for p in self.plan.iter_mut().flatten() {
            *p = new(p);
        }
        self.trials = std::mem::take(&mut self.trials).into_iter().map(|(n, t)| (new(&n), t)).collect();
        for f in &mut self.failed {
            let (name, why) = f.split_once(' ').unwrap_or((f.as_str(), ""));
            *f = format!("{} {why}", new(name)).trim_end().to_string();
        }
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

    fn announced(&self, name: &str) -> bool {
        self.plan.iter().flatten().any(|p| p == name)
    }

    /// Why this one boot cannot be trusted, if it cannot: it died or hung,
    /// announced nothing, was not calibrated, lost or broke a trial.
    fn verify(&self, who: &str, kvm: bool) -> Vec<String> {
        let mut errors = Vec::new();
        if let Some(problem) = &self.problem {
            errors.push(format!("{who}: {problem}"));
        } else if !self.done {
            errors.push(format!("{who}: stopped before BENCH-DONE"));
        }
        let Some(plan) = &self.plan else {
            errors.push(format!("{who}: announced no BENCH-PLAN"));
            return errors;
        };
        for line in &self.garbled {
            errors.push(format!("{who}: garbled line `{line}` (a trial is lost)"));
        }
        for failure in &self.failed {
            errors.push(format!("{who}: BENCH-FAIL {failure}"));
        }
        let calib = self.figure(rows::CALIBRATION);
        if self.counted {
            return errors;
        }
        match calib {
            None => errors.push(format!("{who}: not calibrated (no `{}` figure)", rows::CALIBRATION)),
            Some(f) if !kvm && (f.median / rows::CALIBRATION_INSNS - 1.0).abs() > 0.01 => errors.push(format!(
                "{who}: the {}-instruction calibration loop reads {:.1}: the clock is not counting instructions",
                rows::CALIBRATION_INSNS,
                f.median
            )),
            Some(_) => {}
        }
        for name in plan {
            match (self.figure(name), calib) {
                (None, _) => errors.push(format!("{who}: announced `{name}` but printed no figure")),
                (Some(f), Some(c)) if f.trials != c.trials => errors.push(format!(
                    "{who}: `{name}` has {} trials where the calibration has {} (a trial is lost)",
                    f.trials, c.trials
                )),
                _ => {}
            }
        }
        errors
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

/// Both sides measured under one clock.
pub struct Run {
    pub clock: Clock,
    pub linux: Side,
    /// Each Veneer boot by program name, and what it said.
    pub veneer_boots: Vec<(String, Side)>,
    /// Every Veneer boot's lines together.
    pub veneer: Side,
}

pub fn main(args: &[String]) -> Result<(), String> {
    let mut opts = Options { quick: false, kvm: false, names: Vec::new() };
    let mut profiling = false;
    for arg in args {
        match arg.as_str() {
            "--quick" => opts.quick = true,
            "--kvm" => opts.kvm = true,
            "--profile" => profiling = true,
            name if rows::ROWS.iter().any(|r| r.name == name) => opts.names.push(name.into()),
            other => {
                let names: Vec<&str> = rows::ROWS.iter().map(|r| r.name).collect();
                return Err(format!("bench: unknown argument `{other}`; experiments: {}", names.join(" ")));
            }
        }
    }
    // The workload's phases are one run: naming one names them all.
    if opts.names.iter().any(|n| tree::is_part(n)) {
        opts.names.retain(|n| !tree::is_part(n));
        opts.names.extend(std::iter::once(tree::TOTAL).chain(tree::PHASES.iter().copied()).map(String::from));
    }
    if opts.kvm && std::fs::OpenOptions::new().read(true).write(true).open("/dev/kvm").is_err() {
        return Err("bench: --kvm needs a usable /dev/kvm".into());
    }
    crate::deps::ensure(crate::deps::TEST)?;

    let selected = select(&opts);
    let linux_names = distinct(selected.iter().filter_map(|r| r.linux));
    let veneer_names = distinct(selected.iter().filter_map(|r| r.veneer));
    if profiling {
        return profile::main(&opts, &veneer_names);
    }

    let mut runs = Vec::new();
    for &clock in opts.clocks() {
        println!("xtask: bench: clock `{}` (-cpu {})", clock.name(), clock.cpu());
        // The two sides are independent and their figures do not depend on
        // host load, so they run side by side.
        let (linux, veneer_boots) = std::thread::scope(|s| {
            let v = s.spawn(|| veneer::run(&opts, clock, &veneer_names));
            let l = linux::run(&opts, clock, &linux_names);
            (l, v.join().unwrap_or_else(|_| vec![("Veneer".into(), Side::absent("panicked".into()))]))
        });
        let mut linux = linux.unwrap_or_else(Side::absent);
        let mut veneer_boots = veneer_boots;
        if selected.iter().any(|r| r.name == boot::NAME) {
            let trials = linux.figure(rows::CALIBRATION).map_or(1, |f| f.trials);
            let mut side = Side { plan: Some(Vec::new()), done: true, counted: true, ..Side::default() };
            boot::measure(&opts, clock, trials, &mut linux, &mut side);
            veneer_boots.push((boot::NAME.into(), side));
        }
        let veneer = veneer::merge(veneer_boots.iter().map(|(_, s)| s));
        runs.push(Run { clock, linux, veneer_boots, veneer });
    }

    let results = report::Results::new(&opts, &selected, &runs);
    results.print();
    for run in &runs {
        tree::print_io(run.clock.name(), &run.linux, &run.veneer);
    }
    let errors: Vec<String> = runs.iter().flat_map(|run| check(&opts, &selected, run)).collect();
    if !errors.is_empty() {
        return Err(format!(
            "bench: FAILED; no results were written ({} problem{}):\n  {}",
            errors.len(),
            if errors.len() == 1 { "" } else { "s" },
            errors.join("\n  ")
        ));
    }
    results.save()
}

/// The rows a run measures: those named, or all of them (but the
/// I/O-intensive workload's in a quick run); the calibration row runs in
/// every boot, whatever was asked.
fn select(opts: &Options) -> Vec<&'static rows::Row> {
    rows::ROWS
        .iter()
        .filter(|r| {
            r.name == rows::CALIBRATION
                || (opts.names.is_empty() && (opts.runs_tree() || !tree::is_part(r.name)))
                || opts.names.iter().any(|n| n == r.name)
        })
        .collect()
}

fn distinct<'a>(names: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut v: Vec<&str> = names.collect();
    v.sort();
    v.dedup();
    v
}

/// Everything that makes one clock's run untrustworthy (see the module
/// documentation, "When a run passes").
fn check(opts: &Options, rows: &[&rows::Row], run: &Run) -> Vec<String> {
    let clock = run.clock.name();
    let mut errors = Vec::new();
    errors.extend(run.linux.verify(&format!("Linux ({clock})"), opts.kvm));
    for (program, side) in &run.veneer_boots {
        errors.extend(side.verify(&format!("Veneer {program} ({clock})"), opts.kvm));
    }
    for row in rows {
        if let Some(name) = row.linux.filter(|n| !run.linux.announced(n)) {
            errors.push(format!("Linux ({clock}) never announced `{name}` (row `{}`)", row.name));
        }
        if let Some(name) = row.veneer.filter(|n| !run.veneer.announced(n)) {
            errors.push(format!("Veneer ({clock}): no boot announced `{name}` (row `{}`)", row.name));
        }
        let reference_applies = run.clock == Clock::Erms && !opts.quick && !opts.kvm;
        if let (true, Some(r), Some(f)) =
            (reference_applies, row.reference, row.linux.and_then(|n| run.linux.figure(n)))
        {
            if (f.median / r - 1.0).abs() > 0.10 {
                errors.push(format!(
                    "Linux ({clock}) reads {:.0} for `{}`, {:+.1}% off its reference {r:.0}: the Linux side does not \
                     reproduce the independent measurement",
                    f.median,
                    row.name,
                    (f.median / r - 1.0) * 100.0
                ));
            }
        }
    }
    errors
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
        // Zero iterations cannot give a figure; both bad lines are lost trials.
        assert!(side.figure("fork").is_none());
        assert_eq!(side.garbled, ["BENCH fork 0 5", "BENCH broken line"]);
    }

    #[test]
    fn parses_the_io_lines_apart_from_the_figures() {
        let side = Side::parse("IO tree_cp 12 4096\nIO tree_cp 14 8192\nIO tree_rm x 1\nBENCH tree_cp 1 5\n");
        assert_eq!(side.io.get("tree_cp").map(Vec::as_slice), Some(&[(12, 4096), (14, 8192)][..]));
        assert!(!side.io.contains_key("tree_rm"));
        assert!(side.garbled.is_empty());
        assert_eq!(side.figure("tree_cp").map(|f| f.trials), Some(1));
    }

    const CALIB: &str = "BENCH calib 10 10000\n";

    fn fork_rows() -> Vec<&'static rows::Row> {
        rows::ROWS.iter().filter(|r| r.name == "fork" || r.name == rows::CALIBRATION).collect()
    }

    fn quick() -> Options {
        Options { quick: true, kvm: false, names: Vec::new() }
    }

    /// A run of the fork row under the fair clock: Linux's console, and one
    /// Veneer boot's.
    fn run(linux: &str, veneer: Side) -> Run {
        let merged = veneer::merge([&veneer]);
        Run {
            clock: Clock::Fair,
            linux: Side::parse(linux),
            veneer_boots: vec![("bench_libos".into(), veneer)],
            veneer: merged,
        }
    }

    const LINUX: &str = "BENCH-PLAN calib fork\nBENCH calib 10 10000\nBENCH fork 10 2500000\nBENCH-DONE\n";
    const VENEER: &str = "BENCH-PLAN calib fork\nBENCH calib 10 10000\nBENCH fork 10 2000000\nBENCH-DONE\n";

    #[test]
    fn the_workload_runs_in_a_quick_run_only_when_named() {
        let names = |o: &Options| select(o).iter().map(|r| r.name).collect::<Vec<_>>();
        let tree_rows = |o: &Options| names(o).into_iter().filter(|n| tree::is_part(n)).count();
        assert_eq!(tree_rows(&quick()), 0);
        assert!(!quick().runs_tree());
        let full = Options { quick: false, kvm: false, names: Vec::new() };
        assert_eq!(tree_rows(&full), tree::PHASES.len() + 1);
        assert!(full.runs_tree() && full.timeout_with_tree() == tree::TIMEOUT);
        let named = Options { names: vec![tree::TOTAL.into()], ..quick() };
        assert_eq!(names(&named), [rows::CALIBRATION, tree::TOTAL]);
        assert!(named.runs_tree());
        // Other rows named: no workload, and the usual timeout.
        let other = Options { quick: false, kvm: false, names: vec!["fork".into()] };
        assert!(!other.runs_tree() && other.timeout_with_tree() == other.timeout());
    }

    #[test]
    fn a_clean_run_passes() {
        assert_eq!(check(&quick(), &fork_rows(), &run(LINUX, Side::parse(VENEER))), Vec::<String>::new());
    }

    #[test]
    fn announced_rows_without_figures_fail() {
        let silent = Side::parse(&format!("BENCH-PLAN calib fork\n{CALIB}BENCH-DONE\n"));
        assert!(!check(&quick(), &fork_rows(), &run(LINUX, silent)).is_empty());
    }

    #[test]
    fn a_veneer_boot_that_dies_fails_the_run() {
        let died = Side::absent("stopped early (QEMU exit Some(1))".into());
        let errors = check(&quick(), &fork_rows(), &run(LINUX, died));
        assert!(errors.iter().any(|e| e.contains("stopped early")), "{errors:?}");
        // ... and its rows were never announced.
        assert!(errors.iter().any(|e| e.contains("no boot announced `fork`")), "{errors:?}");
    }

    #[test]
    fn a_boot_that_never_says_done_fails_the_run() {
        let cut = Side::parse(&format!("BENCH-PLAN calib fork\n{CALIB}BENCH fork 10 2000000\n"));
        assert!(check(&quick(), &fork_rows(), &run(LINUX, cut)).iter().any(|e| e.contains("BENCH-DONE")));
    }

    #[test]
    fn a_row_no_boot_announces_fails_the_run() {
        let other =
            Side::parse(&format!("BENCH-PLAN calib spawn\n{CALIB}BENCH spawn 10 2000000\nBENCH-DONE\n"));
        let errors = check(&quick(), &fork_rows(), &run(LINUX, other));
        assert!(errors.iter().any(|e| e.contains("no boot announced `fork`")), "{errors:?}");
    }

    #[test]
    fn a_garbled_trial_fails_the_run() {
        let garbled = LINUX.replace("BENCH-DONE", "BENCH fork 10 25x0000\nBENCH-DONE");
        let errors = check(&quick(), &fork_rows(), &run(&garbled, Side::parse(VENEER)));
        assert!(errors.iter().any(|e| e.contains("garbled")), "{errors:?}");
        // A trial missing altogether shows in the count.
        let lost = "BENCH-PLAN calib fork\nBENCH calib 10 10000\nBENCH calib 10 10000\nBENCH fork 10 2500000\nBENCH-DONE\n";
        let errors = check(&quick(), &fork_rows(), &run(lost, Side::parse(VENEER)));
        assert!(errors.iter().any(|e| e.contains("trial is lost")), "{errors:?}");
    }

    #[test]
    fn every_boot_must_be_calibrated_by_instruction_counts() {
        let uncalibrated = Side::parse("BENCH-PLAN fork\nBENCH fork 10 2000000\nBENCH-DONE\n");
        let errors = check(&quick(), &fork_rows(), &run(LINUX, uncalibrated));
        assert!(errors.iter().any(|e| e.contains("not calibrated")), "{errors:?}");
        let wall_clock = LINUX.replace("10 10000", "10 31337");
        let errors = check(&quick(), &fork_rows(), &run(&wall_clock, Side::parse(VENEER)));
        assert!(errors.iter().any(|e| e.contains("not counting instructions")), "{errors:?}");
    }

    #[test]
    fn a_linux_figure_far_from_its_reference_fails_a_full_run() {
        let full = Options { quick: false, kvm: false, names: Vec::new() };
        // fork's reference is 288,362: 200,000 is 31% off, 270,000 6%.
        let far = LINUX.replace("2500000", "2000000");
        let mut r = run(&far, Side::parse(VENEER));
        r.clock = Clock::Erms;
        assert!(check(&full, &fork_rows(), &r).iter().any(|e| e.contains("reference")));
        let near = LINUX.replace("2500000", "2700000");
        let mut r = run(&near, Side::parse(VENEER));
        r.clock = Clock::Erms;
        assert_eq!(check(&full, &fork_rows(), &r), Vec::<String>::new());
        // The references were taken with ERMS advertised: not a fair-clock check.
        let r = run(&far, Side::parse(VENEER));
        assert_eq!(check(&full, &fork_rows(), &r), Vec::<String>::new());
    }
}
