//! eBPF instruction encoding: the 8-byte instruction format, opcode
//! constants, and the exact arithmetic semantics shared by the verifier
//! (constant folding), the interpreter and the JIT tests.

use alloc::vec::Vec;

/// Size in bytes of one instruction slot.
pub const INSN_SIZE: usize = 8;
/// Size of the per-invocation stack addressed through r10.
pub const STACK_SIZE: usize = 512;
/// Number of registers, r0..=r10.
pub const NUM_REGS: usize = 11;
/// The read-only frame pointer.
pub const FRAME_REG: u8 = 10;

// Instruction classes (low 3 bits of the opcode).
pub const CLASS_LD: u8 = 0x00;
pub const CLASS_LDX: u8 = 0x01;
pub const CLASS_ST: u8 = 0x02;
pub const CLASS_STX: u8 = 0x03;
pub const CLASS_ALU: u8 = 0x04;
pub const CLASS_JMP: u8 = 0x05;
pub const CLASS_JMP32: u8 = 0x06;
pub const CLASS_ALU64: u8 = 0x07;

// Memory access sizes (bits 3-4 of load/store opcodes).
pub const SIZE_W: u8 = 0x00;
pub const SIZE_H: u8 = 0x08;
pub const SIZE_B: u8 = 0x10;
pub const SIZE_DW: u8 = 0x18;

// Memory modes (bits 5-7 of load/store opcodes).
pub const MODE_IMM: u8 = 0x00;
pub const MODE_ABS: u8 = 0x20;
pub const MODE_IND: u8 = 0x40;
pub const MODE_MEM: u8 = 0x60;
pub const MODE_MEMSX: u8 = 0x80;
pub const MODE_ATOMIC: u8 = 0xc0;

// Operand source bit for ALU and jump classes.
pub const SRC_K: u8 = 0x00;
pub const SRC_X: u8 = 0x08;

// ALU operations (high 4 bits).
pub const ALU_ADD: u8 = 0x00;
pub const ALU_SUB: u8 = 0x10;
pub const ALU_MUL: u8 = 0x20;
pub const ALU_DIV: u8 = 0x30;
pub const ALU_OR: u8 = 0x40;
pub const ALU_AND: u8 = 0x50;
pub const ALU_LSH: u8 = 0x60;
pub const ALU_RSH: u8 = 0x70;
pub const ALU_NEG: u8 = 0x80;
pub const ALU_MOD: u8 = 0x90;
pub const ALU_XOR: u8 = 0xa0;
pub const ALU_MOV: u8 = 0xb0;
pub const ALU_ARSH: u8 = 0xc0;
pub const ALU_END: u8 = 0xd0;

// Jump operations (high 4 bits).
pub const JMP_JA: u8 = 0x00;
pub const JMP_JEQ: u8 = 0x10;
pub const JMP_JGT: u8 = 0x20;
pub const JMP_JGE: u8 = 0x30;
pub const JMP_JSET: u8 = 0x40;
pub const JMP_JNE: u8 = 0x50;
pub const JMP_JSGT: u8 = 0x60;
pub const JMP_JSGE: u8 = 0x70;
pub const JMP_CALL: u8 = 0x80;
pub const JMP_EXIT: u8 = 0x90;
pub const JMP_JLT: u8 = 0xa0;
pub const JMP_JLE: u8 = 0xb0;
pub const JMP_JSLT: u8 = 0xc0;
pub const JMP_JSLE: u8 = 0xd0;

/// Opcode of the first slot of the two-slot 64-bit immediate load.
pub const LD_IMM64: u8 = CLASS_LD | SIZE_DW | MODE_IMM;
/// `src_reg` of an ld_imm64 that yields a pointer to a region.
pub const PSEUDO_REGION: u8 = 2;
/// `src_reg` value Linux uses for map file descriptors (unsupported here).
pub const PSEUDO_MAP_FD: u8 = 1;
/// Helper number of `bpf_tail_call` in Linux; rejected by name.
pub const HELPER_TAIL_CALL: i32 = 12;

/// One decoded instruction slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Insn {
    pub code: u8,
    pub dst: u8,
    pub src: u8,
    pub off: i16,
    pub imm: i32,
}

impl Insn {
    pub const fn new(code: u8, dst: u8, src: u8, off: i16, imm: i32) -> Insn {
        Insn { code, dst, src, off, imm }
    }

    /// Decodes one slot (little-endian, registers packed as dst low nibble).
    pub fn from_bytes(b: [u8; 8]) -> Insn {
        Insn {
            code: b[0],
            dst: b[1] & 0x0f,
            src: b[1] >> 4,
            off: i16::from_le_bytes([b[2], b[3]]),
            imm: i32::from_le_bytes([b[4], b[5], b[6], b[7]]),
        }
    }

    pub fn to_bytes(self) -> [u8; 8] {
        let off = self.off.to_le_bytes();
        let imm = self.imm.to_le_bytes();
        [self.code, (self.dst & 0x0f) | (self.src << 4), off[0], off[1], imm[0], imm[1], imm[2], imm[3]]
    }

    pub fn class(self) -> u8 {
        self.code & 0x07
    }
    /// ALU or jump operation (high 4 bits).
    pub fn op(self) -> u8 {
        self.code & 0xf0
    }
    /// Operand source bit of ALU/jump opcodes.
    pub fn source(self) -> u8 {
        self.code & 0x08
    }
    /// Access size bits of load/store opcodes.
    pub fn size_bits(self) -> u8 {
        self.code & 0x18
    }
    pub fn mode(self) -> u8 {
        self.code & 0xe0
    }
}

/// Number of bytes moved by a load/store of the given size bits.
pub fn access_bytes(size_bits: u8) -> u32 {
    match size_bits {
        SIZE_B => 1,
        SIZE_H => 2,
        SIZE_W => 4,
        _ => 8,
    }
}

/// Size bits for an access width in bytes (1, 2, 4 or 8).
pub fn size_bits_for(bytes: u32) -> Option<u8> {
    match bytes {
        1 => Some(SIZE_B),
        2 => Some(SIZE_H),
        4 => Some(SIZE_W),
        8 => Some(SIZE_DW),
        _ => None,
    }
}

/// The byte string is not a whole number of instruction slots.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TruncatedProgram {
    pub len: usize,
}

/// Splits raw bytes into instruction slots.
pub fn decode(bytes: &[u8]) -> Result<Vec<Insn>, TruncatedProgram> {
    if !bytes.len().is_multiple_of(INSN_SIZE) {
        return Err(TruncatedProgram { len: bytes.len() });
    }
    Ok(bytes
        .chunks_exact(INSN_SIZE)
        .map(|c| {
            let mut b = [0u8; 8];
            b.copy_from_slice(c);
            Insn::from_bytes(b)
        })
        .collect())
}

/// Serialises instruction slots back to bytes.
pub fn encode(insns: &[Insn]) -> Vec<u8> {
    insns.iter().flat_map(|i| i.to_bytes()).collect()
}

/// 64-bit ALU semantics. Division and modulo by zero follow the eBPF
/// definition (quotient 0, remainder = dividend) even though the verifier
/// never lets them happen, so that the function is total.
pub fn alu64(op: u8, a: u64, b: u64) -> u64 {
    match op {
        ALU_ADD => a.wrapping_add(b),
        ALU_SUB => a.wrapping_sub(b),
        ALU_MUL => a.wrapping_mul(b),
        ALU_DIV => a.checked_div(b).unwrap_or(0),
        ALU_OR => a | b,
        ALU_AND => a & b,
        ALU_LSH => a << (b & 63),
        ALU_RSH => a >> (b & 63),
        ALU_NEG => a.wrapping_neg(),
        ALU_MOD => a.checked_rem(b).unwrap_or(a),
        ALU_XOR => a ^ b,
        ALU_MOV => b,
        ALU_ARSH => ((a as i64) >> (b & 63)) as u64,
        _ => 0,
    }
}

/// 32-bit ALU semantics: operate on the low halves, zero-extend the result.
pub fn alu32(op: u8, a: u64, b: u64) -> u64 {
    let (a, b) = (a as u32, b as u32);
    let r = match op {
        ALU_ADD => a.wrapping_add(b),
        ALU_SUB => a.wrapping_sub(b),
        ALU_MUL => a.wrapping_mul(b),
        ALU_DIV => a.checked_div(b).unwrap_or(0),
        ALU_OR => a | b,
        ALU_AND => a & b,
        ALU_LSH => a << (b & 31),
        ALU_RSH => a >> (b & 31),
        ALU_NEG => a.wrapping_neg(),
        ALU_MOD => a.checked_rem(b).unwrap_or(a),
        ALU_XOR => a ^ b,
        ALU_MOV => b,
        ALU_ARSH => ((a as i32) >> (b & 31)) as u32,
        _ => 0,
    };
    r as u64
}

/// Byte-order conversion. `to_be` selects big-endian; the host (and every
/// target we JIT for) is little-endian, so `to_le` only truncates.
pub fn endian(value: u64, width: i32, to_be: bool) -> u64 {
    match (width, to_be) {
        (16, false) => value as u16 as u64,
        (32, false) => value as u32 as u64,
        (64, false) => value,
        (16, true) => (value as u16).swap_bytes() as u64,
        (32, true) => (value as u32).swap_bytes() as u64,
        (64, true) => value.swap_bytes(),
        _ => value,
    }
}

/// Whether a conditional jump is taken. For JMP32 the operands are the low
/// 32 bits (signed ops compare them as i32).
pub fn jump_taken(op: u8, a: u64, b: u64, is32: bool) -> bool {
    let (a, b, sa, sb) = if is32 {
        (a as u32 as u64, b as u32 as u64, a as u32 as i32 as i64, b as u32 as i32 as i64)
    } else {
        (a, b, a as i64, b as i64)
    };
    match op {
        JMP_JA => true,
        JMP_JEQ => a == b,
        JMP_JNE => a != b,
        JMP_JGT => a > b,
        JMP_JGE => a >= b,
        JMP_JLT => a < b,
        JMP_JLE => a <= b,
        JMP_JSET => a & b != 0,
        JMP_JSGT => sa > sb,
        JMP_JSGE => sa >= sb,
        JMP_JSLT => sa < sb,
        JMP_JSLE => sa <= sb,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip_bytes() {
        let i = Insn::new(0xbf, 3, 10, -8, -12345);
        assert_eq!(Insn::from_bytes(i.to_bytes()), i);
        assert_eq!(decode(&encode(&[i, i])).unwrap(), [i, i]);
        assert_eq!(decode(&[0; 9]), Err(TruncatedProgram { len: 9 }));
    }

    #[test]
    fn alu_semantics() {
        assert_eq!(alu32(ALU_ADD, u64::MAX, 1), 0);
        assert_eq!(alu64(ALU_ARSH, (-16i64) as u64, 2), (-4i64) as u64);
        assert_eq!(alu32(ALU_ARSH, 0x8000_0000, 4), 0xf800_0000);
        assert_eq!(alu64(ALU_LSH, 1, 65), 2);
        assert_eq!(alu64(ALU_DIV, 7, 0), 0);
        assert_eq!(alu32(ALU_MOD, 0x1_0000_0007, 0), 7);
        assert_eq!(endian(0x1122_3344, 16, true), 0x4433);
        assert!(jump_taken(JMP_JSLT, u64::MAX, 0, false));
        assert!(jump_taken(JMP_JSLT, 0xffff_ffff, 0, true));
        assert!(!jump_taken(JMP_JSLT, 0xffff_ffff, 0, false));
    }
}
