//! Boot tests: every `test_*` program (`user/src/bin/`, and the library
//! OS's in `build::LIBOS_PROGRAMS`) is booted as the first
//! environment under QEMU (TCG). A test passes when the kernel powers off
//! with the success code (the program exited with status 0) and the serial
//! log contains every line the table below expects of it.

use crate::build::{self, Image};
use crate::qemu::{self, EXIT_SUCCESS};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Extra expectations for tests whose proof is on the console.
struct Extra {
    name: &'static str,
    /// More words for the kernel command line.
    args: &'static str,
    expect: &'static [&'static str],
    timeout_s: u64,
}

const EXTRAS: &[Extra] = &[
    Extra { name: "test_hello", args: "", expect: &["hello from ring 3"], timeout_s: 60 },
    Extra {
        name: "test_nohandler",
        args: "",
        expect: &["killed by page fault", "killed by invalid opcode"],
        timeout_s: 60,
    },
    Extra { name: "test_fuzz", args: "", expect: &["fuzz: seed"], timeout_s: 240 },
    Extra {
        name: "test_jit",
        args: "selftest=jit",
        expect: &["all equal to the interpreter"],
        timeout_s: 120,
    },
    Extra { name: "test_predicate", args: "", expect: &["rejected: instruction"], timeout_s: 90 },
    Extra { name: "test_pipeguard", args: "", expect: &["pipe guard test passed"], timeout_s: 120 },
    Extra { name: "test_pipepass", args: "", expect: &["pipe pass test passed"], timeout_s: 240 },
    Extra { name: "test_fifoguard", args: "", expect: &["fifo guard test passed"], timeout_s: 90 },
    Extra { name: "test_fileguard", args: "", expect: &["file guard test passed"], timeout_s: 90 },
    Extra { name: "test_ptyguard", args: "", expect: &["pty guard test passed"], timeout_s: 90 },
    Extra { name: "test_unixguard", args: "", expect: &["unix guard test passed"], timeout_s: 90 },
    Extra { name: "test_dgramguard", args: "", expect: &["dgram guard test passed"], timeout_s: 90 },
    Extra { name: "test_sysvguard", args: "", expect: &["sysv guard test passed"], timeout_s: 90 },
    Extra { name: "test_handover", args: "", expect: &["test_handover: ok"], timeout_s: 120 },
    Extra {
        name: "test_trace_lx",
        args: "/bin/busybox echo hello nested world",
        expect: &["hello nested world", "linux:exit_group(0x0"],
        timeout_s: 120,
    },
    Extra {
        name: "test_world",
        args: "/bin/busybox sh -c ls${IFS}/tmp;echo${IFS}x>/tmp/w;echo${IFS}pid${IFS}$$",
        expect: &["a world in a world: ok"],
        timeout_s: 240,
    },
    Extra {
        name: "test_debug",
        args: "",
        expect: &[
            "debug: stepped 12 instructions of step_me, rax changed: ok",
            "debug: stepped a hostile child through its popf: ok",
        ],
        timeout_s: 90,
    },
    Extra {
        name: "test_compose",
        args: "",
        expect: &[
            "compose: its output equals the bare run's: ok",
            "compose: the trace shows the pager's waits: ok",
            "compose: pagee completes, paged through the limiter's quota: ok",
        ],
        timeout_s: 120,
    },
    Extra {
        name: "test_revoke",
        args: "",
        expect: &["did not give frames back in time: repossessed 10"],
        timeout_s: 90,
    },
    Extra {
        name: "test_slices",
        args: "",
        expect: &[
            "kept the CPU after its end-of-slice upcall (1 of 3)",
            "kept the CPU after 3 end-of-slice upcalls",
        ],
        timeout_s: 90,
    },
];

const DEFAULT_TIMEOUT_S: u64 = 90;

/// One boot test to run.
pub struct BootTest {
    pub name: String,
    pub args: Vec<String>,
    pub expect: Vec<String>,
    pub timeout: Duration,
    /// The exact program output expected on the console (library-OS tests,
    /// see `lxtest`).
    pub output: Option<String>,
    /// Keystrokes to type (interactive tests, see `ttytest`).
    pub keys: Vec<qemu::Key>,
    /// Guest time checked against the host's clock.
    pub wall: Option<Wall>,
    /// A second boot, run once this one passed (on the same disk image,
    /// when both name it).
    pub then: Option<Box<BootTest>>,
    /// A disk image `cargo xtask fsck` must find clean once the boots
    /// (this one and `then`) passed.
    pub fsck: Option<std::path::PathBuf>,
    /// The QEMU arguments of a second machine that runs beside this one
    /// (started first, killed when this one ends; its console is kept in
    /// target/boottest/NAME-companion.serial): the other end of a network
    /// link.
    pub companion: Option<Vec<String>>,
}

impl BootTest {
    /// A boot of `args` that passes when each of `expect` appears on the
    /// console, in order, within `timeout`; nothing else is checked.
    pub fn new(name: String, args: Vec<String>, expect: Vec<String>, timeout: Duration) -> BootTest {
        BootTest {
            name,
            args,
            expect,
            timeout,
            output: None,
            keys: Vec::new(),
            wall: None,
            then: None,
            fsck: None,
            companion: None,
        }
    }
}

/// `to` must appear on the console `secs` seconds of the host's time after
/// `from`, give or take `WALL_TOLERANCE` (a check that guest time is right,
/// not a benchmark: boot tests run under plain TCG, where QEMU's virtual
/// clock is the host's).
pub struct Wall {
    pub secs: f64,
    pub from: String,
    pub to: String,
}

const WALL_TOLERANCE: f64 = 0.25;

impl Wall {
    fn check(&self, out: &qemu::Outcome) -> Result<(), String> {
        let (Some(a), Some(b)) = (out.seen_at(&self.from), out.seen_at(&self.to)) else {
            return Err(format!("no {:?} then {:?} on the console to time", self.from, self.to));
        };
        let took = b.saturating_sub(a).as_secs_f64();
        if (took - self.secs).abs() > self.secs * WALL_TOLERANCE {
            return Err(format!(
                "{:?} to {:?} took {took:.2} s of the host's time, want {} s (±{}%)",
                self.from,
                self.to,
                self.secs,
                WALL_TOLERANCE * 100.0
            ));
        }
        println!("test wall time: {:?} to {:?} took {took:.2} s, want {} s", self.from, self.to, self.secs);
        Ok(())
    }
}

fn plan(img: &Image, names: &[String]) -> Result<Vec<BootTest>, String> {
    let libos = build::LIBOS_PROGRAMS.iter().map(|n| n.to_string());
    // `test_xn` needs its disk: `xntest` boots it.
    let all: Vec<String> = build::user_programs()?
        .into_iter()
        .chain(libos)
        .filter(|n| n.starts_with("test_") && n != "test_xn")
        .collect();
    let lx = crate::lxtest::names()?;
    let dev = crate::devtest::names();
    for n in names {
        let known = lx.contains(n)
            || dev.contains(&n.as_str())
            || crate::xntest::NAMES.contains(&n.as_str())
            || crate::roottest::NAMES.contains(&n.as_str())
            || ["iso", "tty", "tty_login", "erltty", "compat", crate::nettest::NAME, crate::nettest::IDLE]
                .contains(&n.as_str());
        if !all.contains(n) && !known {
            return Err(format!(
                "no boot test named {n} (have: {}, iso, tty, tty_login, erltty, compat, {}, {})",
                all.join(", "),
                crate::nettest::NAME,
                crate::nettest::IDLE
            ));
        }
    }
    let mut tests = Vec::new();
    for name in all.iter().filter(|n| names.is_empty() || names.contains(n)) {
        let extra = EXTRAS.iter().find(|e| e.name == name);
        tests.push(BootTest::new(
            name.clone(),
            qemu::base_args(img, &format!("{name} {}", extra.map_or("", |e| e.args))),
            extra.map(|e| e.expect.iter().map(|s| s.to_string()).collect()).unwrap_or_default(),
            Duration::from_secs(extra.map_or(DEFAULT_TIMEOUT_S, |e| e.timeout_s)),
        ));
    }
    tests.extend(crate::lxtest::plan(img, names)?);
    tests.extend(crate::devtest::plan(img, names)?);
    tests.extend(crate::nettest::plan(img, names)?);
    tests.extend(crate::xntest::plan(img, names)?);
    tests.extend(crate::roottest::plan(img, names)?);
    if names.is_empty() || names.iter().any(|n| n == "tty") {
        tests.push(crate::ttytest::boot_test(img));
    }
    if names.is_empty() || names.iter().any(|n| n == "tty_login") {
        tests.push(crate::ttytest::login_test(img));
    }
    if names.is_empty() || names.iter().any(|n| n == "erltty") {
        tests.push(crate::ttytest::erlang_test(img)?);
    }
    if names.is_empty() || names.iter().any(|n| n == "compat") {
        tests.push(crate::compat::boot_test()?);
    }
    if names.is_empty() || names.iter().any(|n| n == "iso") {
        tests.push(crate::iso::boot_test()?);
    }
    Ok(tests)
}

/// Runs every boot test.
pub fn run_all() -> Result<(), String> {
    run_named(&[])
}

/// Runs the named boot tests (all when `names` is empty), two at a time.
pub fn run_named(names: &[String]) -> Result<(), String> {
    crate::deps::ensure(crate::deps::TEST)?;
    let img = build::all()?;
    let tests = plan(&img, names)?;
    println!("xtask: running {} boot tests under QEMU (TCG)", tests.len());
    run_list(&tests).map(|_| ())
}

/// Runs `tests` two (or up to four) at a time and reports them; returns
/// each test's serial log, in order, when all passed.
pub fn run_list(tests: &[BootTest]) -> Result<Vec<String>, String> {
    let total = tests.len();
    let next = AtomicUsize::new(0);
    let results = Mutex::new(vec![Ok(String::new()); total]);
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get().min(4));
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(t) = tests.get(i) else { break };
                let r = run_one(t);
                results.lock().unwrap()[i] = r;
            });
        }
    });
    let results = results.into_inner().unwrap();
    let failures: Vec<(&str, &String)> = tests
        .iter()
        .zip(&results)
        .filter_map(|(t, r)| r.as_ref().err().map(|e| (t.name.as_str(), e)))
        .collect();
    for (name, why) in &failures {
        println!("\n---- boot test {name} FAILED ----\n{why}");
    }
    println!("\nboot tests: {} passed, {} failed", total - failures.len(), failures.len());
    if !failures.is_empty() {
        return Err(format!("{} boot test(s) failed", failures.len()));
    }
    Ok(results.into_iter().map(|r| r.unwrap_or_default()).collect())
}

fn run_one(t: &BootTest) -> Result<String, String> {
    let first = run_boot(t)?;
    let all = match &t.then {
        Some(next) => run_one(next).map(|rest| first + &rest)?,
        None => first,
    };
    if let Some(image) = &t.fsck {
        crate::fstools::fsck(&[image.display().to_string()]).map_err(|e| format!("{}: {e}", t.name))?;
        println!("test {}: fsck of {} clean", t.name, image.display());
    }
    Ok(all)
}

fn run_boot(t: &BootTest) -> Result<String, String> {
    let dir = crate::build::root().join("target/boottest");
    let companion = match &t.companion {
        Some(args) => Some(qemu::Companion::start(args)?),
        None => None,
    };
    let start = Instant::now();
    let out = qemu::headless(&t.args, t.timeout, &t.keys);
    let secs = start.elapsed().as_secs_f64();
    if let Some(c) = companion {
        let serial = c.stop();
        let _ = std::fs::create_dir_all(&dir)
            .and_then(|_| std::fs::write(dir.join(format!("{}-companion.serial", t.name)), serial));
    }
    let out = out?;
    // Kept for a look afterwards (the whole log, pass or fail).
    let _ = std::fs::create_dir_all(&dir).and_then(|_| {
        std::fs::write(dir.join(format!("{}.serial", t.name.replace([' ', '/'], "_"))), &out.serial)
    });
    let mut problems = Vec::new();
    if out.timed_out {
        problems.push(format!("timed out after {}s", t.timeout.as_secs()));
    } else if out.code != Some(EXIT_SUCCESS) {
        problems.push(format!("QEMU exit status {:?}, want {EXIT_SUCCESS}", out.code));
    }
    if let Some(want) = &t.output {
        let got = crate::lxtest::guest_output(&out.serial);
        if &got != want {
            problems.push(format!(
                "program output differs from the host's busybox\n-- want --\n{want}-- got --\n{got}"
            ));
        }
    }
    if let Some(Err(e)) = t.wall.as_ref().map(|w| w.check(&out)) {
        problems.push(e);
    }
    for e in &t.expect {
        if !out.serial.contains(e.as_str()) {
            problems.push(format!("serial log lacks {e:?}"));
        }
    }
    if problems.is_empty() {
        println!("test {} ... ok ({secs:.1}s)", t.name);
        return Ok(out.serial);
    }
    println!("test {} ... FAILED ({secs:.1}s)", t.name);
    let lines: Vec<&str> = out.serial.lines().collect();
    let tail = lines[lines.len().saturating_sub(40)..].join("\n");
    Err(format!("{}\n-- last serial lines --\n{tail}", problems.join("; ")))
}
