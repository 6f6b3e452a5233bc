//! Boot tests of the library OS against Linux: each `libos/tests/NAME.sh`
//! is run by the host's busybox (`/bin/busybox sh`, in a scratch copy of
//! `libos/root/`) and by the same busybox on Veneer under lxrt
//! (`init=lxrt /bin/sh /tests/NAME.sh`); the test `lx_NAME` passes when
//! Veneer powers off with success and the program's console output equals
//! the host's stdout+stderr byte for byte (lxrt's own `lxrt:` notes and the
//! kernel's `veneer:` lines are not program output and are left out).
//! A script's `# log: TEXT` comment lines name lxrt notes that must also
//! appear on Veneer's console (e.g. an unsupported call reported by name);
//! a `# wall: SECONDS | FROM | TO` line asks that output `TO` follow `FROM`
//! after that many seconds of the host's time (`boottest::Wall`); and
//! `# host: pid namespace` runs the host's side as PID 1 of a new PID
//! namespace (`unshare`), as the script's shell is init on Veneer.
//! A `# with: PKG..` line boots a root holding those Debian packages and
//! their dependencies (`debs`); the host runs its own installed copies.
//! A script with a `# veneer-only` line checks what only Veneer can show
//! (its own free memory, running out of it): it is not run on the host,
//! and passes when it exits with status 0 on Veneer.

use crate::boottest::{BootTest, Wall};
use crate::build::{self, Image};
use crate::qemu;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const TIMEOUT_S: u64 = 180;

fn scripts() -> Result<Vec<(String, PathBuf)>, String> {
    let dir = build::root().join("libos/tests");
    let mut v: Vec<(String, PathBuf)> = std::fs::read_dir(&dir)
        .map_err(|e| format!("reading {}: {e}", dir.display()))?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let p = e.path();
            let stem = p.file_name()?.to_str()?.strip_suffix(".sh")?.to_string();
            Some((format!("lx_{stem}"), p))
        })
        .collect();
    v.sort();
    Ok(v)
}

/// The C test programs (`libos/tests/c/NAME.c`, and the stress programs of
/// `libos/stress/c/`, which only Veneer runs), built static by the host's
/// gcc as the Linux benchmarks are: unmodified glibc binaries, run as
/// `cbin/NAME` by the scripts on the host and on Veneer. A source whose
/// first line is `// link: dynamic` is built as gcc builds by default: a
/// PIE that glibc's `ld.so` loads (its test needs `# with: libc6`).
pub fn c_programs() -> Result<Vec<(String, PathBuf)>, String> {
    let out = build::root().join("target/lxtest/cbin");
    std::fs::create_dir_all(&out).map_err(|e| format!("creating {}: {e}", out.display()))?;
    let mut v = Vec::new();
    let dirs = ["libos/tests/c", "libos/stress/c"].map(|d| build::root().join(d));
    let sources = dirs
        .iter()
        .map(|src| std::fs::read_dir(src).map_err(|e| format!("reading {}: {e}", src.display())))
        .collect::<Result<Vec<_>, _>>()?;
    for e in sources.into_iter().flatten().flatten() {
        let path = e.path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()).and_then(|n| n.strip_suffix(".c")) else {
            continue;
        };
        let exe = out.join(name);
        let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
        if modified(&exe).is_none() || modified(&exe) < modified(&path) {
            let text =
                std::fs::read_to_string(&path).map_err(|e| format!("reading {}: {e}", path.display()))?;
            let link = if text.starts_with("// link: dynamic\n") { "-pie" } else { "-static" };
            let status = Command::new("gcc")
                .args(["-O2", link, "-Wall", "-Wextra", "-Werror", "-o"])
                .arg(&exe)
                .arg(&path)
                .status()
                .map_err(|e| format!("running gcc: {e}"))?;
            if !status.success() {
                return Err(format!("gcc failed on {}", path.display()));
            }
        }
        v.push((name.to_string(), exe));
    }
    v.extend(rust_programs(&out)?);
    v.extend(go_programs(&out)?);
    v.sort();
    Ok(v)
}

/// Debian's Go toolchain (`golang-go`).
pub const GO: &str = "/usr/lib/go/bin/go";

/// The Go test programs (`libos/tests/go/NAME.go`), each one file built by
/// Debian's Go with `CGO_ENABLED=0` (a static executable, as Go builds by
/// default without cgo); they join the C programs in `cbin/`.
fn go_programs(out: &Path) -> Result<Vec<(String, PathBuf)>, String> {
    let src = build::root().join("libos/tests/go");
    let rd = std::fs::read_dir(&src).map_err(|e| format!("reading {}: {e}", src.display()))?;
    let cache = build::root().join("target/lxtest/gocache");
    let mut v = Vec::new();
    for path in rd.flatten().map(|e| e.path()) {
        let Some(name) = path.file_name().and_then(|n| n.to_str()).and_then(|n| n.strip_suffix(".go")) else {
            continue;
        };
        let exe = out.join(name);
        let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
        if modified(&exe).is_none() || modified(&exe) < modified(&path) {
            let status = Command::new(GO)
                .args(["build", "-o"])
                .arg(&exe)
                .arg(&path)
                .env("CGO_ENABLED", "0")
                .env("GOCACHE", &cache)
                .env("GOPATH", cache.join("gopath"))
                .env("GOFLAGS", "-buildvcs=false")
                .current_dir(&src)
                .status()
                .map_err(|e| format!("running {GO}: {e}"))?;
            if !status.success() {
                return Err(format!("go build failed on {}", path.display()));
            }
        }
        v.push((name.to_string(), exe));
    }
    Ok(v)
}

/// Rust's target for static executables: musl, whose default output is a
/// static-PIE (ET_DYN without an interpreter).
pub const MUSL_TARGET: &str = "x86_64-unknown-linux-musl";

/// The Rust `std` test programs (`libos/tests/rust/NAME.rs`), each built
/// the default way twice by the workspace's rustc: `NAME-musl` (static-PIE)
/// and `NAME-glibc` (dynamic, loaded by glibc's `ld.so`; its test needs
/// `# with: libc6 libgcc-s1`). They join the C programs in `cbin/`.
fn rust_programs(out: &Path) -> Result<Vec<(String, PathBuf)>, String> {
    let src = build::root().join("libos/tests/rust");
    let rd = std::fs::read_dir(&src).map_err(|e| format!("reading {}: {e}", src.display()))?;
    let mut v = Vec::new();
    for path in rd.flatten().map(|e| e.path()) {
        let Some(stem) = path.file_name().and_then(|n| n.to_str()).and_then(|n| n.strip_suffix(".rs")) else {
            continue;
        };
        for (flavour, target) in [("musl", MUSL_TARGET), ("glibc", build::USER_TARGET)] {
            let name = format!("{stem}-{flavour}");
            let exe = out.join(&name);
            let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
            if modified(&exe).is_none() || modified(&exe) < modified(&path) {
                let status = Command::new("rustc")
                    .args(["--edition", "2021", "-O", "--target", target, "-o"])
                    .arg(&exe)
                    .arg(&path)
                    .current_dir(build::root())
                    .status()
                    .map_err(|e| format!("running rustc: {e}"))?;
                if !status.success() {
                    return Err(format!("rustc failed on {}", path.display()));
                }
            }
            v.push((name, exe));
        }
    }
    Ok(v)
}

/// Names of the busybox comparison tests.
pub fn names() -> Result<Vec<String>, String> {
    Ok(scripts()?.into_iter().map(|(n, _)| n).collect())
}

fn copy_tree(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::create_dir_all(to).map_err(|e| e.to_string())?;
    for e in std::fs::read_dir(from).map_err(|e| e.to_string())?.filter_map(|e| e.ok()) {
        let dst = to.join(e.file_name());
        if e.path().is_dir() {
            copy_tree(&e.path(), &dst)?;
        } else {
            std::fs::copy(e.path(), &dst).map_err(|err| err.to_string())?;
        }
    }
    Ok(())
}

/// Longest a script may run on the host.
const HOST_TIMEOUT_S: u64 = 60;

/// What the host's busybox prints for `script`.
fn host_output(name: &str, script: &Path, pid_namespace: bool) -> Result<String, String> {
    let dir = build::root().join("target/lxtest").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    copy_tree(&build::root().join("libos/root"), &dir)?;
    std::fs::create_dir_all(dir.join("tmp")).map_err(|e| e.to_string())?;
    std::fs::create_dir_all(dir.join("cbin")).map_err(|e| e.to_string())?;
    // Linked, not copied: ~90 MB of programs per test otherwise.
    for (name, exe) in c_programs()? {
        let to = dir.join("cbin").join(&name);
        std::fs::hard_link(&exe, &to)
            .or_else(|_| std::fs::copy(&exe, &to).map(|_| ()))
            .map_err(|e| e.to_string())?;
    }
    // A script that hangs on the host (a race in busybox itself) must fail
    // the test, not stall it.
    let mut cmd = Command::new("timeout");
    cmd.arg(HOST_TIMEOUT_S.to_string());
    // On Veneer the script's shell is init (PID 1); a script that depends
    // on that runs on the host as PID 1 of a new PID namespace, with its
    // own /proc.
    if pid_namespace {
        cmd.args(["unshare", "--pid", "--fork", "--mount-proc"]);
    }
    cmd.arg(build::BUSYBOX);
    // A shell started in the background inherits SIGINT and SIGQUIT ignored,
    // and a non-interactive shell cannot trap signals ignored on entry:
    // give the host run Linux's defaults, as Veneer's processes have.
    // SAFETY: `signal` is async-signal-safe, as `pre_exec` requires.
    unsafe {
        cmd.pre_exec(|| {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            libc::signal(libc::SIGQUIT, libc::SIG_DFL);
            Ok(())
        });
    }
    let out = cmd
        .arg("sh")
        .arg("-c")
        .arg(format!("exec {} sh {} 2>&1", build::BUSYBOX, script.display()))
        .current_dir(&dir)
        .env_clear()
        .env("PATH", "/bin:/usr/bin:/sbin:/usr/sbin")
        .env("HOME", "/")
        .output()
        .map_err(|e| format!("running host busybox: {e}"))?;
    let _ = std::fs::remove_dir_all(&dir);
    if !out.status.success() {
        return Err(format!("{name}: the script fails on the host too ({})", out.status));
    }
    String::from_utf8(out.stdout).map_err(|_| format!("{name}: host output is not UTF-8"))
}

/// The program's output in a Veneer serial log. lxrt reports each
/// unsupported Linux call once per boot: a report seen twice is added to the
/// output (as `lxrt: reported twice: ...`), so the comparison fails.
pub fn guest_output(serial: &str) -> String {
    let mut out = String::new();
    let mut started = false;
    let mut reported = Vec::new();
    let serial = serial.replace('\r', "");
    for line in serial.split_inclusive('\n') {
        if line.starts_with("veneer: starting lxrt") {
            started = true;
            continue;
        }
        if line.starts_with("lxrt: unsupported Linux call ") {
            if reported.contains(&line) {
                out.push_str(&format!("lxrt: reported twice: {line}"));
            }
            reported.push(line);
        }
        if !started || line.starts_with("veneer: ") || line.starts_with("lxrt: ") {
            continue;
        }
        out.push_str(line);
    }
    out
}

/// What a script's `# ...` directive lines ask for (see the module doc).
#[derive(Default)]
struct Directives {
    /// `# log: TEXT`: console lines Veneer must print.
    log: Vec<String>,
    /// `# veneer-only`: no host comparison.
    veneer_only: bool,
    /// `# host: pid namespace`: the host's side runs as PID 1.
    pid_namespace: bool,
    /// `# wall: SECONDS | FROM | TO`: output `TO` must follow `FROM` after
    /// that many seconds of the host's time.
    wall: Option<Wall>,
    /// `# with: PKG..`: Debian packages the root must hold.
    with: Vec<String>,
}

fn directives(script: &Path) -> Result<Directives, String> {
    let text = std::fs::read_to_string(script).map_err(|e| format!("reading {}: {e}", script.display()))?;
    let mut d = Directives::default();
    for line in text.lines() {
        if let Some(l) = line.strip_prefix("# log: ") {
            d.log.push(l.to_string());
        } else if let Some(p) = line.strip_prefix("# with: ") {
            d.with.extend(p.split_whitespace().map(str::to_string));
        } else if let Some(w) = line.strip_prefix("# wall: ") {
            let bad = || format!("{}: want `# wall: SECONDS | FROM | TO`, got {w:?}", script.display());
            let parts: Vec<&str> = w.split(" | ").collect();
            let [secs, from, to] = parts[..] else { return Err(bad()) };
            let secs = secs.parse().map_err(|_| bad())?;
            d.wall = Some(Wall { secs, from: from.into(), to: to.into() });
        } else {
            d.veneer_only |= line == "# veneer-only";
            d.pid_namespace |= line == "# host: pid namespace";
        }
    }
    Ok(d)
}

/// The comparison tests among `names` (all when empty).
pub fn plan(img: &Image, names: &[String]) -> Result<Vec<BootTest>, String> {
    let mut tests = Vec::new();
    // One boot archive per set of packages, however many tests ask for it.
    let mut images: std::collections::HashMap<Vec<String>, Image> = std::collections::HashMap::new();
    for (name, script) in scripts()? {
        if !names.is_empty() && !names.contains(&name) {
            continue;
        }
        let file = script.file_name().and_then(|f| f.to_str()).unwrap_or_default();
        let d = directives(&script)?;
        let output = if d.veneer_only { None } else { Some(host_output(&name, &script, d.pid_namespace)?) };
        let mut with = d.with.clone();
        with.sort();
        if !images.contains_key(&with) {
            images.insert(with.clone(), build::with_packages(img, &with)?);
        }
        let img = &images[&with];
        tests.push(BootTest {
            output,
            wall: d.wall,
            ..BootTest::new(
                name.clone(),
                qemu::base_args(img, &format!("lxrt /bin/sh /tests/{file}")),
                d.log,
                Duration::from_secs(TIMEOUT_S),
            )
        });
    }
    Ok(tests)
}

#[cfg(test)]
mod tests {
    use super::guest_output;

    const NOTE: &str = "lxrt: unsupported Linux call sendfile (40): -ENOSYS\n";

    #[test]
    fn notes_are_not_program_output() {
        let serial = format!("veneer: boot\r\nveneer: starting lxrt as 0x401\r\nhi\r\n{NOTE}there\r\n");
        assert_eq!(guest_output(&serial), "hi\nthere\n");
    }

    #[test]
    fn a_call_reported_twice_shows_in_the_output() {
        let serial = format!("veneer: starting lxrt as 0x401\n{NOTE}hi\n{NOTE}");
        assert_eq!(guest_output(&serial), format!("hi\nlxrt: reported twice: {NOTE}"));
    }
}
