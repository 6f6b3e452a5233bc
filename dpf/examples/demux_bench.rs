//! Prints the merged tree's work per frame with 1, 10, 100 and 1000
//! installed filters (`cargo run -p dpf --release --example demux_bench`).
//! With an argument `KIND N FRAMES` (KIND = ports | conns) it only
//! classifies, for counting instructions under
//! `valgrind --tool=callgrind --toggle-collect='*classify*'`.

use dpf::bench::{setup, work_per_frame, Kind};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [kind, n, frames] = &args[..] {
        let kind = if kind == "ports" { Kind::Ports } else { Kind::Connections };
        let (mut d, fs) = setup(kind, n.parse().unwrap());
        let frames: usize = frames.parse().unwrap();
        let mut claimed = 0;
        for i in 0..frames {
            claimed += d.classify(&fs[i % fs.len()]).as_slice().len();
        }
        println!("{claimed} of {frames} frames claimed");
        return;
    }
    println!("{:<12} {:>8} {:>14} {:>8}", "filters", "count", "ops/frame", "vs 1");
    for kind in [Kind::Ports, Kind::Connections] {
        let one = work_per_frame(kind, 1, 1000);
        for n in [1, 10, 100, 1000] {
            let w = work_per_frame(kind, n, (1000 / n).max(1));
            println!("{:<12} {:>8} {:>14.2} {:>7.2}x", format!("{kind:?}"), n, w, w / one);
        }
    }
}
