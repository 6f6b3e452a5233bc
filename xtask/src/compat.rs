//! `cargo xtask compat [--linux] [--linux-only] [--veneer-only] [-j N] [--timeout S] [--images] [--report] [MODULE..]`:
//! Linux compatibility measured by CPython's own regression tests
//! (Debian's `libpython3.11-testsuite`), run test by test on Veneer and on
//! Debian's Linux kernel in the same QEMU machine, and compared.
//!
//! Each module is one boot per side. Veneer boots `init=lxrt python3.11
//! /compat/run.py MODULE` on a root holding the packages; Linux (the
//! benchmarks' kernel, `bench::linux::kernel`) boots an initramfs holding
//! the same root (`build::root_tree`: the same `/etc/passwd`, busybox,
//! packages) whose `/init` mounts `/proc`, `/sys`, `/dev`, `/dev/pts` and
//! `/dev/shm` and runs the same command. The runner (`libos/compat/run.py`)
//! prints one line per test; a test silent for the per-test timeout is a
//! hang and a child that dies inside a test a crash, and either way the
//! module goes on with its other tests. Consoles are kept in
//! `target/compat/SIDE/MODULE.serial`; Linux's are reused when their boot
//! ran to its end (`--linux` runs Linux again). Both run under TCG,
//! as the boot tests do (Veneer's library needs `rdgsbase`, which the
//! development machine's nested KVM does not offer).
//!
//! The table (per module: passed, failed, errors, skipped on each side, and
//! the tests that pass on Linux and not on Veneer) is printed, and written
//! to `docs/compat.md` for every module of `MODULES` (a module without a
//! console is marked as not run; each console names the commit its boot
//! was built from).
//!
//! `boot_test` is the fast subset `cargo xtask test` runs: a few modules on
//! Veneer under TCG, whose every test that passes on the host (the same
//! Debian interpreter and tests, unpacked, run by the host's kernel) must
//! pass on Veneer.

use crate::boottest::BootTest;
use crate::build::{self, root, Image};
use crate::cpio::Archive;
use crate::qemu;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// The modules of issue 29 that Debian's package holds (`test_sqlite3` is
/// not in it).
pub const MODULES: &[&str] = &[
    "test_os",
    "test_posix",
    "test_signal",
    "test_subprocess",
    "test_select",
    "test_selectors",
    "test_poll",
    "test_fcntl",
    "test_threading",
    "test_thread",
    "test_mmap",
    "test_pty",
    "test_tempfile",
    "test_shutil",
    "test_pathlib",
    "test_glob",
    "test_io",
    "test_fileio",
    "test_file",
    "test_time",
    "test_resource",
    "test_pwd",
    "test_grp",
    "test_stat",
    "test_popen",
    "test_pipes",
    "test_wait3",
    "test_wait4",
    "test_fork1",
    "test_eintr",
    "test_socket",
    "test_zipfile",
    "test_tarfile",
    "test_gzip",
    "test_logging",
    "test_concurrent_futures",
    "test_multiprocessing_fork",
];

/// The modules of the boot test (`cargo xtask test`): quick ones that pass.
pub const QUICK: &[&str] = &["test_stat", "test_fork1", "test_wait4", "test_glob"];

/// The Debian packages of the root: the tests, and through them the
/// interpreter and its library.
const PACKAGES: &[&str] = &["libpython3.11-testsuite"];

/// The interpreter, and the runner's path in the root.
const PYTHON: &str = "/usr/bin/python3.11";
const RUNNER: &str = "compat/run.py";

/// Seconds a test may print nothing before it counts as hung. Under TCG
/// on a busy host, tests that start many processes stay silent longer
/// than a minute without hanging (test_subprocess's
/// test_leaking_fds_on_error spawns 1,024 children: about 65 s on Veneer;
/// test_tempfile's test_del_on_shutdown starts six interpreters).
const TEST_TIMEOUT_S: u64 = 180;

/// Seconds one module's boot may take in all.
const BOOT_LIMIT_S: u64 = 4 * 3600;

/// Seconds a boot may print nothing beyond the per-test timeout before it
/// counts as wedged and is killed (the runner reports a hung test itself
/// at the per-test timeout; a machine silent well past that is stuck).
const SILENT_GRACE_S: u64 = 300;

/// The Linux guest's `/init`: the file systems Linux programs expect, the
/// loopback interface up and the host name set (as Veneer has them: a
/// socket test on 127.0.0.1 otherwise hangs on Linux), then the runner
/// with the environment lxrt gives a program, then power off.
const INIT: &str = "#!/bin/busybox sh
/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t sysfs sysfs /sys
/bin/busybox mount -t devtmpfs devtmpfs /dev
/bin/busybox mkdir -p /dev/pts /dev/shm
/bin/busybox mount -t devpts devpts /dev/pts
/bin/busybox mount -t tmpfs tmpfs /dev/shm
/bin/busybox ip link set lo up
/bin/busybox hostname veneer
cd /
/bin/busybox env -i PATH=/bin:/usr/bin:/sbin:/usr/sbin HOME=/ PWD=/ /usr/bin/python3.11 /compat/run.py \"$@\"
/bin/busybox poweroff -f
";

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Side {
    Veneer,
    Linux,
}

impl Side {
    fn name(self) -> &'static str {
        match self {
            Side::Veneer => "veneer",
            Side::Linux => "linux",
        }
    }
}

/// What one side did with one module, read from its console.
#[derive(Default, Debug)]
pub struct ModuleRun {
    /// Each test's status: pass, fail, error, skip, hang, crash.
    pub tests: BTreeMap<String, String>,
    /// Why the module (or part of it) did not run: load errors, a boot that
    /// ended early.
    pub notes: Vec<String>,
}

impl ModuleRun {
    fn count(&self, what: &[&str]) -> usize {
        self.tests.values().filter(|s| what.contains(&s.as_str())).count()
    }
}

/// The runs in a console, by module; a module whose `@@END` is missing
/// gets a note.
pub fn parse(serial: &str) -> BTreeMap<String, ModuleRun> {
    let mut runs: BTreeMap<String, ModuleRun> = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in serial.lines().map(|l| l.trim_end_matches('\r')) {
        if let Some(m) = line.strip_prefix("@@MODULE ") {
            current = Some(m.to_string());
            runs.entry(m.to_string()).or_default();
        } else if let Some(m) = line.strip_prefix("@@END ") {
            if current.as_deref() == Some(m) {
                current = None;
            }
        } else if let Some(rest) = line.strip_prefix("@@TEST ") {
            if let (Some(m), Some((status, id))) = (&current, rest.split_once(' ')) {
                runs.entry(m.clone()).or_default().tests.insert(id.to_string(), status.to_string());
            }
        } else if let Some(rest) = line.strip_prefix("@@LOAD ") {
            if let Some(m) = &current {
                let note = rest.split_once(' ').map_or(rest, |(_, n)| n);
                runs.entry(m.clone()).or_default().notes.push(note.to_string());
            }
        }
    }
    if let Some(m) = current {
        runs.entry(m).or_default().notes.push("the boot ended inside this module".into());
    }
    runs
}

struct Options {
    /// Run Linux again even where its console ran to its end.
    linux: bool,
    veneer: bool,
    /// Boot Linux at all (`--veneer-only`: never, its consoles as they are).
    linux_boots: bool,
    jobs: usize,
    timeout: u64,
    /// Only build the boot images (`--images`, to boot them by hand).
    images: bool,
    /// Only write the table from the consoles there are (`--report`).
    report: bool,
    modules: Vec<String>,
}

fn options(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        linux: false,
        veneer: true,
        linux_boots: true,
        jobs: 2,
        timeout: TEST_TIMEOUT_S,
        images: false,
        report: false,
        modules: Vec::new(),
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |what: &str| -> Result<u64, String> {
            it.next().and_then(|v| v.parse().ok()).ok_or(format!("{a} wants {what}"))
        };
        match a.as_str() {
            "--linux" => o.linux = true,
            "--linux-only" => (o.linux, o.veneer) = (true, false),
            "--veneer-only" => o.linux_boots = false,
            "--images" => o.images = true,
            "--report" => o.report = true,
            "-j" => o.jobs = value("a number of boots")?.max(1) as usize,
            "--timeout" => o.timeout = value("seconds")?,
            m if MODULES.contains(&m) || m.starts_with("test_") => o.modules.push(m.to_string()),
            other => return Err(format!("compat: unknown argument {other}")),
        }
    }
    if o.modules.is_empty() {
        o.modules = MODULES.iter().map(|m| m.to_string()).collect();
    }
    Ok(o)
}

/// The machine of both sides: one CPU, 2 GiB (the packages are in the
/// initial RAM disk, and Veneer's shared arena is an eighth of memory).
fn machine() -> Vec<String> {
    ["-accel", "tcg", "-cpu", "max", "-smp", "1", "-m", "2G", "-no-reboot"]
        .iter()
        .chain(&["-device", "isa-debug-exit,iobase=0xf4,iosize=0x04"])
        .map(|s| s.to_string())
        .collect()
}

fn runner() -> Result<Vec<u8>, String> {
    let path = root().join("libos/compat/run.py");
    std::fs::read(&path).map_err(|e| format!("reading {}: {e}", path.display()))
}

fn packages() -> Vec<String> {
    PACKAGES.iter().map(|s| s.to_string()).collect()
}

/// Veneer's boot image: the build, the packages and the runner, as
/// `target/bootfs-NAME.cpio` (a run's own name, so that images built for
/// booting by hand do not change under a run).
fn veneer_image(name: &str) -> Result<Image, String> {
    let img = build::all()?;
    build::with_files(&img, name, &packages(), &[(RUNNER.to_string(), runner()?)])
}

/// The Linux guest's kernel and initramfs (rebuilt every run: it is the
/// same root as Veneer's, which changes with the tests and programs).
fn linux_image() -> Result<Image, String> {
    let dir = root().join("target/compat");
    std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let bench = root().join("target/bench/linux");
    std::fs::create_dir_all(&bench).map_err(|e| format!("creating {}: {e}", bench.display()))?;
    let kernel = crate::bench::linux::kernel(&bench)?;
    let mut ar = Archive::default();
    ar.file("init", 0o755, INIT.as_bytes());
    ar.dir("compat");
    ar.file(RUNNER, 0o644, &runner()?);
    for d in ["sys", "dev", "proc", "tmp"] {
        ar.dir(d);
    }
    build::root_tree(&mut ar, &packages(), "")?;
    let bootfs = dir.join("linux-initramfs.cpio");
    std::fs::write(&bootfs, ar.finish()).map_err(|e| format!("writing {}: {e}", bootfs.display()))?;
    Ok(Image { kernel, bootfs })
}

fn boot_args(side: Side, img: &Image, words: &str) -> Vec<String> {
    let mut args = machine();
    let append = match side {
        Side::Veneer => format!("init=lxrt {PYTHON} /{RUNNER} {words}"),
        // no_timer_check: a busy host can make Linux's check of the
        // emulated IO-APIC timer fail, which panics the boot.
        Side::Linux => format!("console=ttyS0 quiet panic=-1 no_timer_check -- {words}"),
    };
    for a in ["-kernel", &img.kernel.display().to_string(), "-initrd", &img.bootfs.display().to_string()] {
        args.push(a.to_string());
    }
    args.push("-append".into());
    args.push(append);
    args
}

fn log_path(side: Side, module: &str) -> PathBuf {
    root().join("target/compat").join(side.name()).join(format!("{module}.serial"))
}

/// One boot of `module` on `side`; its console is saved, and a boot that
/// ended badly leaves a note in it.
fn run_boot(side: Side, img: &Image, o: &Options, module: &str, commit: &str) -> Result<(), String> {
    let words = format!("--timeout {} {module}", o.timeout);
    let args = boot_args(side, img, &words);
    let limits = qemu::Limits {
        total: Duration::from_secs(BOOT_LIMIT_S),
        silent: Some(Duration::from_secs(o.timeout + SILENT_GRACE_S)),
    };
    let start = std::time::Instant::now();
    let out = qemu::headless_watched(&args, limits, &[])?;
    let mut serial = format!("@@COMMIT {commit}\n{}", out.serial.replace('\r', ""));
    let ok = match side {
        Side::Veneer => out.code == Some(qemu::EXIT_SUCCESS),
        Side::Linux => out.code == Some(0),
    };
    if out.timed_out {
        serial.push_str(&format!(
            "\n@@BOOT killed after {:.0}s (silent for {}s, or past {}s in all)\n",
            start.elapsed().as_secs_f64(),
            o.timeout + SILENT_GRACE_S,
            BOOT_LIMIT_S
        ));
    } else if !ok || !serial.contains("@@DONE") {
        serial.push_str(&format!("\n@@BOOT QEMU exited with {:?} before the runner was done\n", out.code));
    }
    let path = log_path(side, module);
    std::fs::create_dir_all(path.parent().expect("a directory"))
        .and_then(|_| std::fs::write(&path, &serial))
        .map_err(|e| format!("writing {}: {e}", path.display()))?;
    let run = parse(&serial).remove(module).unwrap_or_default();
    println!(
        "compat: {module} on {}: {} passed, {} failed, {} errors, {} skipped ({:.0}s){}",
        side.name(),
        run.count(&["pass"]),
        run.count(&["fail"]),
        run.count(&["error", "hang", "crash"]),
        run.count(&["skip"]),
        start.elapsed().as_secs_f64(),
        if run.notes.is_empty() { String::new() } else { format!(": {}", run.notes.join("; ")) }
    );
    Ok(())
}

/// The commit the boot images were built from (`-dirty` with changes).
fn commit() -> String {
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .current_dir(root())
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .unwrap_or_default()
    };
    let dirty =
        if git(&["status", "--porcelain", "--untracked-files=no"]).is_empty() { "" } else { "-dirty" };
    format!("{}{dirty}", git(&["rev-parse", "--short", "HEAD"]))
}

pub fn main(args: &[String]) -> Result<(), String> {
    crate::deps::ensure(crate::deps::TEST)?;
    let o = options(args)?;
    let mut boots: Vec<(Side, String)> = Vec::new();
    for m in o.modules.iter().filter(|_| !o.report) {
        if o.veneer {
            boots.push((Side::Veneer, m.clone()));
        }
        // A Linux console is reused when that boot ran to its end.
        let done = std::fs::read_to_string(log_path(Side::Linux, m)).is_ok_and(|s| s.contains("@@DONE"));
        if o.linux_boots && (o.linux || !done) {
            boots.push((Side::Linux, m.clone()));
        }
    }
    // What the images are built from, named in every console.
    let built_from = commit();
    let name = if o.images { "compat-dev" } else { "compat" };
    let veneer = if o.veneer && !o.report { Some(veneer_image(name)?) } else { None };
    let linux = if boots.iter().any(|(s, _)| *s == Side::Linux) { Some(linux_image()?) } else { None };
    if o.images {
        for img in veneer.iter().chain(&linux) {
            println!("compat: {} {}", img.kernel.display(), img.bootfs.display());
        }
        return Ok(());
    }
    println!("compat: {} boots under TCG ({} at a time), {}s per test", boots.len(), o.jobs, o.timeout);
    let next = AtomicUsize::new(0);
    let errors = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..o.jobs {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some((side, module)) = boots.get(i) else { break };
                let img = match side {
                    Side::Veneer => veneer.as_ref(),
                    Side::Linux => linux.as_ref(),
                };
                if let Err(e) = run_boot(*side, img.expect("built"), &o, module, &built_from) {
                    errors.lock().unwrap().push(format!("{module} on {}: {e}", side.name()));
                }
            });
        }
    });
    let errors = errors.into_inner().unwrap();
    if !errors.is_empty() {
        return Err(errors.join("\n"));
    }
    let table = report(&o.modules)?;
    println!("{table}");
    // The whole table, every module: those without a console are marked
    // as not run.
    let all: Vec<String> = MODULES.iter().map(|m| m.to_string()).collect();
    let doc = format!("{}{}", DOC_HEAD, report(&all)?);
    let path = root().join("docs/compat.md");
    std::fs::write(&path, doc).map_err(|e| format!("writing {}: {e}", path.display()))?;
    println!("compat: wrote {}", path.display());
    Ok(())
}

/// A module's run on one side from its saved console.
fn load(side: Side, module: &str) -> ModuleRun {
    let serial = std::fs::read_to_string(log_path(side, module)).unwrap_or_default();
    let mut run = parse(&serial).remove(module).unwrap_or_default();
    if serial.is_empty() {
        run.notes.push("not run".into());
    }
    for line in serial.lines() {
        if let Some(b) = line.strip_prefix("@@BOOT ") {
            run.notes.push(b.to_string());
        }
    }
    run
}

/// The comparison of `modules` as Markdown.
fn report(modules: &[String]) -> Result<String, String> {
    let mut t = String::new();
    let mut missed = String::new();
    let (mut linux_pass, mut both_pass) = (0, 0);
    t.push_str("| module | Linux pass | fail | error | skip | Veneer pass | fail | error | skip | of Linux's passes |\n");
    t.push_str("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for m in modules {
        let (l, v) = (load(Side::Linux, m), load(Side::Veneer, m));
        let passes: Vec<&String> = l.tests.iter().filter(|(_, s)| *s == "pass").map(|(id, _)| id).collect();
        let kept = passes.iter().filter(|id| v.tests.get(**id).map(String::as_str) == Some("pass")).count();
        linux_pass += passes.len();
        both_pass += kept;
        let cells = |r: &ModuleRun| {
            format!(
                "{} | {} | {} | {}",
                r.count(&["pass"]),
                r.count(&["fail"]),
                r.count(&["error", "hang", "crash"]),
                r.count(&["skip"])
            )
        };
        let _ = writeln!(t, "| {m} | {} | {} | {kept}/{} |", cells(&l), cells(&v), passes.len());
        // The tests lost, grouped by why (unexplained first).
        let mut lost: BTreeMap<Option<&str>, Vec<String>> = BTreeMap::new();
        for id in passes.iter().filter(|id| v.tests.get(**id).map(String::as_str) != Some("pass")) {
            let short = id.strip_prefix(&format!("test.{m}.")).unwrap_or(id);
            let status = v.tests.get(*id).map_or("not run", String::as_str);
            lost.entry(why(id)).or_default().push(format!("`{short}` ({status})"));
        }
        let notes: Vec<String> = l
            .notes
            .iter()
            .map(|n| format!("Linux: {n}"))
            .chain(v.notes.iter().map(|n| format!("Veneer: {n}")))
            .collect();
        if !lost.is_empty() || !notes.is_empty() {
            let _ = writeln!(missed, "- **{m}**{}", if notes.is_empty() { "" } else { " — " });
            for n in notes {
                let _ = writeln!(missed, "  - {n}");
            }
            for (reason, tests) in &lost {
                let because = reason.map_or(String::new(), |r| format!(" — *{r}*"));
                let _ = writeln!(missed, "  - {}{because}", tests.join(", "));
            }
        }
    }
    let pct = if linux_pass == 0 { 0.0 } else { 100.0 * both_pass as f64 / linux_pass as f64 };
    for side in [Side::Linux, Side::Veneer] {
        let mut commits: Vec<String> = modules
            .iter()
            .filter_map(|m| std::fs::read_to_string(log_path(side, m)).ok())
            .map(|s| {
                s.lines().next().and_then(|l| l.strip_prefix("@@COMMIT ")).unwrap_or("before").to_string()
            })
            .collect();
        commits.sort();
        commits.dedup();
        if !commits.is_empty() {
            let _ = writeln!(t, "\n{} consoles made at commit {}.", side.name(), commits.join(", "));
        }
    }
    let _ = writeln!(
        t,
        "\n**{both_pass} of the {linux_pass} tests that pass on Linux pass on Veneer ({pct:.1}%).**"
    );
    if !missed.is_empty() {
        let _ = write!(t, "\n### Passing on Linux, not on Veneer\n\n{missed}");
    }
    Ok(t)
}

/// Why tests that pass on Linux do not pass on Veneer, where the cause
/// is known and left (a test whose id contains the pattern): the table
/// prints the reason beside them.
const WHY: &[(&str, &str)] = &[
    (
        "test_large_file_ops",
        "a file in memory is one block of the shared arena (an eighth of memory): no sparse files, so an offset \
         past the arena's size is EINVAL",
    ),
    (
        "LargeMmapTests",
        "skipped: the test's 4 GiB sparse file cannot be made (a file in memory is one block of the shared arena)",
    ),
    ("UDPLITE", "UDP-Lite (RFC 3828) is not in smoltcp, lxrt's TCP/IP stack: socket() is EPROTONOSUPPORT"),
];

fn why(id: &str) -> Option<&'static str> {
    WHY.iter().find(|(pattern, _)| id.contains(pattern)).map(|&(_, reason)| reason)
}

const DOC_HEAD: &str = "# Linux compatibility: CPython's regression tests

Written by `cargo xtask compat` (`xtask/src/compat.rs`); do not edit by
hand. CPython's own regression tests (Debian's `libpython3.11-testsuite`,
the modules of issue 29 that it holds; `test_sqlite3` is not in Debian's
package) run test by test on Veneer and on Debian's Linux kernel, each
booted in the same QEMU machine (one CPU, 2 GiB) on the same root
(busybox, `/etc/passwd`, the packages). The runner
(`libos/compat/run.py`) loads each module as `python3 -m test` does,
with no optional resources (`-u`) enabled, and reports every test;
one that prints nothing for the per-test timeout (180 seconds unless
`--timeout` says otherwise) is counted as a hang, a child
interpreter dying inside a test as a crash (both are errors below), and
the module goes on without it. Class and module fixtures that fail or
skip count for each of their tests. A test counts for Veneer only if it
passes there too; one that does not run at all on Veneer counts as lost.

    cargo xtask compat                 # every module (Linux's consoles reused)
    cargo xtask compat test_os --linux # one module, Linux run again

Consoles: `target/compat/{veneer,linux}/MODULE.serial` (a failing test's
output is there, after `@@|`). Where a loss is understood and left, the
list below says why (`WHY` in `xtask/src/compat.rs`).

";

/// The fast subset as a boot test: `QUICK` on Veneer (TCG, the boot tests'
/// machine with 2 GiB), every test that passes on the host passing there.
pub fn boot_test() -> Result<BootTest, String> {
    let img = veneer_image("compat-test")?;
    let words = format!("--timeout {TEST_TIMEOUT_S} {}", QUICK.join(" "));
    let host = host_passes(QUICK)?;
    Ok(BootTest::new(
        "compat".into(),
        boot_args(Side::Veneer, &img, &words),
        host.iter().map(|id| format!("@@TEST pass {id}\r\n")).collect(),
        Duration::from_secs(600),
    ))
}

/// The tests of `modules` that pass on the host: the packages' own
/// interpreter, unpacked, run by the host's kernel with the runner.
fn host_passes(modules: &[&str]) -> Result<Vec<String>, String> {
    let unpacked = crate::debs::unpacked(&packages())?;
    let scratch = root().join("target/compat/host");
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).map_err(|e| format!("creating {}: {e}", scratch.display()))?;
    let runner_path = root().join("libos/compat/run.py");
    let out = Command::new(unpacked.join(PYTHON.trim_start_matches('/')))
        .arg(&runner_path)
        .args(["--timeout", &TEST_TIMEOUT_S.to_string()])
        .args(modules)
        .current_dir(&scratch)
        .env_clear()
        .env("PATH", "/bin:/usr/bin:/sbin:/usr/sbin")
        .env("HOME", "/")
        .env("PYTHONHOME", unpacked.join("usr"))
        .env("TMPDIR", &scratch)
        .output()
        .map_err(|e| format!("running the packages' python3.11 on the host: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let runs = parse(&text);
    let mut passes = Vec::new();
    for m in modules {
        let run = runs.get(*m).ok_or(format!("{m}: no result on the host"))?;
        if !run.notes.is_empty() || run.count(&["pass"]) == 0 {
            return Err(format!("{m} on the host: {:?}, {} passed", run.notes, run.count(&["pass"])));
        }
        passes.extend(run.tests.iter().filter(|(_, s)| *s == "pass").map(|(id, _)| id.clone()));
    }
    Ok(passes)
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn a_console_read_as_results() {
        let serial = "veneer: boot\r\n@@MODULE test_a\r\n@@TEST pass test.test_a.T.test_x\r\n\
            @@| noise\n@@TEST hang test.test_a.T.test_y\n@@LOAD test_a error gone\n@@END test_a\n\
            @@MODULE test_b\n@@TEST fail test.test_b.T.test_z\n";
        let runs = parse(serial);
        let a = &runs["test_a"];
        assert_eq!(a.tests["test.test_a.T.test_x"], "pass");
        assert_eq!(a.tests["test.test_a.T.test_y"], "hang");
        assert_eq!(a.notes, vec!["error gone".to_string()]);
        let b = &runs["test_b"];
        assert_eq!(b.tests["test.test_b.T.test_z"], "fail");
        assert_eq!(b.notes, vec!["the boot ended inside this module".to_string()]);
    }
}
