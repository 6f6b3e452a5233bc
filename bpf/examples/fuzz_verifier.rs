//! The verifier fuzzing campaign as a command (what `cargo xtask fuzz
//! verifier` runs, built in release mode):
//!
//!     fuzz_verifier --programs N --seed S [--first F] [--save DIR]
//!
//! runs programs F..F+N of seed S (see `bpf::campaign`), prints the
//! figures, writes every program that broke a rule to DIR (one file per
//! program, replayed by `tests/regressions.rs`) and exits non-zero if any
//! did.

#[path = "../tests/common/exec.rs"]
#[allow(dead_code)] // `Executable::call` is for the tests
mod exec;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use bpf::campaign::{run_campaign, Broken, Case, Stats};
use exec::run_native;

struct Args {
    programs: u64,
    seed: u64,
    first: u64,
    save: Option<PathBuf>,
}

fn number(s: &str) -> Result<u64, String> {
    let parsed = match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16),
        None => s.parse(),
    };
    parsed.map_err(|_| format!("`{s}` is not a number"))
}

fn parse(args: &[String]) -> Result<Args, String> {
    let mut a = Args { programs: 10_000, seed: 1, first: 0, save: None };
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let value = it.next().ok_or(format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--programs" => a.programs = number(value)?,
            "--seed" => a.seed = number(value)?,
            "--first" => a.first = number(value)?,
            "--save" => a.save = Some(PathBuf::from(value)),
            _ => return Err(format!("unknown option {flag}")),
        }
    }
    Ok(a)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args = match parse(&args) {
        Ok(a) => a,
        Err(e) => {
            eprintln!(
                "fuzz_verifier: {e}\nusage: fuzz_verifier --programs N --seed S [--first F] [--save DIR]"
            );
            return ExitCode::FAILURE;
        }
    };
    let start = Instant::now();
    let mut total = Stats::default();
    let mut last_saved = None;
    let mut found = |n: u64, b: &Broken, case: Case| {
        eprintln!("BROKEN: seed {:#x} program {n}: {b:?}", args.seed);
        if let Some(dir) = &args.save {
            if last_saved != Some(n) {
                last_saved = Some(n);
                let path = dir.join(format!("seed{:x}-{n}.txt", args.seed));
                if let Err(e) =
                    std::fs::create_dir_all(dir).and_then(|_| std::fs::write(&path, case.to_text()))
                {
                    eprintln!("fuzz_verifier: cannot write {}: {e}", path.display());
                }
            }
        }
    };
    let chunk = 50_000;
    let mut first = args.first;
    let end = args.first + args.programs;
    while first < end {
        let count = chunk.min(end - first);
        let st = run_campaign(args.seed, first, count, &mut run_native, &mut found);
        total.add(&st);
        first += count;
        eprintln!(
            "fuzz_verifier: {} programs, {} accepted, {} violations, {} disagreements ({:.0} s)",
            total.programs,
            total.accepted,
            total.violations,
            total.disagreements,
            start.elapsed().as_secs_f64()
        );
    }
    let secs = start.elapsed().as_secs_f64();
    println!("seed          {:#x}", args.seed);
    println!("programs      {} (from {})", total.programs, args.first);
    println!(
        "accepted      {} ({:.1}%)",
        total.accepted,
        100.0 * total.accepted as f64 / total.programs.max(1) as f64
    );
    println!("oracle runs   {}", total.runs);
    println!("JIT runs      {}", total.jit_runs);
    println!("violations    {}", total.violations);
    println!("disagreements {}", total.disagreements);
    println!("wall time     {secs:.1} s");
    if total.violations + total.disagreements > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
