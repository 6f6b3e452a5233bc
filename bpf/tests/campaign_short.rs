//! A short run of the verifier fuzzing campaign (the full one is `cargo
//! xtask fuzz verifier`): 20,000 programs, none of the accepted ones may
//! break a rule in the oracle or make the JIT disagree, and enough must be
//! accepted for that to mean something.

mod common;

use bpf::campaign::{run_campaign, Broken, Case};
use common::run_native;

#[test]
fn campaign_finds_nothing() {
    let programs = 20_000;
    let mut found = |n: u64, b: &Broken, case: Case| {
        panic!("program {n}: {b:?}\n{}", case.to_text());
    };
    let st = run_campaign(0x5eed, 0, programs, &mut run_native, &mut found);
    eprintln!("{st:?}");
    assert_eq!(st.programs, programs);
    assert_eq!((st.violations, st.disagreements), (0, 0));
    assert!(st.accepted * 100 >= programs * 15, "only {} of {programs} accepted", st.accepted);
    assert!(st.jit_runs * 10 >= st.accepted * 9 * 5, "the JIT ran too rarely: {st:?}");
}
