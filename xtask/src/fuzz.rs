//! `cargo xtask fuzz verifier [--programs N] [--seed S] [--first F] [--save DIR]`:
//! the differential verifier fuzzing campaign (`bpf/src/campaign.rs`),
//! built in release mode and run on the host. Every program that breaks a
//! rule is written to DIR (default `bpf/tests/regressions`, which the host
//! tests replay) and the command fails.

use crate::build;

const USAGE: &str = "usage: cargo xtask fuzz verifier [--programs N] [--seed S] [--first F] [--save DIR]";

pub fn main(args: &[String]) -> Result<(), String> {
    match args.split_first() {
        Some((target, rest)) if target == "verifier" => verifier(rest),
        _ => Err(USAGE.into()),
    }
}

fn verifier(rest: &[String]) -> Result<(), String> {
    let save = build::root().join("bpf/tests/regressions");
    let save = save.to_str().ok_or("workspace path is not UTF-8")?;
    let mut args = vec!["run", "--release", "--quiet", "-p", "bpf", "--example", "fuzz_verifier", "--"];
    if !rest.iter().any(|a| a == "--save") {
        args.extend(["--save", save]);
    }
    args.extend(rest.iter().map(String::as_str));
    build::cargo(&args, &[])
        .map_err(|_| "the verifier campaign failed (broken rules are saved as regression cases)".into())
}
