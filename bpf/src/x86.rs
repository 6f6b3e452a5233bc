//! A minimal x86-64 machine-code encoder: just the instructions the JIT
//! needs, always in one fixed form (register-direct or `[base + disp32]`
//! operands, rel32 jumps) so that instruction lengths are easy to reason
//! about.

use alloc::vec::Vec;

/// A general-purpose register number (0 = rax ... 15 = r15).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reg(pub u8);

pub const RAX: Reg = Reg(0);
pub const RCX: Reg = Reg(1);
pub const RDX: Reg = Reg(2);
pub const RBX: Reg = Reg(3);
pub const RSP: Reg = Reg(4);
pub const RBP: Reg = Reg(5);
pub const RSI: Reg = Reg(6);
pub const RDI: Reg = Reg(7);
pub const R8: Reg = Reg(8);
pub const R9: Reg = Reg(9);
pub const R10: Reg = Reg(10);
pub const R11: Reg = Reg(11);
pub const R12: Reg = Reg(12);
pub const R13: Reg = Reg(13);
pub const R14: Reg = Reg(14);
pub const R15: Reg = Reg(15);

// Two-operand ALU opcodes, `op r/m, reg` form.
pub const OP_ADD: u8 = 0x01;
pub const OP_OR: u8 = 0x09;
pub const OP_AND: u8 = 0x21;
pub const OP_SUB: u8 = 0x29;
pub const OP_XOR: u8 = 0x31;
pub const OP_CMP: u8 = 0x39;
pub const OP_TEST: u8 = 0x85;
pub const OP_MOV: u8 = 0x89;

// `/digit` extensions of the 0x81 (ALU imm32) group.
pub const EXT_ADD: u8 = 0;
pub const EXT_OR: u8 = 1;
pub const EXT_AND: u8 = 4;
pub const EXT_SUB: u8 = 5;
pub const EXT_XOR: u8 = 6;
pub const EXT_CMP: u8 = 7;

// `/digit` extensions of the shift group.
pub const SHIFT_SHL: u8 = 4;
pub const SHIFT_SHR: u8 = 5;
pub const SHIFT_SAR: u8 = 7;

// `/digit` extensions of the 0xF7 unary group.
pub const UNARY_NEG: u8 = 3;
pub const UNARY_DIV: u8 = 6;

// Condition codes (low nibble of Jcc / CMOVcc).
pub const CC_B: u8 = 0x2;
pub const CC_AE: u8 = 0x3;
pub const CC_E: u8 = 0x4;
pub const CC_NE: u8 = 0x5;
pub const CC_BE: u8 = 0x6;
pub const CC_A: u8 = 0x7;
pub const CC_L: u8 = 0xc;
pub const CC_GE: u8 = 0xd;
pub const CC_LE: u8 = 0xe;
pub const CC_G: u8 = 0xf;

#[derive(Default, Debug)]
pub struct Emitter {
    pub buf: Vec<u8>,
}

impl Emitter {
    pub fn pos(&self) -> usize {
        self.buf.len()
    }

    fn byte(&mut self, b: u8) {
        self.buf.push(b);
    }

    fn imm32(&mut self, v: i32) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    /// REX prefix when needed. `byte_regs` forces one so that registers
    /// 4-7 mean spl/bpl/sil/dil rather than ah/ch/dh/bh.
    fn rex(&mut self, w: bool, reg: Reg, rm: Reg, byte_regs: bool) {
        let r = (reg.0 >> 3) & 1;
        let b = (rm.0 >> 3) & 1;
        let needed = w || r != 0 || b != 0 || (byte_regs && (reg.0 >= 4 || rm.0 >= 4));
        if needed {
            self.byte(0x40 | (w as u8) << 3 | r << 2 | b);
        }
    }

    fn modrm_reg(&mut self, reg: Reg, rm: Reg) {
        self.byte(0xc0 | (reg.0 & 7) << 3 | (rm.0 & 7));
    }

    /// `[base + disp32]`; rsp/r12 as base need a SIB byte.
    fn modrm_mem(&mut self, reg: Reg, base: Reg, disp: i32) {
        self.byte(0x80 | (reg.0 & 7) << 3 | (base.0 & 7));
        if base.0 & 7 == 4 {
            self.byte(0x24);
        }
        self.imm32(disp);
    }

    /// `op dst, src` for the two-operand opcodes above (`test`/`cmp` too).
    pub fn alu_rr(&mut self, w: bool, op: u8, dst: Reg, src: Reg) {
        self.rex(w, src, dst, false);
        self.byte(op);
        self.modrm_reg(src, dst);
    }

    /// `op dst, imm32` (sign-extended in 64-bit form).
    pub fn alu_ri(&mut self, w: bool, ext: u8, dst: Reg, imm: i32) {
        self.rex(w, Reg(0), dst, false);
        self.byte(0x81);
        self.modrm_reg(Reg(ext), dst);
        self.imm32(imm);
    }

    /// `test dst, imm32`.
    pub fn test_ri(&mut self, w: bool, dst: Reg, imm: i32) {
        self.rex(w, Reg(0), dst, false);
        self.byte(0xf7);
        self.modrm_reg(Reg(0), dst);
        self.imm32(imm);
    }

    pub fn mov_rr(&mut self, w: bool, dst: Reg, src: Reg) {
        self.alu_rr(w, OP_MOV, dst, src);
    }

    /// `dst = imm` as a 64-bit value, in the shortest of three forms.
    pub fn mov_ri64(&mut self, dst: Reg, imm: u64) {
        if imm as i64 == imm as i32 as i64 {
            self.rex(true, Reg(0), dst, false);
            self.byte(0xc7);
            self.modrm_reg(Reg(0), dst);
            self.imm32(imm as i32);
        } else if imm <= u32::MAX as u64 {
            self.mov_ri32(dst, imm as u32);
        } else {
            self.rex(true, Reg(0), dst, false);
            self.byte(0xb8 | (dst.0 & 7));
            self.buf.extend_from_slice(&imm.to_le_bytes());
        }
    }

    /// `dst32 = imm` (zero-extends to 64 bits).
    pub fn mov_ri32(&mut self, dst: Reg, imm: u32) {
        self.rex(false, Reg(0), dst, false);
        self.byte(0xb8 | (dst.0 & 7));
        self.imm32(imm as i32);
    }

    /// `dst *= src` (low half of the product).
    pub fn imul_rr(&mut self, w: bool, dst: Reg, src: Reg) {
        self.rex(w, dst, src, false);
        self.buf.extend_from_slice(&[0x0f, 0xaf]);
        self.modrm_reg(dst, src);
    }

    /// `dst *= imm32` (low half of the product).
    pub fn imul_ri(&mut self, w: bool, dst: Reg, imm: i32) {
        self.rex(w, dst, dst, false);
        self.byte(0x69);
        self.modrm_reg(dst, dst);
        self.imm32(imm);
    }

    /// Shift `dst` by `cl`.
    pub fn shift_cl(&mut self, w: bool, ext: u8, dst: Reg) {
        self.rex(w, Reg(0), dst, false);
        self.byte(0xd3);
        self.modrm_reg(Reg(ext), dst);
    }

    /// Shift `dst` by an immediate.
    pub fn shift_ri(&mut self, w: bool, ext: u8, dst: Reg, amount: u8) {
        self.rex(w, Reg(0), dst, false);
        self.byte(0xc1);
        self.modrm_reg(Reg(ext), dst);
        self.byte(amount);
    }

    /// `neg dst` or `div dst` (rdx:rax / dst).
    pub fn unary(&mut self, w: bool, ext: u8, dst: Reg) {
        self.rex(w, Reg(0), dst, false);
        self.byte(0xf7);
        self.modrm_reg(Reg(ext), dst);
    }

    pub fn bswap(&mut self, w: bool, dst: Reg) {
        self.rex(w, Reg(0), dst, false);
        self.buf.extend_from_slice(&[0x0f, 0xc8 | (dst.0 & 7)]);
    }

    /// `rol dst16, 8`: swaps the two low bytes.
    pub fn rol16_8(&mut self, dst: Reg) {
        self.byte(0x66);
        self.shift_ri(false, 0, dst, 8);
    }

    /// `movzx dst32, src16`.
    pub fn movzx16(&mut self, dst: Reg, src: Reg) {
        self.rex(false, dst, src, false);
        self.buf.extend_from_slice(&[0x0f, 0xb7]);
        self.modrm_reg(dst, src);
    }

    /// Zero-extending load of `size` bytes from `[base + disp]`.
    pub fn load(&mut self, size: u32, dst: Reg, base: Reg, disp: i32) {
        match size {
            1 | 2 => {
                self.rex(false, dst, base, false);
                let op = if size == 1 { 0xb6 } else { 0xb7 };
                self.buf.extend_from_slice(&[0x0f, op]);
            }
            _ => {
                self.rex(size == 8, dst, base, false);
                self.byte(0x8b);
            }
        }
        self.modrm_mem(dst, base, disp);
    }

    /// Store of the low `size` bytes of `src` to `[base + disp]`.
    pub fn store(&mut self, size: u32, base: Reg, disp: i32, src: Reg) {
        if size == 2 {
            self.byte(0x66);
        }
        self.rex(size == 8, src, base, size == 1);
        self.byte(if size == 1 { 0x88 } else { 0x89 });
        self.modrm_mem(src, base, disp);
    }

    /// Store of an immediate (sign-extended for 8 bytes).
    pub fn store_imm(&mut self, size: u32, base: Reg, disp: i32, imm: i32) {
        if size == 2 {
            self.byte(0x66);
        }
        self.rex(size == 8, Reg(0), base, false);
        self.byte(if size == 1 { 0xc6 } else { 0xc7 });
        self.modrm_mem(Reg(0), base, disp);
        match size {
            1 => self.byte(imm as u8),
            2 => self.buf.extend_from_slice(&(imm as u16).to_le_bytes()),
            _ => self.imm32(imm),
        }
    }

    /// `dst = base + disp`.
    pub fn lea(&mut self, dst: Reg, base: Reg, disp: i32) {
        self.rex(true, dst, base, false);
        self.byte(0x8d);
        self.modrm_mem(dst, base, disp);
    }

    /// `if cc { dst = src }` (64-bit).
    pub fn cmov(&mut self, cc: u8, dst: Reg, src: Reg) {
        self.rex(true, dst, src, false);
        self.buf.extend_from_slice(&[0x0f, 0x40 | cc]);
        self.modrm_reg(dst, src);
    }

    /// Conditional jump with a rel32 to patch; returns the patch position.
    pub fn jcc(&mut self, cc: u8) -> usize {
        self.buf.extend_from_slice(&[0x0f, 0x80 | cc]);
        let at = self.pos();
        self.imm32(0);
        at
    }

    /// Unconditional jump with a rel32 to patch; returns the patch position.
    pub fn jmp(&mut self) -> usize {
        self.byte(0xe9);
        let at = self.pos();
        self.imm32(0);
        at
    }

    /// Points the rel32 at `at` to code position `target`.
    pub fn patch(&mut self, at: usize, target: usize) {
        let rel = target as i64 - (at as i64 + 4);
        self.buf[at..at + 4].copy_from_slice(&(rel as i32).to_le_bytes());
    }

    pub fn push(&mut self, r: Reg) {
        self.rex(false, Reg(0), r, false);
        self.byte(0x50 | (r.0 & 7));
    }

    pub fn pop(&mut self, r: Reg) {
        self.rex(false, Reg(0), r, false);
        self.byte(0x58 | (r.0 & 7));
    }

    pub fn ret(&mut self) {
        self.byte(0xc3);
    }

    /// Traps (`ud2`).
    pub fn trap(&mut self) {
        self.buf.extend_from_slice(&[0x0f, 0x0b]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(f: impl FnOnce(&mut Emitter)) -> Vec<u8> {
        let mut e = Emitter::default();
        f(&mut e);
        e.buf
    }

    // Expected bytes from the Intel SDM encodings.
    #[test]
    fn known_encodings() {
        assert_eq!(enc(|e| e.mov_rr(true, RAX, RDI)), [0x48, 0x89, 0xf8]);
        assert_eq!(enc(|e| e.alu_rr(true, OP_ADD, R13, R9)), [0x4d, 0x01, 0xcd]);
        assert_eq!(enc(|e| e.alu_ri(false, EXT_CMP, RCX, 5)), [0x81, 0xf9, 5, 0, 0, 0]);
        assert_eq!(enc(|e| e.load(8, RAX, R12, 16)), [0x49, 0x8b, 0x84, 0x24, 16, 0, 0, 0]);
        assert_eq!(enc(|e| e.load(1, RSI, RBP, -1)), [0x0f, 0xb6, 0xb5, 0xff, 0xff, 0xff, 0xff]);
        assert_eq!(enc(|e| e.store(1, RBP, -8, RSI)), [0x40, 0x88, 0xb5, 0xf8, 0xff, 0xff, 0xff]);
        assert_eq!(enc(|e| e.store(2, R13, 0, RAX)), [0x66, 0x41, 0x89, 0x85, 0, 0, 0, 0]);
        assert_eq!(enc(|e| e.cmov(CC_A, R11, R10)), [0x4d, 0x0f, 0x47, 0xda]);
        assert_eq!(enc(|e| e.mov_ri64(RAX, u64::MAX)), [0x48, 0xc7, 0xc0, 0xff, 0xff, 0xff, 0xff]);
        assert_eq!(enc(|e| e.bswap(false, R8)), [0x41, 0x0f, 0xc8]);
        assert_eq!(enc(|e| e.push(R15)), [0x41, 0x57]);
        assert_eq!(enc(|e| e.imul_rr(true, RDX, R14)), [0x49, 0x0f, 0xaf, 0xd6]);
        assert_eq!(enc(|e| e.rol16_8(RBX)), [0x66, 0xc1, 0xc3, 0x08]);
    }
}
