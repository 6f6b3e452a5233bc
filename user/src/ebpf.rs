//! Hand-encoding a few eBPF instructions, for programs that build small
//! wakeup predicates without an allocator (the library OS uses the `bpf`
//! crate's builder instead).

/// One instruction: opcode, destination and source registers, offset and
/// immediate, in the standard 8-byte encoding.
pub const fn insn(op: u8, dst: u8, src: u8, off: i16, imm: i32) -> u64 {
    op as u64
        | ((dst as u64 & 0xf) | (src as u64 & 0xf) << 4) << 8
        | (off as u16 as u64) << 16
        | (imm as u32 as u64) << 32
}

/// `dst = address of region `index`` (two slots).
pub const fn ld_region(dst: u8, index: i32) -> [u64; 2] {
    [insn(0x18, dst, 2, 0, index), 0]
}
/// `dst = *(u64 *)(src + off)`.
pub const fn ldx_dw(dst: u8, src: u8, off: i16) -> u64 {
    insn(0x79, dst, src, off, 0)
}
/// `dst = imm`.
pub const fn mov_imm(dst: u8, imm: i32) -> u64 {
    insn(0xb7, dst, 0, 0, imm)
}
/// `if dst == imm goto +off`.
pub const fn jeq_imm(dst: u8, imm: i32, off: i16) -> u64 {
    insn(0x15, dst, 0, off, imm)
}
/// `goto +off` (negative: a loop, which the verifier refuses).
pub const fn ja(off: i16) -> u64 {
    insn(0x05, 0, 0, off, 0)
}
pub const EXIT: u64 = 0x95;

/// "The word at the start of region 0 is not zero."
pub const WORD_NONZERO: [u64; 7] = {
    let r = ld_region(2, 0);
    [r[0], r[1], ldx_dw(3, 2, 0), mov_imm(0, 0), jeq_imm(3, 0, 1), mov_imm(0, 1), EXIT]
};
