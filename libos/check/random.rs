//! The random-byte generator (`src/random.rs`) on the host: successive
//! fills that never repeat, and a forked child (same state, another environment)
//! whose bytes differ from its parent's and from its sibling's — issue
//! 29's bug was two fork children reading the same bytes.

#[path = "../src/random.rs"]
mod random;

#[path = "../src/word.rs"]
mod word;

/// The environment the generator takes itself to run in.
mod env {
    use std::sync::atomic::{AtomicU32, Ordering};

    pub static ID: AtomicU32 = AtomicU32::new(0x401);

    pub fn id() -> u32 {
        ID.load(Ordering::Relaxed)
    }
}

/// The generator's state is one static, as in a process: the tests take
/// turns.
static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn set_env(id: u32) {
    env::ID.store(id, std::sync::atomic::Ordering::Relaxed);
}

fn bytes(n: usize) -> Vec<u8> {
    let mut b = vec![0u8; n];
    random::fill(&mut b);
    b
}

#[test]
fn successive_fills_differ() {
    let _turn = TURN.lock().unwrap();
    let (a, b) = (bytes(100), bytes(100));
    assert_ne!(a, b);
    assert_ne!(a, vec![0; 100]);
}

#[test]
fn fork_children_get_their_own_streams() {
    let _turn = TURN.lock().unwrap();
    let state = &random::STATE;
    let _ = bytes(16);
    let parent = state.get();
    // Child 1: a copy of the parent's state in another environment.
    set_env(0x402);
    let one = bytes(64);
    // Child 2: the same copy, a third environment.
    state.set(parent);
    set_env(0x403);
    let two = bytes(64);
    // The parent goes on from its own state.
    state.set(parent);
    set_env(0x401);
    let own = bytes(64);
    assert_ne!(one, two);
    assert_ne!(one, own);
    assert_ne!(two, own);
}
