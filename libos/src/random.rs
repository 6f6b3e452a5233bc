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
    s.key = words(&first[..32]);
    s.counter = 0;
    cell.set(s);
}

/// `s`'s key mixed with fresh entropy, for environment `me` (the first
/// block made with it, in `fill`, hashes the mix into the next key).
fn rekey(s: State, me: u32) -> State {
    let mut key = s.key;
    let fresh = [tsc(), hardware().unwrap_or(0), hardware().unwrap_or(0), u64::from(me) << 32 | 1];
    for (i, w) in fresh.iter().enumerate() {
        key[2 * i] ^= *w as u32;
        key[2 * i + 1] ^= (*w >> 32) as u32;
    }
    State { key, keyed_for: me, counter: 0 }
}

fn next(s: &mut State) -> [u8; 64] {
    let nonce = [s.keyed_for, 0x6c78_7274, 0];
    let b = block(&s.key, s.counter, nonce);
    s.counter += 1;
    b
}

fn words(b: &[u8]) -> [u32; 8] {
    core::array::from_fn(|i| u32::from_le_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]]))
}

fn tsc() -> u64 {
    // SAFETY: rdtsc reads a counter; user mode may run it on Veneer.
    unsafe { core::arch::x86_64::_rdtsc() }
}

/// A word from the CPU's generator, if it has one and it delivers.
fn hardware() -> Option<u64> {
    let ecx = core::arch::x86_64::__cpuid(1).ecx;
    if ecx & (1 << 30) == 0 {
        return None;
    }
    for _ in 0..10 {
        let mut v = 0u64;
        // SAFETY: rdrand exists (CPUID.1:ECX.RDRAND); it writes `v` only.
        if unsafe { core::arch::x86_64::_rdrand64_step(&mut v) } == 1 {
            return Some(v);
        }
    }
    None
}

/// One ChaCha20 block (RFC 8439 §2.3) with a 64-bit block counter.
pub(crate) fn block(key: &[u32; 8], counter: u64, nonce: [u32; 3]) -> [u8; 64] {
    let mut init = [0u32; 16];
    init[..4].copy_from_slice(&[0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574]);
    init[4..12].copy_from_slice(key);
    init[12] = counter as u32;
    init[13] = (counter >> 32) as u32 ^ nonce[0];
    init[14] = nonce[1];
    init[15] = nonce[2];
    let mut x = init;
    for _ in 0..10 {
        for [a, b, c, d] in [[0, 4, 8, 12], [1, 5, 9, 13], [2, 6, 10, 14], [3, 7, 11, 15]] {
            quarter(&mut x, a, b, c, d);
        }
        for [a, b, c, d] in [[0, 5, 10, 15], [1, 6, 11, 12], [2, 7, 8, 13], [3, 4, 9, 14]] {
            quarter(&mut x, a, b, c, d);
        }
    }
    let mut out = [0u8; 64];
    for i in 0..16 {
        out[4 * i..4 * i + 4].copy_from_slice(&x[i].wrapping_add(init[i]).to_le_bytes());
    }
    out
}

fn quarter(x: &mut [u32; 16], a: usize, b: usize, c: usize, d: usize) {
    x[a] = x[a].wrapping_add(x[b]);
    x[d] = (x[d] ^ x[a]).rotate_left(16);
    x[c] = x[c].wrapping_add(x[d]);
    x[b] = (x[b] ^ x[c]).rotate_left(12);
    x[a] = x[a].wrapping_add(x[b]);
    x[d] = (x[d] ^ x[a]).rotate_left(8);
    x[c] = x[c].wrapping_add(x[d]);
    x[b] = (x[b] ^ x[c]).rotate_left(7);
}
