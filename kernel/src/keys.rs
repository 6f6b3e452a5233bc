//! Words nobody can predict, for frame-range keys (`ranges.rs`, issue 25).
//! A key is the secret that opens a range a message holds, and a process
//! sees the keys of its own ranges, so no key may tell anything about
//! another: they come from the CPU's generator (`rdrand`, tried again
//! while it reports itself drained) or, on a CPU without one or one that
//! keeps failing, from a ChaCha20 stream keyed at boot, its key replaced
//! by each block's first half (fast key erasure: a word handed out says
//! nothing of the next) and the time stamp counter in each block's nonce.
//! (The generator before, splitmix64 stirred with the counter, was
//! invertible: `test_pipepass` predicted another user's key with it.)

/// The kernel's generator.
pub struct Keys {
    /// The CPU's generator, if it has one.
    hardware: Option<entropy::Rdrand>,
    key: [u32; 8],
    counter: u64,
}

impl Keys {
    /// A generator using `hardware` if any, with a stream keyed from
    /// `seed` (at boot: `rdrand`'s words if any, the counter).
    pub fn new(hardware: Option<entropy::Rdrand>, seed: [u64; 4]) -> Keys {
        let mut key = [0u32; 8];
        for (i, w) in seed.iter().enumerate() {
            key[2 * i] = *w as u32;
            key[2 * i + 1] = (*w >> 32) as u32;
        }
        Keys { hardware, key, counter: 0 }
    }

    /// Mixes `w` into the stream's key.
    pub fn stir(&mut self, w: u64) {
        self.key[0] ^= w as u32;
        self.key[1] ^= (w >> 32) as u32;
    }

    /// The next word (`tsc` goes into the stream's nonce).
    pub fn next(&mut self, tsc: u64) -> u64 {
        match self.hardware.and_then(entropy::Rdrand::word) {
            Some(w) => w,
            None => self.stream(tsc),
        }
    }

    fn stream(&mut self, tsc: u64) -> u64 {
        let b = entropy::block(&self.key, self.counter, [0, tsc as u32, (tsc >> 32) as u32]);
        self.counter += 1;
        self.key = entropy::words(&b[..32]);
        u64::from_le_bytes(b[32..40].try_into().expect("8 bytes"))
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn the_stream_never_repeats_and_seeds_differ() {
        let mut a = Keys::new(None, [1, 2, 3, 4]);
        let words: BTreeSet<u64> = (0..10_000).map(|_| a.next(7)).collect();
        assert_eq!(words.len(), 10_000);
        let mut b = Keys::new(None, [1, 2, 3, 5]);
        let mut c = Keys::new(None, [1, 2, 3, 4]);
        let (x, y) = (b.next(7), c.next(7));
        assert_ne!(x, y, "another seed gave the same word");
        assert_eq!(y, Keys::new(None, [1, 2, 3, 4]).next(7), "a stream is a function of its seed");
    }
}
