//! Boot test: 100,000 system calls with random numbers and arguments (half
//! fully random, half plausible: real frame numbers, live environment ids,
//! addresses in a scratch window) leave the kernel alive and its exposed
//! tables consistent. The seed is printed; `seed=N` on the command line
//! replays a run, `calls=N` changes the number of calls (`cargo xtask
//! stress` runs millions).
#![no_std]
#![no_main]

use abi::syscall as sc;
use abi::tables::{env_state, frame_state, ENV_SLOTS, SLICES};
use user::rng::Rng;
use user::{kinfo, println, spawn, sys};

const CALLS: u64 = 100_000;
/// Plausible addresses stay in this window, away from the program itself.
const SCRATCH: u64 = 0x5000_0000_0000;

/// The number given as `name=N` on the command line, if any.
fn arg(name: &str) -> Option<u64> {
    kinfo::cmdline().split_whitespace().find_map(|w| w.strip_prefix(name)?.strip_prefix('=')?.parse().ok())
}

fn plausible(rng: &mut Rng, frames: u64, me: u64) -> u64 {
    match rng.below(8) {
        0 => 0,
        1 => rng.below(frames + 16),
        2 => SCRATCH + rng.below(64) * 4096 + if rng.below(8) == 0 { rng.below(4096) } else { 0 },
        3 => {
            let e = kinfo::env(rng.below(ENV_SLOTS as u64) as usize);
            if e.id != 0 {
                e.id as u64
            } else {
                me
            }
        }
        4 => rng.below(4),
        5 => u64::MAX,
        6 => rng.below(1 << 20),
        _ => sc::FRAME_ANY,
    }
}

fn main(_: u64) -> i32 {
    let seed = arg("seed").unwrap_or(0x5eed_1234);
    let calls = arg("calls").unwrap_or(CALLS);
    println!("fuzz: seed {seed} ({calls} calls)");
    let mut rng = Rng::new(seed);
    let frames = kinfo::kernel().frames;
    let me = sys::self_id();
    let before = kinfo::free_plus_own();
    let (mut ok, mut err) = (0u64, 0u64);
    while ok + err < calls {
        let n = if rng.below(20) == 0 { rng.next_u64() } else { sc::BASE + rng.below(sc::END - sc::BASE) };
        // These would end this very program: exiting, powering off.
        if n == sc::EXIT || n == sc::SHUTDOWN {
            continue;
        }
        let mut a = [0u64; 6];
        for x in a.iter_mut() {
            *x = if rng.below(2) == 0 { rng.next_u64() } else { plausible(&mut rng, frames, me) };
        }
        if n == sc::DEBUG_WRITE {
            a[1] %= 64; // keep the console readable when the pointer is good
        }
        // Asking for slice upcalls or installing a random exception handler
        // for itself would end this program legitimately (its handler is
        // garbage), like exiting.
        let on_self = a[0] == 0 || a[0] == me;
        if on_self && (n == sc::SLICE_UPCALLS || n == sc::SET_EXCEPTION_HANDLER) {
            continue;
        }
        // Giving away its own last time slice would stop this program too.
        if n == sc::SLICE_FREE
            && (a[0] as usize) < SLICES
            && kinfo::slices().owner[a[0] as usize] as u64 == me
        {
            continue;
        }
        if sys::call(n, a) >= 0 {
            ok += 1;
        } else {
            err += 1;
        }
    }
    println!("fuzz: {ok} calls succeeded, {err} failed with an error");

    // Clean up: destroy every child, unmap the scratch window, free frames.
    for s in 0..ENV_SLOTS {
        let e = kinfo::env(s);
        if e.id != 0 && e.parent as u64 == me {
            sys::env_destroy(e.id as u64).unwrap();
        }
    }
    for p in 0..64 {
        let _ = sys::unmap(0, SCRATCH + p * 4096);
    }
    for f in 0..frames {
        let fi = kinfo::frame(f);
        if fi.owner as u64 == me && fi.state == frame_state::USER && fi.refs == 0 {
            let _ = sys::frame_free(f);
        }
    }
    // Consistency of the exposed tables: the free count matches the frame
    // table, and every owned frame belongs to a live environment.
    let mut free = 0;
    let mut bad = 0;
    for f in 0..frames {
        let fi = kinfo::frame(f);
        match fi.state {
            frame_state::FREE => free += 1,
            frame_state::USER | frame_state::PAGE_TABLE
                if fi.owner != 0
                    && kinfo::env_by_id(fi.owner as u64).is_none_or(|e| e.state == env_state::FREE) =>
            {
                bad += 1;
            }
            _ => {}
        }
    }
    let (after, kernel_free) = (kinfo::free_plus_own(), kinfo::free_frames());
    println!(
        "fuzz: frame table free {free}, kernel says {kernel_free}; {bad} frames owned by dead environments; free+own before {before}, after {after}"
    );
    // The kernel still starts and runs programs.
    let child = spawn::spawn("faulter", 0).unwrap();
    let code = spawn::wait(child).unwrap();
    println!("fuzz: a program started afterwards exited with {code}");
    if free == kernel_free && bad == 0 && before == after && code == 0 {
        println!("fuzz: kernel alive and consistent");
        0
    } else {
        1
    }
}

user::entry!(main);
