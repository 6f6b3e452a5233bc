//! Helper for the checkpoint test: prints `arg` lines, each with a running
//! hash of the ones before (state a restore must carry over), then exits.
#![no_std]
#![no_main]

fn main(lines: u64) -> i32 {
    let mut x: u64 = 0x5eed;
    for i in 0..lines {
        // Some work between lines, so that a slice ends mid-way now and then.
        for _ in 0..2000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        }
        user::println!("counter: line {i} hash {x:#018x}");
    }
    0
}

user::entry!(main);
