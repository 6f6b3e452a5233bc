//! DPF's promise: demultiplexing costs about the same with 1,000 filters
//! as with one (goal: within 1.2x), for listening ports and for
//! connections.

use dpf::bench::{work_per_frame, Kind};

#[test]
fn demultiplexing_work_is_flat_in_the_number_of_filters() {
    for kind in [Kind::Ports, Kind::Connections] {
        let one = work_per_frame(kind, 1, 1000);
        for n in [10, 100, 1000] {
            let w = work_per_frame(kind, n, 1000 / n);
            assert!(w <= 1.2 * one, "{kind:?}: {n} filters cost {w:.2} ops per frame, 1 costs {one:.2}");
        }
    }
}
