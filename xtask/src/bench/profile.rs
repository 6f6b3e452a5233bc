//! `cargo xtask bench NAME --profile`: where Veneer's instructions go in
//! one row's benchmark. Veneer boots under the fair clock with a QEMU
//! plugin (`bench/profile/insn_count.c`) that counts every guest
//! instruction by address, twice: once running the row (and the
//! calibration every boot runs), once running the calibration alone. The
//! difference is the row's trials and nothing else; it is attributed to
//! functions through the symbols of the kernel and of the benchmark
//! program, and divided by the operations measured (iterations × trials).
//! The top functions go to the terminal and to
//! `bench/results/profile-NAME.txt`.

use super::{rows, veneer, Clock, Options, Side};
use crate::build::{self, root};
use crate::qemu;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

/// How many functions the summary lists.
const TOP: usize = 30;

pub fn main(opts: &Options, names: &[&str]) -> Result<(), String> {
    let mut rows: Vec<&str> = names.iter().copied().filter(|n| *n != rows::CALIBRATION).collect();
    // The I/O workload's phases are one boot's: profiled as their total.
    if rows.iter().any(|n| super::tree::is_part(n)) {
        rows.retain(|n| !super::tree::is_part(n));
        rows.push(super::tree::TOTAL);
    }
    let [name] = rows[..] else {
        return Err("bench --profile: name one row that has a Veneer benchmark".into());
    };
    if opts.kvm {
        return Err("bench --profile counts instructions: no --kvm".into());
    }
    let dir = root().join("target/bench/profile");
    std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let plugin = plugin(&dir)?;
    let img = build::all()?;
    for program in veneer::PROGRAMS {
        let img = &veneer::image_for(&img, program)?;
        let (side, counts) = boot(opts, img, &plugin, program, &[rows::CALIBRATION, name], &dir)?;
        if !side.announced(name) {
            continue;
        }
        let (base_side, baseline) = boot(opts, img, &plugin, program, &[rows::CALIBRATION], &dir)?;
        let mut errors = side.verify(program, false);
        errors.extend(base_side.verify(&format!("{program} (baseline)"), false));
        if !errors.is_empty() {
            return Err(format!("bench --profile: FAILED:\n  {}", errors.join("\n  ")));
        }
        let ops: u64 = side.trials[name].iter().map(|&(n, _)| n).sum();
        let measured: u64 = side.trials[name].iter().map(|&(_, t)| t).sum();
        let text = summary(name, program, ops, measured, &functions(program, &counts, &baseline)?);
        print!("{text}");
        let out = root().join(format!("bench/results/profile-{name}.txt"));
        std::fs::write(&out, text).map_err(|e| format!("writing {}: {e}", out.display()))?;
        println!("xtask: bench: wrote {}", out.display());
        return Ok(());
    }
    Err(format!("bench --profile: no Veneer program announced `{name}`"))
}

/// Builds the plugin unless it is newer than its source.
pub fn plugin(dir: &Path) -> Result<PathBuf, String> {
    // Boots start at once (the storage boots both want it): one builds it,
    // under a name of its own renamed into place, so that no QEMU loads a
    // half-written file ("file too short").
    static BUILDING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = BUILDING.lock().unwrap_or_else(|e| e.into_inner());
    let src = root().join("bench/profile/insn_count.c");
    let so = dir.join("insn_count.so");
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    if modified(&so).is_none() || modified(&so) < modified(&src) {
        let part = dir.join(format!("insn_count.so.{}", std::process::id()));
        let status = Command::new("gcc")
            .args(["-O2", "-shared", "-fPIC", "-fvisibility=hidden", "-Wall", "-Wextra", "-Werror", "-o"])
            .arg(&part)
            .arg(&src)
            .status()
            .map_err(|e| format!("running gcc: {e}"))?;
        if !status.success() {
            return Err(format!("gcc failed on {}", src.display()));
        }
        std::fs::rename(&part, &so).map_err(|e| format!("{}: {e}", so.display()))?;
    }
    Ok(so)
}

/// Boots `program` with `names` and the plugin; its lines, and the count
/// of every instruction address.
fn boot(
    opts: &Options,
    img: &build::Image,
    plugin: &Path,
    program: &str,
    names: &[&str],
    dir: &Path,
) -> Result<(Side, BTreeMap<u64, u64>), String> {
    let init = veneer::init_words(opts, program, names, false).join(" ");
    let counts = dir.join(format!("{}.counts", init.replace([' ', '/'], "-")));
    let mut args = veneer::boot_args(opts, Clock::Fair, img, &init);
    // The storage rows' boots need their disk (the workload's, its memory).
    let disk = dir.join("profile-data.img");
    if veneer::storage(program) {
        veneer::data_disk(&disk)?;
        args.extend(qemu::device_args(&disk, 0));
        if program == veneer::TREE {
            if let Some(at) = args.iter().position(|a| a == "-m") {
                args[at + 1] = veneer::TREE_MEMORY.into();
            }
        }
    }
    args.push("-plugin".into());
    args.push(format!("{},out={}", plugin.display(), counts.display()));
    println!("xtask: bench: profiling Veneer ({init})");
    let timeout = if program == veneer::TREE { opts.timeout_with_tree() } else { opts.timeout() };
    let out = qemu::headless(&args, timeout, &[]);
    let _ = std::fs::remove_file(&disk);
    let out = out?;
    let mut side = Side::parse(&out.serial);
    if out.timed_out || out.code != Some(qemu::EXIT_SUCCESS) {
        side.problem = Some(format!("did not power off with success (QEMU exit {:?})", out.code));
    }
    let text = std::fs::read_to_string(&counts).map_err(|e| format!("reading {}: {e}", counts.display()))?;
    let mut map = BTreeMap::new();
    for line in text.lines() {
        let mut w = line.split(' ');
        let (Some(Ok(va)), Some(Ok(n))) =
            (w.next().map(|a| u64::from_str_radix(a, 16)), w.next().map(str::parse::<u64>))
        else {
            return Err(format!("{}: bad line `{line}`", counts.display()));
        };
        *map.entry(va).or_insert(0) += n;
    }
    Ok((side, map))
}

/// A program's function symbols, sorted by address.
struct Symbols {
    label: String,
    /// (start, end, name), by start.
    syms: Vec<(u64, u64, String)>,
}

impl Symbols {
    fn load(label: &str, elf: &Path) -> Result<Self, String> {
        let out = Command::new("nm")
            .args(["-n", "-S", "-C", "--defined-only"])
            .arg(elf)
            .output()
            .map_err(|e| format!("running nm: {e}"))?;
        let hex = |w: &str| u64::from_str_radix(w, 16).ok();
        let mut syms = Vec::new();
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            let w: Vec<&str> = line.splitn(4, ' ').collect();
            // `addr size kind name`, or `addr kind name` for a symbol of
            // no known size (assembly labels): it runs to the next one, at
            // most a page.
            let (start, size, kind, name) = match w[..] {
                [a, s, k, n] if k.len() == 1 => (hex(a), hex(s), k, n),
                [a, k, n, ..] if k.len() == 1 => (hex(a), None, k, n),
                _ => continue,
            };
            if let (Some(start), true) = (start, matches!(kind, "t" | "T" | "W" | "w")) {
                syms.push((start, start + size.unwrap_or(4096), name.to_string()));
            }
        }
        for i in 0..syms.len() {
            let next = syms.get(i + 1).map_or(u64::MAX, |s| s.0);
            syms[i].1 = syms[i].1.min(next);
        }
        Ok(Symbols { label: label.into(), syms })
    }

    /// The function holding `va`: its start and name.
    fn find(&self, va: u64) -> Option<(u64, &str)> {
        let i = self.syms.partition_point(|s| s.0 <= va).checked_sub(1)?;
        let (start, end, name) = &self.syms[i];
        (va < *end).then_some((*start, name.as_str()))
    }
}

/// One function's share of the row: instructions, and executions of its
/// first instruction (its calls, for a function that does not loop back to
/// its entry).
#[derive(Default, Clone, Copy)]
struct Cost {
    insns: i64,
    calls: i64,
}

/// Instructions of the row alone (counts minus baseline) by function,
/// largest first.
fn functions(
    program: &str,
    counts: &BTreeMap<u64, u64>,
    baseline: &BTreeMap<u64, u64>,
) -> Result<Vec<(String, Cost)>, String> {
    let target = root().join("target");
    // The program's first word names its ELF (`lxrt` for the start rows).
    let elf = program.split(' ').next().unwrap_or(program);
    let tables = [
        Symbols::load(elf, &target.join(build::USER_TARGET).join("release").join(elf))?,
        Symbols::load("kernel", &target.join(build::KERNEL_TARGET).join("release/kernel"))?,
    ];
    let mut by_function: BTreeMap<String, Cost> = BTreeMap::new();
    let addresses: std::collections::BTreeSet<u64> = counts.keys().chain(baseline.keys()).copied().collect();
    for va in addresses {
        let n = *counts.get(&va).unwrap_or(&0) as i64 - *baseline.get(&va).unwrap_or(&0) as i64;
        if n == 0 {
            continue;
        }
        let (start, name) = tables
            .iter()
            .find_map(|t| t.find(va).map(|(start, f)| (start, format!("{}: {f}", t.label))))
            .unwrap_or_else(|| (u64::MAX, format!("other user code (page {:#x})", va & !0xfff)));
        let cost = by_function.entry(name).or_default();
        cost.insns += n;
        if va == start {
            cost.calls += n;
        }
    }
    let mut v: Vec<(String, Cost)> = by_function.into_iter().collect();
    v.sort_by(|a, b| b.1.insns.cmp(&a.1.insns).then(a.0.cmp(&b.0)));
    Ok(v)
}

fn summary(name: &str, program: &str, ops: u64, measured: u64, functions: &[(String, Cost)]) -> String {
    let total: i64 = functions.iter().map(|f| f.1.insns).sum();
    let per_op = |n: i64| n as f64 / ops as f64;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "Profile of `{name}` on Veneer ({program}, -cpu {}): {:.0} instructions per operation counted by the \
         plugin over {ops} operations; the benchmark's own rdtsc reads {:.0}.\n",
        Clock::Fair.cpu(),
        per_op(total),
        measured as f64 / ops as f64
    );
    let _ = writeln!(s, "{:>12}  {:>6}  {:>9}  {:>9}  function", "per op", "share", "calls/op", "per call");
    for (f, c) in functions.iter().take(TOP) {
        let per_call =
            if c.calls > 0 { format!("{:.0}", c.insns as f64 / c.calls as f64) } else { "—".into() };
        let _ = writeln!(
            s,
            "{:>12.1}  {:>5.1}%  {:>9.1}  {per_call:>9}  {f}",
            per_op(c.insns),
            c.insns as f64 * 100.0 / total as f64,
            per_op(c.calls)
        );
    }
    let rest: i64 = functions.iter().skip(TOP).map(|f| f.1.insns).sum();
    let _ = writeln!(
        s,
        "{:>12.1}  {:>5.1}%  ({} more functions)",
        per_op(rest),
        rest as f64 * 100.0 / total as f64,
        functions.len().saturating_sub(TOP)
    );
    s
}
