//! The Veneer side: two boots, each with one benchmark program as the
//! first environment: the user program `bench` (the kernel's primitives)
//! and the library OS's `bench_libos` (virtual memory, pipes, fork, spawn
//! and the Linux personality through `libos/`). Both get the same command
//! line words; each runs the names it knows (all of its own when none are
//! given) and announces them in its `BENCH-PLAN`, and their lines are
//! merged into one side. Veneer is young, so every way this can fail (no
//! program, a build that breaks, a boot that hangs) yields a `Side` with a
//! problem and no figures, shown as "not yet", rather than an error.

use super::{Options, Side};
use crate::{build, qemu};

pub fn run(opts: &Options, names: &[&str]) -> Side {
    if names.is_empty() {
        return Side::absent("no Veneer benchmark selected".into());
    }
    let mut programs: Vec<&str> = Vec::new();
    if build::user_programs().is_ok_and(|p| p.iter().any(|p| p == "bench")) {
        programs.push("bench");
    }
    if build::LIBOS_PROGRAMS.contains(&"bench_libos") {
        programs.push("bench_libos");
    }
    if programs.is_empty() {
        return Side::absent("no benchmark program yet".into());
    }
    let img = match build::all() {
        Ok(img) => img,
        Err(e) => return Side::absent(format!("build failed: {e}")),
    };
    let sides: Vec<Side> = std::thread::scope(|s| {
        let boots: Vec<_> = programs.iter().map(|p| s.spawn(|| boot(opts, names, &img, p))).collect();
        boots.into_iter().map(|b| b.join().unwrap_or_else(|_| Side::absent("panicked".into()))).collect()
    });
    merge(sides)
}

/// One side from several boots: every plan, trial and failure; done when
/// all are; the first problem.
fn merge(sides: Vec<Side>) -> Side {
    let mut all = Side { plan: Some(Vec::new()), done: true, ..Side::default() };
    for side in sides {
        all.plan.as_mut().expect("set above").extend(side.plan.into_iter().flatten());
        for (name, trials) in side.trials {
            all.trials.entry(name).or_default().extend(trials);
        }
        all.failed.extend(side.failed);
        all.done &= side.done;
        all.problem = all.problem.or(side.problem);
    }
    all
}

/// Boots Veneer with `program` as the first environment.
fn boot(opts: &Options, names: &[&str], img: &build::Image, program: &str) -> Side {
    let mut init = vec![program];
    if opts.quick {
        init.push("quick");
    }
    if !opts.names.is_empty() {
        init.extend(names);
    }
    let args = with_accel(qemu::base_args(img, &init.join(" ")), opts);
    println!("xtask: bench: booting Veneer ({})", init.join(" "));
    let out = match qemu::headless(&args, opts.timeout(), &[]) {
        Ok(out) => out,
        Err(e) => return Side::absent(e),
    };
    let mut side = Side::parse(&out.serial);
    if out.timed_out {
        side.problem = Some(format!("timed out after {:?}", opts.timeout()));
    } else if !side.done {
        side.problem = Some(format!("stopped early (QEMU exit {:?})", out.code));
    }
    // The console is kept whatever happened (for a look at any notes).
    let dir = build::root().join("target/bench");
    let log = dir.join(format!("veneer-{program}-serial.log"));
    let _ = std::fs::create_dir_all(&dir).and_then(|_| std::fs::write(&log, &out.serial));
    if let Some(problem) = &mut side.problem {
        *problem = format!("{program}: {problem}");
        eprintln!("xtask: bench: Veneer console saved in {}", log.display());
    }
    side
}

/// Replaces `base_args`' `-accel tcg` with this run's acceleration.
fn with_accel(base: Vec<String>, opts: &Options) -> Vec<String> {
    let mut args = Vec::with_capacity(base.len() + 2);
    let mut base = base.into_iter();
    while let Some(arg) = base.next() {
        if arg == "-accel" {
            base.next();
            args.extend(opts.accel());
        } else {
            args.push(arg);
        }
    }
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merges_two_boots() {
        let a = Side::parse("BENCH-PLAN calib\nBENCH calib 10 10000\nBENCH-DONE\n");
        let b = Side::parse("BENCH-PLAN fork trap\nBENCH fork 4 400\nBENCH trap 1 2\nBENCH-FAIL trap odd\n");
        let side = merge(vec![a, b]);
        assert_eq!(side.plan.as_deref(), Some(&["calib".into(), "fork".into(), "trap".into()][..]));
        assert_eq!(side.figure("fork").map(|f| f.median), Some(100.0));
        assert_eq!(side.figure("calib").map(|f| f.median), Some(1000.0));
        assert_eq!(side.failed, ["trap odd"]);
        // The second boot never said BENCH-DONE.
        assert!(!side.done);
        let stopped = Side { problem: Some("timed out".into()), ..Side::default() };
        assert_eq!(merge(vec![Side::default(), stopped]).problem.as_deref(), Some("timed out"));
    }
}
