//! Bytes for programs that want unpredictable ones (`AT_RANDOM` at exec,
//! `getrandom`, `/dev/urandom`): ChaCha20 (RFC 8439's block function)
//! keyed per process, with the key replaced after every use ("fast key
//! erasure": what was handed out cannot be recomputed from a later
//! state).
//!
//! Every process keys its own generator: the key is a process's only
//! while `keyed_for` names its environment. A forked child starts with a
//! copy of its parent's state, sees another environment's name there, and
//! rekeys before its first byte from the inherited key, its own
//! environment id, the time stamp counter and, where the CPU has it,
//! `rdrand`; so no two processes, and no two children of one parent, ever
//! share a stream (two children that read the same bytes was issue 29's
//! security bug: fork copied a xorshift state). The first process keys
//! from the same sources.

/// The generator's state, one per process.
#[derive(Clone, Copy)]
pub struct State {
    key: [u32; 8],
    /// The environment the key belongs to (0: never keyed).
    keyed_for: u32,
    /// Blocks made with this key.
    counter: u64,
}

impl State {
    pub const ZERO: State = State { key: [0; 8], keyed_for: 0, counter: 0 };
}

/// This process's generator (a fork copies it, and the child rekeys; the
/// host tests copy it to model a fork).
pub(crate) static STATE: crate::word::Word<State> = crate::word::Word::new(State::ZERO);

/// Fills `b` with unpredictable bytes.
pub fn fill(b: &mut [u8]) {
    let cell = &STATE;
    let mut s = cell.get();
    let me = crate::env::id();
    if s.keyed_for != me {
        s = rekey(s, me);
    }
    // Fast key erasure in one block, as Linux's crng: the first block's
    // first half is the next key, nobody sees it; its second half is the
    // first 32 bytes asked for, the rest come from the retiring key's
    // following blocks. (An exec's 16 bytes of `AT_RANDOM` cost one block.)
    let first = next(&mut s);
    let (head, rest) = b.split_at_mut(b.len().min(32));
    head.copy_from_slice(&first[32..32 + head.len()]);
    for chunk in rest.chunks_mut(64) {
        let block = next(&mut s);
        chunk.copy_from_slice(&block[..chunk.len()]);
    }
    s.key = entropy::words(&first[..32]);
    s.counter = 0;
    cell.set(s);
}

/// `s`'s key mixed with fresh entropy, for environment `me` (the first
/// block made with it, in `fill`, hashes the mix into the next key).
fn rekey(s: State, me: u32) -> State {
    let mut key = s.key;
    let fresh =
        [tsc(), entropy::rdrand().unwrap_or(0), entropy::rdrand().unwrap_or(0), u64::from(me) << 32 | 1];
    for (i, w) in fresh.iter().enumerate() {
        key[2 * i] ^= *w as u32;
        key[2 * i + 1] ^= (*w >> 32) as u32;
    }
    State { key, keyed_for: me, counter: 0 }
}

fn next(s: &mut State) -> [u8; 64] {
    let nonce = [s.keyed_for, 0x6c78_7274, 0];
    let b = entropy::block(&s.key, s.counter, nonce);
    s.counter += 1;
    b
}

fn tsc() -> u64 {
    // SAFETY: rdtsc reads a counter; user mode may run it on Veneer.
    unsafe { core::arch::x86_64::_rdtsc() }
}
