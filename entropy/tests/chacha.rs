//! ChaCha20's block function against RFC 8439's test vector.

#[test]
fn rfc8439_block_vector() {
    // §2.3.2: key 00 01 .. 1f, block counter 1, nonce 00:00:00:09
    // 00:00:00:4a 00:00:00:00 (the counter's high word and the nonce's
    // first word share a slot here: 0x09000000 is passed in the counter).
    let key: [u32; 8] = core::array::from_fn(|i| {
        let b = 4 * i as u8;
        u32::from_le_bytes([b, b + 1, b + 2, b + 3])
    });
    let out = entropy::block(&key, 1 | (0x0900_0000u64 << 32), [0, 0x4a00_0000, 0]);
    assert_eq!(
        &out[..16],
        &[0x10, 0xf1, 0xe7, 0xe4, 0xd1, 0x3b, 0x59, 0x15, 0x50, 0x0f, 0xdd, 0x1f, 0xa3, 0x20, 0x71, 0xc4]
    );
    assert_eq!(
        &out[48..],
        &[0xb5, 0x12, 0x9c, 0xd1, 0xde, 0x16, 0x4e, 0xb9, 0xcb, 0xd0, 0x83, 0xe8, 0xa2, 0x50, 0x3c, 0x4e]
    );
}
