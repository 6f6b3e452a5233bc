//! The random-byte generator (`src/random.rs`) on the host: ChaCha20's
//! block function against RFC 8439's test vector, successive fills that
//! never repeat, and a forked child (same state, another environment)
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
fn rfc8439_block_vector() {
    // §2.3.2: key 00 01 .. 1f, block counter 1, nonce 00:00:00:09
    // 00:00:00:4a 00:00:00:00 (the counter's high word and the nonce's
    // first word share a slot here: 0x09000000 is passed in the counter).
    let key: [u32; 8] = core::array::from_fn(|i| {
        let b = 4 * i as u8;
        u32::from_le_bytes([b, b + 1, b + 2, b + 3])
    });
    let out = random::block(&key, 1 | (0x0900_0000u64 << 32), [0, 0x4a00_0000, 0]);
    assert_eq!(
        &out[..16],
        &[0x10, 0xf1, 0xe7, 0xe4, 0xd1, 0x3b, 0x59, 0x15, 0x50, 0x0f, 0xdd, 0x1f, 0xa3, 0x20, 0x71, 0xc4]
    );
    assert_eq!(
        &out[48..],
        &[0xb5, 0x12, 0x9c, 0xd1, 0xde, 0x16, 0x4e, 0xb9, 0xcb, 0xd0, 0x83, 0xe8, 0xa2, 0x50, 0x3c, 0x4e]
    );
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
