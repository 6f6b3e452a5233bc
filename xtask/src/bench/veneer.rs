//! The Veneer side: the user program `bench` booted as the first
//! environment. Veneer is young, so every way this can fail (no `bench`
//! program, a build that breaks, a boot that hangs) yields a `Side` with a
//! problem and no figures, shown as "not yet", rather than an error.

use super::{Options, Side};
use crate::{build, qemu};

pub fn run(opts: &Options, names: &[&str]) -> Side {
    if names.is_empty() {
        return Side::absent("no Veneer benchmark selected".into());
    }
    match build::user_programs() {
        Ok(programs) if programs.iter().any(|p| p == "bench") => {}
        _ => return Side::absent("no user program `bench` yet".into()),
    }
    let img = match build::all() {
        Ok(img) => img,
        Err(e) => return Side::absent(format!("build failed: {e}")),
    };
    let mut init = vec!["bench"];
    if opts.quick {
        init.push("quick");
    }
    if !opts.names.is_empty() {
        init.extend(names);
    }
    let args = with_accel(qemu::base_args(&img, &init.join(" ")), opts);
    println!("xtask: bench: booting Veneer ({})", init.join(" "));
    let out = match qemu::headless(&args, opts.timeout()) {
        Ok(out) => out,
        Err(e) => return Side::absent(e),
    };
    let mut side = Side::parse(&out.serial);
    if out.timed_out {
        side.problem = Some(format!("timed out after {:?}", opts.timeout()));
    } else if !side.done {
        side.problem = Some(format!("stopped early (QEMU exit {:?})", out.code));
    }
    if side.problem.is_some() {
        let dir = build::root().join("target/bench");
        let log = dir.join("veneer-serial.log");
        let _ = std::fs::create_dir_all(&dir).and_then(|_| std::fs::write(&log, &out.serial));
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
