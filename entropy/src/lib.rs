//! Unpredictable words, for the kernel (frame-range keys, `kernel/src/
//! keys.rs`) and the library OS (`AT_RANDOM`, `getrandom`, `libos/src/
//! random.rs`): the CPU's generator where it has one, and ChaCha20's
//! block function (RFC 8439 §2.3) for streams keyed from it or from
//! whatever else there is.
#![no_std]

/// Tries of `rdrand` before giving up: it clears the carry flag when its
/// source is drained for the moment, and Intel's guidance is ten.
const TRIES: usize = 10;

/// The CPU's generator, `rdrand`: had only where CPUID.1:ECX bit 30 says
/// it exists (checked once, as CPUID is slow under a hypervisor).
#[derive(Clone, Copy)]
pub struct Rdrand(());

impl Rdrand {
    pub fn detect() -> Option<Rdrand> {
        (core::arch::x86_64::__cpuid(1).ecx & (1 << 30) != 0).then_some(Rdrand(()))
    }

    /// A word, if the generator delivers within `TRIES` (each failure,
    /// carry clear, is tried again).
    pub fn word(self) -> Option<u64> {
        (0..TRIES).find_map(|_| {
            let mut v = 0u64;
            // SAFETY: rdrand exists (a `Rdrand` is only had from `detect`);
            // it writes `v` only.
            (unsafe { core::arch::x86_64::_rdrand64_step(&mut v) } == 1).then_some(v)
        })
    }
}

/// A word from the CPU's generator, if it has one and it delivers.
pub fn rdrand() -> Option<u64> {
    Rdrand::detect()?.word()
}

/// One ChaCha20 block (RFC 8439 §2.3) with a 64-bit block counter.
pub fn block(key: &[u32; 8], counter: u64, nonce: [u32; 3]) -> [u8; 64] {
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

/// The little-endian words of `b` (32 bytes: a key).
pub fn words(b: &[u8]) -> [u32; 8] {
    core::array::from_fn(|i| u32::from_le_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]]))
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
