//! The Veneer side: boots each with one benchmark program as the first
//! environment: the user program `bench` (the kernel's primitives) and the
//! library OS's `bench_libos` (virtual memory, pipes, fork, exec, spawn and
//! the Linux personality through `libos/`); and two kernel-driven boots of
//! the device benchmarks (`devbench`). Both get the same
//! command line words; each runs the names it knows (all of its own when
//! none are given) plus the calibration, and announces them in its
//! `BENCH-PLAN`. Every way a boot can fail (a build that breaks, a program
//! that dies, a boot that hangs) is a problem of that boot, which fails the
//! run.

use super::{Clock, Options, Side};
use crate::{build, qemu};

/// The benchmark programs, each booted once per clock. `devbench` is
/// not a program: the kernel runs its device benchmarks instead of a first
/// environment (`kernel/src/dev/bench.rs`), with the drivers isolated and,
/// in a second boot, not; and twice more on the IOMMU's machine (the word
/// `iommu`, which the kernel ignores), with translation on and off.
pub const PROGRAMS: &[&str] = &[
    "bench",
    "bench_libos",
    START,
    IO,
    TREE,
    XCP,
    "devbench",
    "devbench isolation=off",
    "devbench iommu",
    "devbench iommu iommu=off",
    "netbench",
];

/// The program-start, shell and pipe-streaming rows' boot: busybox's
/// shell runs `libos/root/bench/start.sh`, which runs Linux's program for
/// them (`libos/tests/c/startbench.c`) under lxrt, on a root holding
/// `START_PACKAGES` (Linux's initramfs holds the same).
pub const START: &str = "lxrt /bin/sh /bench/start.sh";
pub const START_PACKAGES: &[&str] = &["bash", "coreutils", "grep", "nginx", "python3-minimal", "sed"];

/// The storage rows' boot: busybox's shell runs `libos/root/bench/io.sh`,
/// which runs Linux's program for them (`libos/tests/c/iobench.c`) under
/// lxrt in `/data`, on a disk holding a fresh, empty C-FFS
/// (`data_disk`).
pub const IO: &str = "lxrt /bin/sh /bench/io.sh";

/// The I/O-intensive workload's boot (`super::tree`): busybox's shell
/// runs `libos/root/bench/tree.sh`, which runs Linux's program for it
/// (`libos/tests/c/iotree.c`) under lxrt in `/data`, on a disk like
/// `IO`'s and a root holding `tree::TOOLS` and the tree's archive, with
/// `TREE_MEMORY` (lxrt's `/data` keeps every file's data in its arena,
/// an eighth of the machine's memory, beside XN's cache pages).
pub const TREE: &str = "lxrt /bin/sh /bench/tree.sh";
pub const TREE_MEMORY: &str = "1536M";

/// The XCP row's boot: `libos/src/bin/xcp.rs` (a program of its own over
/// C-FFS and XN: XCP is a library's use of the disk interface, not a
/// system call lxrt's programs make), on a disk like `IO`'s.
pub const XCP: &str = "xcp";

/// Whether `program`'s boot gets a fresh C-FFS disk and the plugin that
/// counts the storage rows between their markers.
pub fn storage(program: &str) -> bool {
    program == IO || program == TREE || program == XCP
}

/// A fresh C-FFS disk of `linux::DATA_DISK_MIB` at `path` (the size of
/// Linux's ext4 disk), everything on it owned by root.
pub fn data_disk(path: &std::path::Path) -> Result<(), String> {
    let empty = build::root().join("target/bench/empty");
    let _ = std::fs::remove_dir_all(&empty);
    std::fs::create_dir_all(&empty).map_err(|e| e.to_string())?;
    let _ = std::fs::remove_file(path);
    crate::fstools::mkfs(&[
        path.display().to_string(),
        "--size".into(),
        super::linux::DATA_DISK_MIB.to_string(),
        "--from".into(),
        empty.display().to_string(),
        "--owner".into(),
        "0:0".into(),
    ])
}

/// The nesting levels of `bench_libos`'s rows (paper 003 §6): a row
/// `NAME_SUFFIX` is `bench_libos`'s `NAME` booted as `init=limiter @SPEC
/// bench_libos ...`, SPEC levels of `limiter` nesters around it (`tN`:
/// each interposing and passing every event).
pub const NESTED: &[(&str, &str)] =
    &[("1", "_n1"), ("2", "_n2"), ("3", "_n3"), ("4", "_n4"), ("t1", "_t1"), ("t2", "_t2")];

/// One boot: the program booted, the words it is given, and the suffix its
/// `BENCH` names get (empty but for nested boots).
struct Boot<'a> {
    program: String,
    names: Vec<&'a str>,
    suffix: &'static str,
}

/// The boots of a run: every program with all the names, and one nested
/// boot per level some selected row asks for, given the rows' base names.
fn boots<'a>(names: &[&'a str]) -> Vec<Boot<'a>> {
    let mut boots: Vec<Boot> =
        PROGRAMS.iter().map(|p| Boot { program: p.to_string(), names: names.to_vec(), suffix: "" }).collect();
    for &(spec, suffix) in NESTED {
        let base: Vec<&str> = names.iter().filter_map(|n| n.strip_suffix(suffix)).collect();
        if !base.is_empty() {
            boots.push(Boot { program: format!("limiter @{spec} bench_libos"), names: base, suffix });
        }
    }
    boots
}

/// What `program` boots on: `img`, with `START_PACKAGES` for `START`,
/// the workload's programs and archive for `TREE`.
pub fn image_for(img: &build::Image, program: &str) -> Result<build::Image, String> {
    let names = |list: &[&str]| list.iter().map(|p| p.to_string()).collect::<Vec<String>>();
    match program {
        START => build::with_packages(img, &names(START_PACKAGES)),
        TREE => build::with_files(img, "iotree", &names(super::tree::TOOLS), &super::tree::contents()?),
        _ => build::with_packages(img, &[]),
    }
}

/// Each boot's side, by its program.
pub fn run(opts: &Options, clock: Clock, names: &[&str]) -> Vec<(String, Side)> {
    // The workload's boot (and its packages and archive) only when it runs.
    let (img, start_img, tree_img) = match build::all().and_then(|img| {
        let start = image_for(&img, START)?;
        let tree = if opts.runs_tree() { Some(image_for(&img, TREE)?) } else { None };
        Ok((img, start, tree))
    }) {
        Ok(imgs) => imgs,
        Err(e) => return vec![("build".into(), Side::absent(format!("build failed: {e}")))],
    };
    let mut boots = boots(names);
    boots.retain(|b| b.program != TREE || tree_img.is_some());
    std::thread::scope(|s| {
        let sides: Vec<_> = boots
            .iter()
            .map(|b| {
                let img = match (b.program.as_str(), &tree_img) {
                    (START, _) => &start_img,
                    (TREE, Some(tree)) => tree,
                    _ => &img,
                };
                s.spawn(move || boot(opts, clock, b, img))
            })
            .collect();
        boots
            .iter()
            .zip(sides)
            .map(|(b, side)| {
                (b.program.clone(), side.join().unwrap_or_else(|_| Side::absent("panicked".into())))
            })
            .collect()
    })
}

/// One side from several boots: every plan, trial, failure and lost line;
/// done when all are; the first problem.
pub fn merge<'a>(sides: impl IntoIterator<Item = &'a Side>) -> Side {
    let mut all = Side { plan: Some(Vec::new()), done: true, ..Side::default() };
    for side in sides {
        all.plan.as_mut().expect("set above").extend(side.plan.iter().flatten().cloned());
        for (name, trials) in &side.trials {
            all.trials.entry(name.clone()).or_default().extend(trials);
        }
        for (name, trials) in &side.io {
            all.io.entry(name.clone()).or_default().extend(trials);
        }
        all.failed.extend(side.failed.iter().cloned());
        all.garbled.extend(side.garbled.iter().cloned());
        all.done &= side.done;
        all.problem = all.problem.or(side.problem.clone());
    }
    all
}

/// The QEMU arguments that boot Veneer with `init` as the first
/// environment, on this run's machine.
pub fn boot_args(opts: &Options, clock: Clock, img: &build::Image, init: &str) -> Vec<String> {
    let mut args = opts.machine(clock);
    // `base_args` sets the accelerator and the CPU model; this run's
    // replace them.
    let mut base = qemu::base_args(img, init).into_iter();
    while let Some(arg) = base.next() {
        if arg == "-accel" || arg == "-cpu" {
            base.next();
        } else if arg == "-append" {
            // No request deadline: under `-icount sleep=off` the guest's
            // clock races through its halts, and a request the host takes
            // a while over would count as a driver's failure.
            let words = base.next().unwrap_or_default();
            args.extend([arg, format!("deadline=off {words}")]);
        } else {
            args.push(arg);
        }
    }
    args
}

/// The command line words of `program`'s boot; a nested boot is always
/// given its names (`init=limiter @N bench_libos` alone would run
/// nothing but the calibration: bench_libos takes `@N` for a name).
pub fn init_words<'a>(opts: &Options, program: &'a str, names: &[&'a str], nested: bool) -> Vec<&'a str> {
    let mut init = vec![program];
    if opts.quick {
        init.push("quick");
    }
    if nested || !opts.names.is_empty() {
        init.extend(names);
    }
    init
}

/// Boots Veneer with `boot`'s program as the first environment.
fn boot(opts: &Options, clock: Clock, boot: &Boot, img: &build::Image) -> Side {
    let init = init_words(opts, &boot.program, &boot.names, !boot.suffix.is_empty()).join(" ");
    println!("xtask: bench: booting Veneer ({init}) on -cpu {}", clock.cpu());
    let mut args = boot_args(opts, clock, img, &init);
    if boot.program == TREE {
        if let Some(at) = args.iter().position(|a| a == "-m") {
            args[at + 1] = TREE_MEMORY.into();
        }
    }
    if boot.program.split(' ').any(|w| w == "iommu") {
        args.extend(qemu::IOMMU_MACHINE.iter().map(|s| s.to_string()));
    }
    // Boots run at once: each storage boot has its own disk and files
    // (two are lxrt's: the tag is the whole command).
    let tag: String = boot.program.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
    let disk = build::root().join(format!(
        "target/bench/veneer-data-{tag}-{}-{}.img",
        clock.name(),
        std::process::id()
    ));
    let dir = build::root().join("target/bench");
    let marks = dir.join(format!("veneer-marks-{tag}-{}.txt", clock.name()));
    if storage(&boot.program) {
        // A fresh C-FFS, and the plugin counting the storage rows.
        let prepared = data_disk(&disk).and_then(|_| super::profile::plugin(&dir));
        let plugin = match prepared {
            Ok(p) => p,
            Err(e) => return Side::absent(format!("the storage rows' boot: {e}")),
        };
        args.extend(qemu::device_args(&disk, 0));
        args.extend(super::marks::args(
            &plugin,
            &dir.join(format!("veneer-counts-{tag}-{}.txt", clock.name())),
            &marks,
        ));
    }
    let timeout = if boot.program == TREE { opts.timeout_with_tree() } else { opts.timeout() };
    let out = qemu::headless(&args, timeout, &[]);
    let _ = std::fs::remove_file(&disk);
    let out = match out {
        Ok(out) => out,
        Err(e) => return Side::absent(e),
    };
    let mut side = Side::parse(&out.serial);
    if storage(&boot.program) {
        super::marks::apply(&mut side, &out.serial, &marks);
    }
    side.rename(boot.suffix);
    if out.timed_out {
        side.problem = Some(format!("timed out after {timeout:?}"));
    } else if out.code != Some(qemu::EXIT_SUCCESS) {
        // The program returned non-zero, or the kernel died.
        side.problem = Some(format!("did not power off with success (QEMU exit {:?})", out.code));
    }
    // The console is kept whatever happened (for a look at any notes).
    let log = dir.join(format!(
        "veneer-{}-{}-serial.log",
        boot.program.replace([' ', '@', '/'], "-"),
        clock.name()
    ));
    let _ = std::fs::create_dir_all(&dir).and_then(|_| std::fs::write(&log, &out.serial));
    if side.problem.is_some() || !side.done {
        eprintln!("xtask: bench: Veneer console saved in {}", log.display());
    }
    side
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merges_two_boots() {
        let a = Side::parse("BENCH-PLAN calib\nBENCH calib 10 10000\nBENCH-DONE\n");
        let b = Side::parse("BENCH-PLAN fork trap\nBENCH fork 4 400\nBENCH trap 1 2\nBENCH-FAIL trap odd\n");
        let side = merge([&a, &b]);
        assert_eq!(side.plan.as_deref(), Some(&["calib".into(), "fork".into(), "trap".into()][..]));
        assert_eq!(side.figure("fork").map(|f| f.median), Some(100.0));
        assert_eq!(side.figure("calib").map(|f| f.median), Some(1000.0));
        assert_eq!(side.failed, ["trap odd"]);
        // The second boot never said BENCH-DONE.
        assert!(!side.done);
        let stopped = Side { problem: Some("timed out".into()), ..Side::default() };
        assert_eq!(merge([&Side::default(), &stopped]).problem.as_deref(), Some("timed out"));
    }

    #[test]
    fn nested_rows_boot_bench_libos_under_limiters() {
        let boots = boots(&["appel2", "appel2_n2", "fork_n2", "pipe_8k_t1"]);
        assert_eq!(boots.len(), PROGRAMS.len() + 2);
        let n2 = &boots[PROGRAMS.len()];
        assert_eq!(
            (n2.program.as_str(), &n2.names[..], n2.suffix),
            ("limiter @2 bench_libos", &["appel2", "fork"][..], "_n2")
        );
        let t1 = &boots[PROGRAMS.len() + 1];
        assert_eq!((t1.program.as_str(), &t1.names[..]), ("limiter @t1 bench_libos", &["pipe_8k"][..]));
        let mut side = Side::parse(
            "BENCH-PLAN calib fork\nBENCH calib 10 10000\nBENCH fork 4 400\nBENCH-FAIL fork odd\n",
        );
        side.rename("_n2");
        assert_eq!(side.plan.as_deref(), Some(&["calib".into(), "fork_n2".into()][..]));
        assert_eq!(side.figure("fork_n2").map(|f| f.median), Some(100.0));
        assert_eq!(side.figure("calib").map(|f| f.median), Some(1000.0));
        assert_eq!(side.failed, ["fork_n2 odd"]);
    }
}
