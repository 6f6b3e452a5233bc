//! `cargo xtask faults`: the fault-injection campaign of paper 004 §4 on
//! Veneer's driver images. Each trial injects five random faults of one
//! type (Table II; the types take turns, so 400 trials are 50 of each)
//! into the executed code of one driver image (`inject.rs`,
//! `executed.rs`), boots Veneer twice with that same image — "native"
//! (`isolation=off`) and isolated — with a workload that checks its own
//! data (`user/src/bin/faultload.rs`), and classifies each boot
//! (`classify.rs`). The isolated boot restarts a failed driver
//! (`recover=restart`; `--no-recover` leaves it disabled), from the clean
//! image: the faulty one boots as `drv/NAME.injected`, standing for code
//! damaged in memory, as Nooks' injector damaged it (paper 004 §3.5).
//! Trials are seeded: `--seed S --first T --trials 1` replays trial T.
//! See docs/drivers.md.

mod chart;
mod classify;
mod executed;
mod inject;

use crate::build::{self, KERNEL_TARGET, USER_TARGET};
use crate::cpio::Archive;
use crate::qemu::{self, Outcome};
use classify::{Class, CLASSES};
use inject::{Kind, Rng, Text, KINDS};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// Faults per trial (paper 004 §4.1.3).
const FAULTS_PER_TRIAL: usize = 5;
/// A trial's boot ends here at the latest (a kernel hang).
const TRIAL_TIMEOUT: Duration = Duration::from_secs(40);

/// The trace boot's clock (`executed.rs`): guest time counts instructions,
/// 1 ns each, so that QEMU's logging, which slows the guest a hundred
/// times, does not spend the watchdog's budget. (Trials keep the host's
/// clock: counting instructions makes them five times slower.)
const GUEST_CLOCK: &[&str] = &["-icount", "shift=0"];

/// The drivers the campaign knows: image name and workload.
const DRIVERS: &[(&str, &str)] = &[("virtio-blk", "blk"), ("virtio-net", "net")];

/// The two configurations of every trial (identical binaries).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Config {
    Native,
    Isolated,
}

impl Config {
    fn name(self) -> &'static str {
        match self {
            Config::Native => "native",
            Config::Isolated => "isolated",
        }
    }
}

/// What every boot needs: the kernel, the first program, and the clean
/// driver images; boots get a small boot file system of their own.
pub struct Boot {
    kernel: PathBuf,
    /// The workloads' program (`user/src/bin/faultload.rs`).
    workload: Vec<u8>,
    drivers: Vec<(&'static str, Vec<u8>)>,
}

static NEXT_BOOT: AtomicUsize = AtomicUsize::new(0);

impl Boot {
    /// Builds the kernel, the driver images and the first program; boots
    /// `kernel` instead of the kernel built, when given.
    fn build(kernel: Option<&PathBuf>) -> Result<Boot, String> {
        crate::deps::ensure(crate::deps::TEST)?;
        let release = |t: &str, name: &str| build::root().join("target").join(t).join("release").join(name);
        build::cargo(&["build", "--release", "-p", "kernel", "--target", KERNEL_TARGET], &[])?;
        let mut args = vec!["build", "--release", "--target", KERNEL_TARGET];
        let crates: Vec<String> = build::DRIVERS.iter().map(|d| format!("{d}-driver")).collect();
        for c in &crates {
            args.extend(["-p", c.as_str()]);
        }
        build::cargo(&args, &[])?;
        build::cargo(
            &["build", "--release", "-p", "user", "--bin", "faultload", "--target", USER_TARGET],
            &[],
        )?;
        let read = |p: PathBuf| std::fs::read(&p).map_err(|e| format!("reading {}: {e}", p.display()));
        let mut drivers = Vec::new();
        for d in build::DRIVERS {
            drivers.push((*d, read(release(KERNEL_TARGET, d))?));
        }
        // A copy: the kernel may be rebuilt while a long campaign runs.
        let copy = build::root().join(format!("target/faults/kernel-{}", std::process::id()));
        std::fs::create_dir_all(build::root().join("target/faults")).map_err(|e| e.to_string())?;
        let from = kernel.cloned().unwrap_or(release(KERNEL_TARGET, "kernel"));
        std::fs::copy(&from, &copy).map_err(|e| format!("copying the kernel {}: {e}", from.display()))?;
        let kernel = copy;
        Ok(Boot { kernel, workload: read(release(USER_TARGET, "faultload"))?, drivers })
    }

    /// Boots with `faulty` in place of its clean driver image, `words` on
    /// the command line and `extra` for QEMU: the outcome and the disk
    /// image afterwards.
    fn run_with(
        &self,
        faulty: &[(&str, &[u8])],
        words: &str,
        extra: &[&str],
    ) -> Result<(Outcome, Vec<u8>), String> {
        let n = NEXT_BOOT.fetch_add(1, Ordering::SeqCst);
        let dir = build::root().join("target/faults/tmp");
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let stem = dir.join(format!("{}-{n}", std::process::id()));
        let (bootfs, disk) = (stem.with_extension("cpio"), stem.with_extension("img"));
        let mut ar = Archive::default();
        ar.dir("bin");
        ar.file("bin/faultload", 0o755, &self.workload);
        ar.dir("drv");
        for (name, clean) in &self.drivers {
            ar.file(&format!("drv/{name}"), 0o644, clean);
            if let Some(f) = faulty.iter().find(|f| f.0 == *name) {
                ar.file(&format!("drv/{name}.injected"), 0o644, f.1);
            }
        }
        std::fs::write(&bootfs, ar.finish()).map_err(|e| e.to_string())?;
        crate::disk::create(&disk)?;
        let img = build::Image { kernel: self.kernel.clone(), bootfs: bootfs.clone() };
        let mut args = qemu::base_args(&img, &format!("faultload {words}"));
        args.extend(qemu::device_args(&disk, 0));
        args.extend(extra.iter().map(|s| s.to_string()));
        let out = qemu::headless(&args, TRIAL_TIMEOUT, &[]);
        let image = std::fs::read(&disk).unwrap_or_default();
        let _ = std::fs::remove_file(&bootfs);
        let _ = std::fs::remove_file(&disk);
        Ok((out?, image))
    }

    fn run(&self, faulty: &[(&str, &[u8])], words: &str, extra: &[&str]) -> Result<Outcome, String> {
        self.run_with(faulty, words, extra).map(|r| r.0)
    }

    fn clean(&self, name: &str) -> &[u8] {
        &self.drivers.iter().find(|d| d.0 == name).expect("a known driver").1
    }
}

/// One trial: its faults and, per configuration, its class, what stopped
/// the driver, and why.
struct Trial {
    index: usize,
    kind: Kind,
    faults: Vec<inject::Fault>,
    image: Vec<u8>,
    runs: [Option<(Class, &'static str, String)>; 2],
    /// Isolated: microseconds from the driver's first failure to a
    /// request it ended well after its restart.
    service_us: Option<f64>,
}

/// The faulty image of trial `index` of `name` under `seed`.
fn make_trial(clean: &[u8], executed: &[u64], name: &str, seed: u64, index: usize) -> Result<Trial, String> {
    let kind = KINDS[index % KINDS.len()];
    let salt = name.bytes().fold(0u64, |h, b| h.rotate_left(5) ^ u64::from(b));
    let mut rng = Rng::new(seed ^ salt ^ (index as u64).wrapping_mul(0xD134_2543_DE82_EF95));
    let mut image = clean.to_vec();
    let (base, off, len) = executed::text_segment(clean)?;
    let mut text = Text { base, bytes: &mut image[off..off + len] };
    let faults = inject::inject(&mut text, executed, kind, FAULTS_PER_TRIAL, &mut rng);
    Ok(Trial { index, kind, faults, image, runs: [None, None], service_us: None })
}

struct Options {
    drivers: Vec<(&'static str, &'static str)>,
    /// The trials to run (`--first`, `--trials`).
    indices: Vec<usize>,
    seed: u64,
    jobs: usize,
    configs: Vec<Config>,
    /// Another kernel to boot (the same trials against an older one).
    kernel: Option<PathBuf>,
    /// More QEMU arguments for the trials (`--qemu "-icount shift=10"`: a
    /// slow machine, on which the watchdog fires during drivers' init).
    qemu: Vec<String>,
    /// Faults only in the data path (`--io`: code the drivers' init does
    /// not run).
    io_only: bool,
    /// The isolated boot restarts a failed driver (`recover=restart`;
    /// `--no-recover`: it stays disabled).
    recover: bool,
}

fn parse(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        drivers: Vec::new(),
        indices: Vec::new(),
        seed: 1,
        jobs: 2,
        configs: Vec::new(),
        kernel: None,
        qemu: Vec::new(),
        io_only: false,
        recover: true,
    };
    let (mut first, mut trials) = (0, 400);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut num = |what: &str| -> Result<u64, String> {
            it.next().and_then(|v| v.parse().ok()).ok_or(format!("{what} needs a number"))
        };
        match a.as_str() {
            "--trials" => trials = num("--trials")? as usize,
            "--first" => first = num("--first")? as usize,
            "--seed" => o.seed = num("--seed")?,
            "--jobs" => o.jobs = (num("--jobs")? as usize).max(1),
            "--native" => o.configs.push(Config::Native),
            "--io" => o.io_only = true,
            "--no-recover" => o.recover = false,
            "--isolated" => o.configs.push(Config::Isolated),
            "--kernel" => o.kernel = Some(PathBuf::from(it.next().ok_or("--kernel needs a path")?)),
            "--qemu" => {
                o.qemu.extend(it.next().ok_or("--qemu needs arguments")?.split_whitespace().map(String::from))
            }
            "all" => o.drivers.extend(DRIVERS),
            d => o
                .drivers
                .push(*DRIVERS.iter().find(|x| x.0 == d).ok_or(format!("unknown driver or option {d}"))?),
        }
    }
    if o.drivers.is_empty() {
        return Err("usage: cargo xtask faults DRIVER|all [--trials N] [--first T] [--seed S] [--jobs J] [--native] [--isolated] [--io] [--no-recover] [--kernel PATH] [--qemu ARGS]".into());
    }
    if o.configs.is_empty() {
        o.configs = vec![Config::Native, Config::Isolated];
    }
    o.indices = (first..first + trials).collect();
    Ok(o)
}

pub fn main(args: &[String]) -> Result<(), String> {
    if args.iter().any(|a| a == "--quick") {
        return quick();
    }
    if args.first().is_some_and(|a| a == "chart") {
        return chart::main(&args[1..]);
    }
    let o = parse(args)?;
    let boot = Boot::build(o.kernel.as_ref())?;
    for &(name, workload) in &o.drivers {
        let trials = campaign(&boot, &o, name, workload)?;
        let report = report(&o, name, &trials);
        print!("{report}");
        let other = if o.kernel.is_some() { "-other-kernel" } else { "" };
        let (first, n) = (o.indices[0], o.indices.len());
        let io = if o.io_only { "-io" } else { "" };
        let norec = if o.recover { "" } else { "-norecover" };
        let file = format!("target/faults/{name}-seed{}-{first}x{n}{io}{norec}{other}.txt", o.seed);
        let path = build::root().join(file);
        std::fs::write(&path, &report).map_err(|e| e.to_string())?;
        println!("xtask: wrote {}", path.display());
    }
    let _ = std::fs::remove_file(&boot.kernel);
    Ok(())
}

/// `cargo xtask test`'s trials: the first eight of each driver (one of each
/// fault type, seed 1) in the data path, isolated. None may crash or hang
/// the kernel. Each has five faults, or as many as its type finds there
/// (virtio-net's data path has four backward branches; virtio-blk's, the
/// one-page write path a boot's own reads do not run, has neither a call
/// nor a backward branch, so its interface and loop trials find none):
/// a trial without faults is reported, and a driver with fewer than
/// `MIN_FAULTED` trials that had faults fails (the injector found nothing).
const QUICK_TRIALS: usize = 8;
const MIN_FAULTED: usize = QUICK_TRIALS - 2;

fn quick() -> Result<(), String> {
    let boot = Boot::build(None)?;
    let mut bad = Vec::new();
    for &(name, workload) in DRIVERS {
        let o = Options {
            drivers: Vec::new(),
            indices: (0..QUICK_TRIALS).collect(),
            seed: 1,
            jobs: 2,
            configs: vec![Config::Isolated],
            kernel: None,
            qemu: Vec::new(),
            io_only: true,
            recover: true,
        };
        let trials = campaign(&boot, &o, name, workload)?;
        for t in &trials {
            let class = t.runs[Config::Isolated as usize].as_ref().map(|r| r.0);
            if class.is_none_or(Class::is_kernel) {
                bad.push(format!("{name} trial {}: {} faults, {class:?}", t.index, t.faults.len()));
            }
        }
        let empty: Vec<String> =
            trials.iter().filter(|t| t.faults.is_empty()).map(|t| t.index.to_string()).collect();
        if !empty.is_empty() {
            println!(
                "xtask: faults: {name}: trials {} found no site for their type in the data path",
                empty.join(", ")
            );
        }
        if trials.len() - empty.len() < MIN_FAULTED {
            bad.push(format!(
                "{name}: only {} of {} trials had faults",
                trials.len() - empty.len(),
                trials.len()
            ));
        }
    }
    let _ = std::fs::remove_file(&boot.kernel);
    if !bad.is_empty() {
        return Err(format!("fault injection: {}", bad.join("; ")));
    }
    println!(
        "xtask: faults: {} trials in the data path, isolated: none crashed or hung the kernel",
        2 * QUICK_TRIALS
    );
    Ok(())
}

/// Runs the trials of one driver, both configurations, `o.jobs` boots at
/// a time.
fn campaign(boot: &Boot, o: &Options, name: &str, workload: &str) -> Result<Vec<Trial>, String> {
    let clean = boot.clean(name);
    let executed = executed::executed(boot, name, clean, o.io_only)?;
    println!(
        "xtask: faults: {name}: {} executed instructions{}; {} trials from {} (seed {}), {} faults each, {}{}",
        executed.len(),
        if o.io_only { " on the data path" } else { "" },
        o.indices.len(),
        o.indices[0],
        o.seed,
        FAULTS_PER_TRIAL,
        o.configs.iter().map(|c| c.name()).collect::<Vec<_>>().join(" and "),
        if o.recover { " (isolated: recover=restart)" } else { "" }
    );
    let trials: Vec<Mutex<Trial>> = (o.indices.iter().copied())
        .map(|t| make_trial(clean, &executed, name, o.seed, t).map(Mutex::new))
        .collect::<Result<_, _>>()?;
    let work: Vec<(usize, Config)> =
        (0..trials.len()).flat_map(|t| o.configs.iter().map(move |&c| (t, c))).collect();
    let next = AtomicUsize::new(0);
    let failure = Mutex::new(None);
    std::thread::scope(|s| {
        for _ in 0..o.jobs {
            s.spawn(|| {
                while let Some(&(t, config)) = work.get(next.fetch_add(1, Ordering::SeqCst)) {
                    if let Err(e) = run_trial(boot, (name, workload), &trials[t], config, o) {
                        *failure.lock().unwrap() = Some(e);
                    }
                }
            });
        }
    });
    if let Some(e) = failure.into_inner().unwrap() {
        return Err(e);
    }
    Ok(trials.into_iter().map(|m| m.into_inner().unwrap()).collect())
}

/// Boots `trial`'s image in `config`, classifies it and records it.
fn run_trial(
    boot: &Boot,
    (name, workload): (&str, &str),
    trial: &Mutex<Trial>,
    config: Config,
    o: &Options,
) -> Result<(), String> {
    let image = trial.lock().unwrap().image.clone();
    let words = match config {
        Config::Native => format!("{workload} isolation=off"),
        Config::Isolated if o.recover => format!("{workload} recover=restart"),
        Config::Isolated => workload.to_string(),
    };
    let extra: Vec<&str> = o.qemu.iter().map(String::as_str).collect();
    let (out, disk) = boot.run_with(&[(name, &image)], &words, &extra)?;
    let (class, why) = classify::classify(&out, workload, &disk, crate::disk::SECTORS);
    let det = classify::detector(&out.serial, name);
    let mut tr = trial.lock().unwrap();
    if class != Class::NoEffect || det != "-" {
        save_log(name, tr.index, config, &out.serial);
    }
    let (index, kind) = (tr.index, tr.kind.name());
    println!("trial {name} {index} {kind:<11} {:<8} {:<6} {det:<13} {why}", config.name(), class.short());
    tr.runs[config as usize] = Some((class, det, why));
    if config == Config::Isolated {
        tr.service_us = classify::service_us(&out.serial, name);
    }
    Ok(())
}

fn save_log(name: &str, index: usize, config: Config, serial: &str) {
    let dir = build::root().join("target/faults/logs");
    let _ = std::fs::create_dir_all(&dir)
        .and_then(|_| std::fs::write(dir.join(format!("{name}-{index}-{}.serial", config.name())), serial));
}

/// The table (beside the paper's figures) and every trial's line.
fn report(o: &Options, name: &str, trials: &[Trial]) -> String {
    let mut r = String::new();
    let count = |c: Config, class: Class| {
        trials.iter().filter(|t| t.runs[c as usize].as_ref().is_some_and(|x| x.0 == class)).count()
    };
    let _ = writeln!(
        r,
        "\n{name}: {} trials from {} (seed {}), {FAULTS_PER_TRIAL} faults each{}, the {} types in turn; isolated {}",
        trials.len(),
        o.indices[0],
        o.seed,
        if o.io_only { " in the data path" } else { "" },
        KINDS.len(),
        if o.recover { "with recover=restart" } else { "without recovery" }
    );
    let _ = writeln!(r, "{:<22} {:>8} {:>9}", "outcome", "native", "isolated");
    for class in CLASSES {
        let _ = writeln!(
            r,
            "{:<22} {:>8} {:>9}",
            class.name(),
            count(Config::Native, class),
            count(Config::Isolated, class)
        );
    }
    let fatal = |c: Config| CLASSES.iter().filter(|k| k.is_kernel()).map(|&k| count(c, k)).sum::<usize>();
    let (n, i) = (fatal(Config::Native), fatal(Config::Isolated));
    if n > 0 {
        let _ = writeln!(
            r,
            "kernel crashes and hangs: native {n}, isolated {i} ({:.1}% eliminated)",
            100.0 * (n as f64 - i as f64) / n as f64
        );
    }
    let class = |t: &Trial, c: Config| t.runs[c as usize].as_ref().map(|x| x.0);
    let intact = |c: Option<Class>| matches!(c, Some(Class::NoEffect | Class::Recovered));
    let crashed: Vec<&Trial> =
        trials.iter().filter(|t| class(t, Config::Native).is_some_and(Class::is_kernel)).collect();
    if !crashed.is_empty() {
        let saved = crashed.iter().filter(|t| intact(class(t, Config::Isolated))).count();
        let _ = writeln!(
            r,
            "native crashes and hangs whose isolated boot ended with the workload's data intact: {saved} of {} ({:.1}%)",
            crashed.len(),
            100.0 * saved as f64 / crashed.len() as f64
        );
    }
    let stopped: Vec<&Trial> = trials
        .iter()
        .filter(|t| t.runs[Config::Isolated as usize].as_ref().is_some_and(|x| x.1 != "-"))
        .collect();
    if !stopped.is_empty() {
        let recovered =
            stopped.iter().filter(|t| class(t, Config::Isolated) == Some(Class::Recovered)).count();
        let _ = writeln!(
            r,
            "isolated boots whose driver was stopped: {}; recovered (restarted, the workload passed with its data intact): {recovered} ({:.1}%)",
            stopped.len(),
            100.0 * recovered as f64 / stopped.len() as f64
        );
    }
    let failed: Vec<&Trial> =
        trials.iter().filter(|t| class(t, Config::Native).is_some_and(|c| c != Class::NoEffect)).collect();
    if !failed.is_empty() && trials.iter().all(|t| t.runs[1].is_some()) {
        let saved = failed.iter().filter(|t| intact(class(t, Config::Isolated))).count();
        let _ = writeln!(
            r,
            "native failures whose isolated boot ended with the workload's data intact: {saved} of {} ({:.1}%)",
            failed.len(),
            100.0 * saved as f64 / failed.len() as f64
        );
    }
    let mut times: Vec<f64> = trials.iter().filter_map(|t| t.service_us).collect();
    if !times.is_empty() {
        times.sort_by(f64::total_cmp);
        let at = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize] / 1000.0;
        let _ = writeln!(
            r,
            "time from a driver's failure to a request it ended well after its restart (isolated, {} boots): p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
            times.len(),
            at(0.5),
            at(0.99),
            at(1.0)
        );
    }
    let _ = writeln!(
        r,
        "paper 004 (Nooks, 2000 trials over five extensions): crashes native 317, Nooks 4 (98.7% eliminated, the rest deadlocks); non-fatal failures native 512, Nooks 212"
    );
    let changed =
        trials.iter().filter(|t| t.runs[0].as_ref().map(|x| x.0) != t.runs[1].as_ref().map(|x| x.0)).count();
    let _ = writeln!(r, "trials whose outcome isolation changed: {changed}");
    for (ci, c) in [Config::Native, Config::Isolated].into_iter().enumerate() {
        let mut by: BTreeMap<&str, usize> = BTreeMap::new();
        for t in trials {
            if let Some((_, det, _)) = &t.runs[ci] {
                *by.entry(det).or_default() += 1;
            }
        }
        let list: Vec<String> = by.iter().filter(|e| *e.0 != "-").map(|(d, n)| format!("{d} {n}")).collect();
        let _ = writeln!(
            r,
            "driver stopped ({}), by: {}",
            c.name(),
            if list.is_empty() { "nothing".into() } else { list.join(", ") }
        );
    }
    let _ = writeln!(r, "\ntrial kind native isolated faults");
    for t in trials {
        let run = |ci: usize| {
            t.runs[ci].as_ref().map_or("-".into(), |(c, d, why)| format!("{}({d}; {why})", c.short()))
        };
        let faults: Vec<String> = t.faults.iter().map(|f| f.to_string()).collect();
        let _ =
            writeln!(r, "{} {} | {} | {} | {}", t.index, t.kind.name(), run(0), run(1), faults.join("; "));
    }
    r
}
