//! Replays every program the verifier fuzzing campaign ever caught
//! breaking a rule (`tests/regressions/*.txt`, written by `cargo xtask
//! fuzz verifier --save`, each with the input that showed it). Each must
//! now be rejected, or else run clean in the oracle on its saved input and
//! on random ones, with the JIT returning the same r0.

mod common;

use bpf::campaign::{oracle, Case};
use bpf::verify_with_beliefs;
use common::{run_native, Inputs, Rng};

fn cases() -> Vec<(String, Case)> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/regressions");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("regression directory") {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "txt") {
            let text = std::fs::read_to_string(&path).unwrap();
            let case = Case::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            out.push((path.display().to_string(), case));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[test]
fn every_regression_case_is_now_safe() {
    let cases = cases();
    assert!(cases.len() >= 30, "regression cases missing: {}", cases.len());
    let mut rng = Rng::new(0x4e9);
    let mut rejected = 0;
    for (name, case) in &cases {
        // The text form is stable.
        assert_eq!(Case::parse(&case.to_text()).unwrap().to_text(), case.to_text(), "{name}");
        let Ok((prog, beliefs)) = verify_with_beliefs(&case.insns, &case.spec) else {
            rejected += 1;
            continue;
        };
        let mut inputs = vec![case.inputs.clone()];
        inputs.extend((0..32).map(|_| Inputs::new(&mut rng, &case.spec)));
        let want: Vec<u64> = inputs
            .iter()
            .map(|i| oracle(&prog, &beliefs, i).unwrap_or_else(|e| panic!("{name} ({}): {e:?}", case.note)))
            .collect();
        let refs: Vec<&Inputs> = inputs.iter().collect();
        assert_eq!(run_native(&bpf::compile(&prog), &refs), want, "{name}: JIT disagrees");
    }
    eprintln!("{} regression cases, {rejected} now rejected", cases.len());
}
