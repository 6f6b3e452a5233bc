//! The Internet checksum (RFC 1071) in its parts: the one's complement
//! sum of some bytes, which can be stored and added to others (Cheetah
//! keeps one per chunk of a file), and the fold that finishes it.

/// The 16-bit one's complement sum of `data` (big-endian words, an odd
/// last byte padded with zero), not yet complemented.
pub fn sum(data: &[u8]) -> u32 {
    let mut acc: u64 = 0;
    let mut words = data.chunks_exact(2);
    for w in &mut words {
        acc += u64::from(u16::from_be_bytes([w[0], w[1]]));
    }
    if let [b] = words.remainder() {
        acc += u64::from(*b) << 8;
    }
    fold(acc) as u32
}

/// Folds carries back into 16 bits.
pub fn fold(mut s: u64) -> u16 {
    while s >> 16 != 0 {
        s = (s & 0xffff) + (s >> 16);
    }
    s as u16
}

/// The Internet checksum of `b`: 0 over a header that holds its correct
/// checksum.
pub fn internet_checksum(b: &[u8]) -> u16 {
    !fold(u64::from(sum(b)))
}
