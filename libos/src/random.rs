//! Bytes for programs that want unpredictable ones (`AT_RANDOM` at exec,
//! `getrandom`): xorshift seeded from the TSC and the pid; the hardware
//! generator is not assumed.

/// The generator's state (0: not seeded yet).
static SEED: crate::word::Word<u64> = crate::word::Word::new(0);

/// Fills `b` with unpredictable-enough bytes.
pub fn fill(b: &mut [u8]) {
    let first = crate::time::now_ns() ^ 0x9e37_79b9_7f4a_7c15 ^ (crate::env::id() as u64) << 32;
    let seed = &SEED;
    let mut s = match seed.get() {
        0 => first,
        s => s,
    };
    for c in b.chunks_mut(8) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        c.copy_from_slice(&s.to_le_bytes()[..c.len()]);
    }
    seed.set(s);
}
