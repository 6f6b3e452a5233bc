//! Runs the crash campaign (used by `cargo xtask crash`).
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let get = |k: &str| {
        args.iter().position(|a| a == k).and_then(|i| args.get(i + 1)).and_then(|v| v.parse::<u64>().ok())
    };
    let states = get("--states").unwrap_or(100_000);
    let seed = get("--seed").unwrap_or(1);
    let mut cfg = cffs::sim::full(states, seed);
    if let Some(d) = get("--depth") {
        cfg.depth = d as usize;
    }
    cfg.seeded_bug = args.iter().any(|a| a == "--seeded-bug");
    cfg.stop_early = args.iter().any(|a| a == "--stop-early");
    let t = std::time::Instant::now();
    let mut last = 0;
    let mut shown = 0;
    let st = cffs::sim::campaign(&cfg, |s| {
        for e in &s.examples[shown..] {
            eprintln!("  violation: {e}");
        }
        shown = s.examples.len();
        if s.states >= last + 5000 {
            last = s.states;
            eprintln!(
                "  {} workloads, {} states, {} violations ({:.0?})",
                s.workloads,
                s.states,
                s.violations,
                t.elapsed()
            );
        }
    });
    println!(
        "crash campaign: seed {seed}: {} workloads, {} crash states ({} during recovery), {} violations, {:.1?}",
        st.workloads,
        st.states,
        st.recovery_states,
        st.violations,
        t.elapsed()
    );
    for e in &st.examples {
        println!("  violation: {e}");
    }
    if st.violations > 0 {
        std::process::exit(1);
    }
}
