//! Boot tests of the library OS against Linux: each `libos/tests/NAME.sh`
//! is run by the host's busybox (`/bin/busybox sh`, in a scratch copy of
//! `libos/root/`) and by the same busybox on Veneer under lxrt
//! (`init=lxrt /bin/sh /tests/NAME.sh`); the test `lx_NAME` passes when
//! Veneer powers off with success and the program's console output equals
//! the host's stdout+stderr byte for byte (lxrt's own `lxrt:` notes and the
//! kernel's `veneer:` lines are not program output and are left out).

use crate::boottest::BootTest;
use crate::build::{self, Image};
use crate::qemu;
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

/// What the host's busybox prints for `script`.
fn host_output(name: &str, script: &Path) -> Result<String, String> {
    let dir = build::root().join("target/lxtest").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    copy_tree(&build::root().join("libos/root"), &dir)?;
    std::fs::create_dir_all(dir.join("tmp")).map_err(|e| e.to_string())?;
    let out = Command::new(build::BUSYBOX)
        .arg("sh")
        .arg("-c")
        .arg(format!("exec {} sh {} 2>&1", build::BUSYBOX, script.display()))
        .current_dir(&dir)
        .env_clear()
        .env("PATH", "/bin:/usr/bin:/sbin:/usr/sbin")
        .env("HOME", "/")
        .output()
        .map_err(|e| format!("running host busybox: {e}"))?;
    if !out.status.success() {
        return Err(format!("{name}: the script fails on the host too ({})", out.status));
    }
    String::from_utf8(out.stdout).map_err(|_| format!("{name}: host output is not UTF-8"))
}

/// The program's output in a Veneer serial log.
pub fn guest_output(serial: &str) -> String {
    let mut out = String::new();
    let mut started = false;
    for line in serial.replace('\r', "").split_inclusive('\n') {
        if line.starts_with("veneer: starting lxrt") {
            started = true;
            continue;
        }
        if !started || line.starts_with("veneer: ") || line.starts_with("lxrt: ") {
            continue;
        }
        out.push_str(line);
    }
    out
}

/// The comparison tests among `names` (all when empty).
pub fn plan(img: &Image, names: &[String]) -> Result<Vec<BootTest>, String> {
    let mut tests = Vec::new();
    for (name, script) in scripts()? {
        if !names.is_empty() && !names.contains(&name) {
            continue;
        }
        let file = script.file_name().and_then(|f| f.to_str()).unwrap_or_default();
        tests.push(BootTest {
            name: name.clone(),
            args: qemu::base_args(img, &format!("lxrt /bin/sh /tests/{file}")),
            expect: Vec::new(),
            timeout: Duration::from_secs(TIMEOUT_S),
            output: Some(host_output(&name, &script)?),
        });
    }
    Ok(tests)
}
