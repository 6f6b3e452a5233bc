//! Runs the corrupt-image campaign (used by `cargo xtask corrupt`).
use std::sync::atomic::{AtomicU64, Ordering};

static CURRENT: AtomicU64 = AtomicU64::new(u64::MAX);

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let get = |k: &str| {
        args.iter().position(|a| a == k).and_then(|i| args.get(i + 1)).and_then(|v| v.parse::<u64>().ok())
    };
    let n = get("--mutations").unwrap_or(100_000);
    let seed = get("--seed").unwrap_or(1);
    std::panic::set_hook(Box::new(move |info| {
        eprintln!("corrupt: PANIC on mutation {} of seed {seed}: {info}", CURRENT.load(Ordering::SeqCst));
    }));
    let images: Vec<Vec<u8>> = cffs::sim::workload::BASES
        .iter()
        .map(|&b| cffs::sim::workload::base_image(b).expect("base image"))
        .collect();
    // A watchdog: no single mount may take more than 10 s.
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    std::thread::spawn(move || {
        let mut last = u64::MAX;
        loop {
            std::thread::sleep(std::time::Duration::from_secs(10));
            if rx.try_recv().is_ok() {
                return;
            }
            let now = CURRENT.load(Ordering::SeqCst);
            if now == last {
                eprintln!("corrupt: HANG on mutation {now} of seed {seed}");
                std::process::exit(1);
            }
            last = now;
        }
    });
    let t = std::time::Instant::now();
    let st = cffs::sim::corrupt::campaign(&images, n, seed, |s, k| {
        CURRENT.store(k, Ordering::SeqCst);
        if k % 20_000 == 0 && k > 0 {
            eprintln!(
                "  {k} images: {} clean, {} found by fsck, {} refused ({:.0?})",
                s.clean,
                s.found,
                s.refused.values().sum::<u64>(),
                t.elapsed()
            );
        }
    });
    let _ = tx.send(());
    let refused: u64 = st.refused.values().sum();
    println!(
        "corrupt campaign: seed {seed}: {} damaged images: {} refused at mount, {} mounted and named by fsck, {} mounted clean; no panic, no hang ({:.1?})",
        st.images,
        refused,
        st.found,
        st.clean,
        t.elapsed()
    );
    for (why, count) in &st.refused {
        println!("  refused: {why}: {count}");
    }
}
