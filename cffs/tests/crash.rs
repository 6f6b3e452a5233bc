//! The crash simulator, short version (`cargo xtask crash` runs the long
//! campaign): every one-operation workload on a fresh image, with and
//! without embedding, crashed at every state; and the seeded ordering bug
//! it must catch.

use cffs::sim::disk::{crashes, Event, Rng};
use cffs::sim::workload::Base;
use cffs::sim::{campaign, Config};

fn config(bases: &[Base], seeded_bug: bool) -> Config {
    Config {
        bases: bases.to_vec(),
        depth: 1,
        min_states: 0,
        samples: 16,
        seed: 7,
        seeded_bug,
        stop_early: false,
    }
}

#[test]
fn every_crash_state_of_every_single_operation_recovers() {
    let st = campaign(&config(&[Base::Fresh, Base::NoEmbed], false), |_| {});
    assert_eq!(st.violations, 0, "{:#?}", st.examples);
    assert_eq!(st.workloads, 30);
    assert!(st.states > 250, "only {} states", st.states);
    assert!(st.recovery_states > 50, "only {} recovery states", st.recovery_states);
}

#[test]
fn a_rename_that_writes_the_old_block_first_is_caught() {
    let st = campaign(&config(&[Base::Fresh], true), |_| {});
    assert!(st.violations >= 2, "seeded bug not caught: {st:?}");
    assert!(
        st.examples.iter().all(|e| e.contains("rename /a/f1 ->") && e.contains("half done")),
        "{:#?}",
        st.examples
    );
}

#[test]
fn crash_states_are_every_subset_of_each_epoch() {
    let w = |b| Event::Write(b, Box::new([0; 4096]));
    let log = [w(1), w(2), Event::Flush, w(3), w(4), w(5), Event::Flush];
    let c = crashes(&log, 0, &mut Rng(1));
    // 4 subsets of the first epoch, 8 of the second, 1 (empty) of the third.
    assert_eq!(c.len(), 13);
    assert_eq!(c[4].from, 3);
    assert!(c[4..12].iter().any(|x| x.kept == [3, 5]));
    // A long epoch: every prefix and the samples.
    let long: Vec<Event> = (0..20).map(w).collect();
    assert_eq!(crashes(&long, 5, &mut Rng(1)).len(), 21 + 5);
}
