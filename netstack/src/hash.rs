//! The connection tables' hash: keyed by the stack's seed and kept whole
//! inside each table. hashbrown's default hasher reads a seed from a
//! static of the running program, so a table built by one process hashed
//! differently in another (the Linux personality's stack is shared by
//! every process through memory they all map): a connection inserted by
//! one was not found by the other. The key keeps peers from choosing
//! ports that chain in one bucket.

use core::hash::{BuildHasher, Hasher};

#[derive(Clone, Copy, Debug)]
pub struct Keyed(pub u64);

impl BuildHasher for Keyed {
    type Hasher = KeyedHasher;
    fn build_hasher(&self) -> KeyedHasher {
        KeyedHasher(self.0)
    }
}

pub struct KeyedHasher(u64);

const M: u64 = 0x9E37_79B9_7F4A_7C15;

impl Hasher for KeyedHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut w = [0u8; 8];
            w[..chunk.len()].copy_from_slice(chunk);
            self.0 = (self.0 ^ u64::from_le_bytes(w)).wrapping_mul(M).rotate_left(29);
        }
    }

    fn write_u16(&mut self, v: u16) {
        self.write_u64(v as u64)
    }

    fn write_u32(&mut self, v: u32) {
        self.write_u64(v as u64)
    }

    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0 ^ v).wrapping_mul(M).rotate_left(29);
    }

    fn write_usize(&mut self, v: usize) {
        self.write_u64(v as u64)
    }

    fn finish(&self) -> u64 {
        let h = self.0 ^ (self.0 >> 32);
        h.wrapping_mul(M) ^ (h >> 29)
    }
}
