//! Debian packages in the boot root (`--with PKG`, a test's `# with: PKG`):
//! the packages and everything they depend on (apt's dependency closure,
//! without recommends), downloaded once into `target/debs/` with
//! `apt-get download` and unpacked with `dpkg-deb -x`, as `dpkg` would
//! install them minus their maintainer scripts.

use crate::build::root;
use std::path::{Path, PathBuf};
use std::process::Command;

fn run(cmd: &mut Command) -> Result<String, String> {
    let out = cmd.output().map_err(|e| format!("running {cmd:?}: {e}"))?;
    if !out.status.success() {
        return Err(format!("{cmd:?} failed: {}", String::from_utf8_lossy(&out.stderr)));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// `pkgs` and every package they depend on (real packages only: a virtual
/// one is provided by some real package apt also lists).
fn closure(pkgs: &[String]) -> Result<Vec<String>, String> {
    let mut cmd = Command::new("apt-cache");
    cmd.args(["depends", "--recurse", "--no-recommends", "--no-suggests", "--no-conflicts"]);
    cmd.args(["--no-breaks", "--no-replaces", "--no-enhances"]).args(pkgs);
    let out = run(&mut cmd)?;
    let mut v: Vec<String> =
        out.lines().filter(|l| !l.starts_with(' ') && !l.starts_with('<')).map(str::to_string).collect();
    v.sort();
    v.dedup();
    Ok(v)
}

/// The cached `.deb` of `pkg`, downloaded if missing.
fn deb(cache: &Path, pkg: &str) -> Result<PathBuf, String> {
    let find = || -> Result<Option<PathBuf>, String> {
        let rd = std::fs::read_dir(cache).map_err(|e| format!("reading {}: {e}", cache.display()))?;
        let prefix = format!("{pkg}_");
        Ok(rd.filter_map(|e| e.ok()).map(|e| e.path()).find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&prefix) && n.ends_with(".deb"))
        }))
    };
    if let Some(p) = find()? {
        return Ok(p);
    }
    println!("xtask: downloading {pkg}");
    run(Command::new("apt-get").args(["download", "-q", pkg]).current_dir(cache))?;
    find()?.ok_or_else(|| format!("apt-get download {pkg} left no .deb"))
}

/// A directory holding `pkgs` and their dependencies unpacked (made once
/// per set of packages). Boots that run side by side may ask for the same
/// set at once: each unpacks into a directory of its own and renames it
/// into place, so nobody ever reads a half-made tree (the program-start
/// benchmark once booted a root missing `sed` that way).
pub fn unpacked(pkgs: &[String]) -> Result<PathBuf, String> {
    let cache = root().join("target/debs");
    std::fs::create_dir_all(&cache).map_err(|e| format!("creating {}: {e}", cache.display()))?;
    let mut names = pkgs.to_vec();
    names.sort();
    let dir = cache.join(format!("root-{}", names.join("+")));
    if dir.join(".unpacked").exists() {
        return Ok(dir);
    }
    // Downloads into the shared cache go one at a time in this process.
    static DOWNLOADS: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = DOWNLOADS.lock().map_err(|_| "a download panicked".to_string())?;
    if dir.join(".unpacked").exists() {
        return Ok(dir);
    }
    let tmp = cache.join(format!(".root-{}-{}", names.join("+"), std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).map_err(|e| format!("creating {}: {e}", tmp.display()))?;
    for pkg in closure(&names)? {
        let deb = deb(&cache, &pkg)?;
        run(Command::new("dpkg-deb").arg("-x").arg(&deb).arg(&tmp))?;
    }
    std::fs::write(tmp.join(".unpacked"), "").map_err(|e| e.to_string())?;
    // A stale partial tree (from before this scheme) gives way; if another
    // process renamed its tree into place first, ours goes.
    if dir.exists() && !dir.join(".unpacked").exists() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    if std::fs::rename(&tmp, &dir).is_err() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    if dir.join(".unpacked").exists() {
        Ok(dir)
    } else {
        Err(format!("unpacking {} left no tree at {}", names.join(" "), dir.display()))
    }
}
