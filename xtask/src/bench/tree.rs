//! The I/O-intensive workload's row (paper 000 §6, issue 23 §3):
//! `libos/tests/c/iotree.c` runs unmodified Debian programs (`TOOLS`)
//! over a real source tree on both sides, in `/data`. The tree is the
//! headers of `SOURCE` (`usr/include`), packed here once as
//! `/bench/tree.tar.gz` with the md5 of the uncompressed archive in
//! `/bench/tree.md5`, and a program to compile against it
//! (`/bench/prog.c`, `iotree.c` itself, with `marks.h`): files both roots hold (Veneer's
//! boot archive, Linux's initramfs). Its figures are the phases' instructions between
//! markers (`super::marks`), the row `io_tree` their sum.

use crate::build::root;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The packages whose `usr/include` is the tree (a few thousand files).
pub const SOURCE: &[&str] = &["libc6-dev", "libstdc++-12-dev", "linux-libc-dev"];

/// The programs the workload runs, on both sides (`libc6-dev`: the C
/// library's start files and link script for `tcc`).
pub const TOOLS: &[&str] = &["coreutils", "diffutils", "gzip", "libc6-dev", "tar", "tcc"];

/// The workload's phases, in the order `iotree` runs and prints them.
pub const PHASES: &[&str] = &[
    "tree_cp",
    "tree_gunzip",
    "tree_untar",
    "tree_cpr",
    "tree_diff",
    "tree_cc",
    "tree_tar",
    "tree_gzip",
    "tree_rm",
];

/// The row that is the sum of the phases.
pub const TOTAL: &str = "io_tree";

/// Whether `row` is the workload's (its total or a phase).
pub fn is_part(row: &str) -> bool {
    row == TOTAL || PHASES.contains(&row)
}

/// The disk requests and bytes of each phase on both sides (medians of
/// the trials; `libos/tests/c/iotree.c` reads `/sys/block/vda/stat`
/// around each phase, outside the markers), if the workload ran.
pub fn print_io(clock: &str, linux: &super::Side, veneer: &super::Side) {
    if PHASES.iter().all(|p| !linux.io.contains_key(*p) && !veneer.io.contains_key(*p)) {
        return;
    }
    let median = |side: &super::Side, phase: &str| -> String {
        let Some(v) = side.io.get(phase).filter(|v| !v.is_empty()) else { return "-".into() };
        let mut r: Vec<u64> = v.iter().map(|t| t.0).collect();
        let mut b: Vec<u64> = v.iter().map(|t| t.1).collect();
        r.sort_unstable();
        b.sort_unstable();
        format!("{} req, {:.1} MB", r[r.len() / 2], b[b.len() / 2] as f64 / 1e6)
    };
    println!("\nI/O-intensive workload ({clock} clock): virtio-blk requests (reads + writes + flushes) and bytes per phase");
    println!("{:<14} {:>26} {:>26}", "phase", "Linux (ext4)", "Veneer (C-FFS over XN)");
    for p in PHASES {
        println!("{:<14} {:>26} {:>26}", p, median(linux, p), median(veneer, p));
    }
}

/// How long a boot that runs the workload may take (wall time, TCG).
pub const TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2400);

/// The files the roots hold for the workload: (path in the root, the
/// host's file).
pub fn files() -> Result<Vec<(String, PathBuf)>, String> {
    // Both sides' boots ask at once: one packs, the other waits.
    static PACKING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = PACKING.lock().map_err(|_| "packing the tree panicked".to_string())?;
    let dir = root().join("target/bench/tree");
    let gz = dir.join(format!("{}.tar.gz", SOURCE.join("+")));
    let sum = dir.join(format!("{}.md5", SOURCE.join("+")));
    if !gz.exists() || !sum.exists() {
        pack(&dir, &gz, &sum)?;
    }
    // What the compile step builds: the workload's own program, and the
    // header it includes.
    let c = root().join("libos/tests/c");
    Ok(vec![
        ("bench/tree.tar.gz".into(), gz),
        ("bench/tree.md5".into(), sum),
        ("bench/prog.c".into(), c.join("iotree.c")),
        ("bench/marks.h".into(), c.join("marks.h")),
    ])
}

/// `files`, read.
pub fn contents() -> Result<Vec<(String, Vec<u8>)>, String> {
    files()?
        .into_iter()
        .map(|(name, p)| {
            std::fs::read(&p).map(|d| (name, d)).map_err(|e| format!("reading {}: {e}", p.display()))
        })
        .collect()
}

/// Packs `SOURCE`'s `usr/include` as `include/...` into `gz` (the same
/// bytes from the same packages: names sorted, owners and times fixed,
/// no name or time in the gzip header) and writes `sum`, md5sum's line
/// for the uncompressed archive as `tree.tar`.
fn pack(dir: &Path, gz: &Path, sum: &Path) -> Result<(), String> {
    let pkgs: Vec<String> = SOURCE.iter().map(|s| s.to_string()).collect();
    let tree = crate::debs::unpacked(&pkgs)?;
    std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let tar = dir.join("tree.tar");
    let out = |cmd: &mut Command| -> Result<Vec<u8>, String> {
        let o = cmd.output().map_err(|e| format!("running {cmd:?}: {e}"))?;
        if !o.status.success() {
            return Err(format!("{cmd:?} failed: {}", String::from_utf8_lossy(&o.stderr)));
        }
        Ok(o.stdout)
    };
    out(Command::new("tar")
        .args(["--sort=name", "--owner=0", "--group=0", "--numeric-owner", "--mtime=@0", "-cf"])
        .arg(&tar)
        .arg("-C")
        .arg(tree.join("usr"))
        .arg("include"))?;
    let digest = out(Command::new("md5sum").arg(&tar))?;
    let digest = String::from_utf8_lossy(&digest);
    let hash = digest.split_whitespace().next().filter(|h| h.len() == 32).ok_or("md5sum said nothing")?;
    let data = out(Command::new("gzip").args(["-n", "-6", "-c"]).arg(&tar))?;
    let _ = std::fs::remove_file(&tar);
    std::fs::write(gz, data).map_err(|e| format!("writing {}: {e}", gz.display()))?;
    std::fs::write(sum, format!("{hash}  tree.tar\n")).map_err(|e| format!("writing {}: {e}", sum.display()))
}
