//! Seeded random programs and inputs, biased toward programs the verifier
//! accepts: shared by the host property, differential and short-fuzz tests
//! and by the kernel's JIT self-test (which runs the compiled code in the
//! kernel itself, see `docs/downloaded-code.md`).

use crate::insn::{
    access_bytes, ALU_ADD, ALU_AND, ALU_ARSH, ALU_DIV, ALU_LSH, ALU_MOD, ALU_MOV, ALU_MUL, ALU_NEG, ALU_OR,
    ALU_RSH, ALU_SUB, ALU_XOR, CLASS_LDX, CLASS_ST, CLASS_STX, JMP_JEQ, JMP_JGE, JMP_JGT, JMP_JLE, JMP_JLT,
    JMP_JNE, JMP_JSET, JMP_JSGE, JMP_JSGT, JMP_JSLE, JMP_JSLT, MODE_MEM, SIZE_B, SIZE_DW, SIZE_H, SIZE_W,
};
use crate::{Asm, Insn, Label, PacketFields, ProgramSpec};
use alloc::vec::Vec;

/// xorshift64* — deterministic, dependency-free.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1) as u64) as i64
    }
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }
    /// A 32-bit immediate biased toward small and boundary values.
    pub fn imm(&mut self) -> i32 {
        match self.below(6) {
            0 => self.range(-4, 4) as i32,
            1 => self.range(0, 64) as i32,
            2 => self.pick(&[i32::MIN, i32::MAX, -1, 0x7fff, 0xffff, 0x8000, 255, 256]),
            _ => self.next_u64() as i32,
        }
    }
}

pub const SCALARS: [u8; 4] = [0, 2, 3, 4];
const CTX_REG: u8 = 6;
const REGION_REG: u8 = 7;
const TEMP_PTR: u8 = 8;
const PKT: u8 = 9;
const PKT_END: u8 = 5;

pub const ALU_OPS: [u8; 13] = [
    ALU_ADD, ALU_SUB, ALU_MUL, ALU_DIV, ALU_OR, ALU_AND, ALU_LSH, ALU_RSH, ALU_NEG, ALU_MOD, ALU_XOR,
    ALU_MOV, ALU_ARSH,
];
pub const JMP_OPS: [u8; 11] =
    [JMP_JEQ, JMP_JGT, JMP_JGE, JMP_JSET, JMP_JNE, JMP_JSGT, JMP_JSGE, JMP_JLT, JMP_JLE, JMP_JSLT, JMP_JSLE];

pub fn gen_spec(rng: &mut Rng) -> ProgramSpec {
    let ctx_size = rng.pick(&[16u32, 32, 64]);
    let nregions = rng.range(1, 3) as usize;
    let regions: Vec<u32> = (0..nregions).map(|_| rng.pick(&[8u32, 16, 100, 4096])).collect();
    let mut spec = ProgramSpec::new(ctx_size).with_regions(&regions);
    if rng.chance(50) {
        spec =
            spec.with_packet(PacketFields { data_off: ctx_size - 8, data_end_off: ctx_size - 4, width: 4 });
    }
    spec
}

/// A random byte-order conversion of `dst` (16, 32 or 64 bits, to big or
/// little endian).
pub(crate) fn byte_swap(rng: &mut Rng, a: &mut Asm, dst: u8) {
    let w = rng.pick(&[16, 32, 64]);
    if rng.chance(50) {
        a.be(dst, w);
    } else {
        a.le(dst, w);
    }
}

struct Gen<'a> {
    rng: &'a mut Rng,
    spec: &'a ProgramSpec,
    a: Asm,
    /// Labels waiting to be bound, with the number of snippets to skip.
    pending: Vec<(Label, u32)>,
}

impl Gen<'_> {
    fn scalar(&mut self) -> u8 {
        self.rng.pick(&SCALARS)
    }

    /// A snippet-level label that will be bound a few snippets later.
    fn forward(&mut self) -> Label {
        let l = self.a.label();
        let skip = self.rng.range(0, 3) as u32;
        self.pending.push((l, skip));
        l
    }

    fn alu(&mut self) {
        let op = self.rng.pick(&ALU_OPS);
        let dst = self.scalar();
        let is64 = self.rng.chance(60);
        if op == ALU_NEG {
            self.a.neg(dst, is64);
            return;
        }
        let by_reg = self.rng.chance(40);
        let width = if is64 { 64 } else { 32 };
        if by_reg {
            let src = self.scalar();
            if (op == ALU_DIV || op == ALU_MOD) && self.rng.chance(85) {
                // Prove the divisor non-zero first.
                let skip = self.a.label();
                if is64 {
                    self.a.jeq_imm(src, 0, skip);
                } else {
                    self.a.jmp32_imm(JMP_JEQ, src, 0, skip);
                }
                self.emit_alu_reg(op, dst, src, is64);
                self.a.bind(skip);
            } else {
                self.emit_alu_reg(op, dst, src, is64);
            }
        } else {
            let mut imm = self.rng.imm();
            if matches!(op, ALU_LSH | ALU_RSH | ALU_ARSH) && self.rng.chance(95) {
                imm = self.rng.range(0, width - 1) as i32;
            }
            if (op == ALU_DIV || op == ALU_MOD) && imm == 0 && self.rng.chance(95) {
                imm = 3;
            }
            if is64 {
                self.a.alu64_imm(op, dst, imm);
            } else {
                self.a.alu32_imm(op, dst, imm);
            }
        }
    }

    fn emit_alu_reg(&mut self, op: u8, dst: u8, src: u8, is64: bool) {
        if is64 {
            self.a.alu64_reg(op, dst, src);
        } else {
            self.a.alu32_reg(op, dst, src);
        }
    }

    fn size(&mut self) -> (u8, i64) {
        let s = self.rng.pick(&[SIZE_B, SIZE_H, SIZE_W, SIZE_DW]);
        (s, access_bytes(s) as i64)
    }

    fn ldx(&mut self, size: u8, dst: u8, src: u8, off: i64) {
        let off = off.clamp(i16::MIN as i64, i16::MAX as i64) as i16;
        self.a.raw(Insn::new(CLASS_LDX | MODE_MEM | size, dst, src, off, 0));
    }

    fn ctx_load(&mut self) {
        let (size, n) = self.size();
        let limit = self.spec.ctx_size as i64 - if self.spec.packet.is_some() { 8 } else { 0 };
        let off = if self.rng.chance(90) {
            self.rng.range(0, (limit - n).max(0))
        } else {
            self.rng.range(-2, limit + 2)
        };
        let dst = self.scalar();
        self.ldx(size, dst, CTX_REG, off);
    }

    /// Variable-offset load from a region or the context after a bounds check.
    fn checked_load(&mut self) {
        let (size, n) = self.size();
        let idx = self.scalar();
        let (object_size, to_ctx) = if self.rng.chance(20) {
            let limit = self.spec.ctx_size as i64 - if self.spec.packet.is_some() { 8 } else { 0 };
            (limit, true)
        } else {
            let r = self.rng.below(self.spec.regions.len() as u64) as u32;
            self.a.ld_region(TEMP_PTR, r, 0);
            (self.spec.regions[r as usize] as i64, false)
        };
        if to_ctx {
            self.a.mov64_reg(TEMP_PTR, CTX_REG);
        }
        let skip = self.forward();
        let mut bound = object_size - n;
        if self.rng.chance(10) {
            bound += self.rng.range(1, 4);
        }
        if bound < 0 {
            bound = 0;
        }
        match self.rng.below(3) {
            0 => self.a.jgt_imm(idx, bound as i32, skip),
            1 => self.a.jge_imm(idx, bound as i32 + 1, skip),
            _ => {
                // Mask instead of compare when the object is a power of two.
                if (object_size & (object_size - 1)) == 0 && n <= object_size {
                    self.a.and64_imm(idx, (object_size - n) as i32 & !(n as i32 - 1))
                } else {
                    self.a.jgt_imm(idx, bound as i32, skip)
                }
            }
        };
        self.a.add64_reg(TEMP_PTR, idx);
        let dst = self.scalar();
        self.ldx(size, dst, TEMP_PTR, 0);
    }

    fn stack_op(&mut self) {
        let (size, n) = self.size();
        let slot = -self.rng.range(1, 8) * 8;
        let off = slot + if self.rng.chance(90) { 0 } else { self.rng.range(0, 7) };
        let off = off - off.rem_euclid(n) * self.rng.below(2) as i64;
        match self.rng.below(4) {
            0 => {
                let imm = self.rng.imm();
                self.a.raw(Insn::new(CLASS_ST | MODE_MEM | size, 10, 0, off as i16, imm));
            }
            1 => {
                let src = self.scalar();
                self.a.raw(Insn::new(CLASS_STX | MODE_MEM | size, 10, src, off as i16, 0));
            }
            2 => {
                // Spill and fill the region pointer.
                self.a.stx_dw(10, slot as i16, REGION_REG).ldx_dw(REGION_REG, 10, slot as i16);
            }
            _ => {
                let dst = self.scalar();
                self.ldx(size, dst, 10, off);
            }
        }
    }

    fn packet_load(&mut self) {
        if self.spec.packet.is_none() {
            return self.ctx_load();
        }
        let (size, n) = self.size();
        let skip = self.forward();
        if self.rng.chance(30) {
            // Variable offset: data + (idx & 15), then prove.
            let idx = self.scalar();
            self.a
                .mov64_reg(TEMP_PTR, PKT)
                .and64_imm(idx, 15)
                .add64_reg(TEMP_PTR, idx)
                .mov64_reg(1, TEMP_PTR)
                .add64_imm(1, n as i32)
                .jgt_reg(1, PKT_END, skip);
            let dst = self.scalar();
            self.ldx(size, dst, TEMP_PTR, 0);
            return;
        }
        let c = self.rng.range(0, 40);
        let off =
            if self.rng.chance(90) { self.rng.range(0, (c - n).max(0)) } else { self.rng.range(-1, c + 2) };
        self.a.mov64_reg(TEMP_PTR, PKT).add64_imm(TEMP_PTR, c as i32);
        if self.rng.chance(50) {
            self.a.jgt_reg(TEMP_PTR, PKT_END, skip);
        } else {
            self.a.jlt_reg(PKT_END, TEMP_PTR, skip);
        }
        let dst = self.scalar();
        self.ldx(size, dst, PKT, off);
    }

    fn branch(&mut self) {
        let op = self.rng.pick(&JMP_OPS);
        let dst = self.scalar();
        let target = self.forward();
        let is32 = self.rng.chance(25);
        if self.rng.chance(50) {
            let imm = self.rng.imm();
            if is32 {
                self.a.jmp32_imm(op, dst, imm, target);
            } else {
                self.a.jmp_imm(op, dst, imm, target);
            }
        } else {
            let src = self.scalar();
            if is32 {
                self.a.jmp32_reg(op, dst, src, target);
            } else {
                self.a.jmp_reg(op, dst, src, target);
            }
        }
    }

    fn misc(&mut self) {
        let dst = self.scalar();
        match self.rng.below(6) {
            0 => byte_swap(self.rng, &mut self.a, dst),
            1 => {
                let v = self.rng.next_u64();
                self.a.ld_imm64(dst, v);
            }
            2 => {
                // Conditional early exit.
                let skip = self.a.label();
                let imm = self.rng.imm();
                self.a.jne_imm(dst, imm, skip).mov64_reg(0, dst).exit().bind(skip);
            }
            3 => {
                // Something that is usually wrong.
                let insn = Insn::new(
                    self.rng.next_u64() as u8,
                    self.rng.below(11) as u8,
                    self.rng.below(11) as u8,
                    self.rng.range(-2, 4) as i16,
                    self.rng.imm(),
                );
                self.a.raw(insn);
            }
            _ => {
                let src = self.scalar();
                self.a.mov64_reg(dst, src);
            }
        }
    }
}

/// A random program, biased toward ones the verifier accepts.
pub fn gen_program(rng: &mut Rng, spec: &ProgramSpec) -> Vec<Insn> {
    let mut g = Gen { rng, spec, a: Asm::new(), pending: Vec::new() };
    g.a.mov64_reg(CTX_REG, 1);
    for r in SCALARS {
        if g.rng.chance(70) {
            let off = g.rng.range(0, (spec.ctx_size as i64 - 8 - 8).max(0)) as i16;
            g.a.ldx_dw(r, CTX_REG, off & !7);
        } else {
            let imm = g.rng.imm();
            g.a.mov64_imm(r, imm);
        }
    }
    if g.rng.chance(80) {
        for slot in 1..=8 {
            g.a.st_dw(10, -8 * slot, slot as i32);
        }
    }
    let region = g.rng.below(spec.regions.len() as u64) as u32;
    g.a.ld_region(REGION_REG, region, 0);
    if let Some(p) = spec.packet {
        g.a.ldx_w(PKT, CTX_REG, p.data_off as i16).ldx_w(PKT_END, CTX_REG, p.data_end_off as i16);
    }
    let snippets = g.rng.range(3, 24);
    for _ in 0..snippets {
        match g.rng.below(100) {
            0..=34 => g.alu(),
            35..=44 => g.ctx_load(),
            45..=59 => g.checked_load(),
            60..=69 => g.stack_op(),
            70..=79 => g.packet_load(),
            80..=92 => g.branch(),
            _ => g.misc(),
        }
        let mut i = 0;
        while i < g.pending.len() {
            if g.pending[i].1 == 0 {
                let (l, _) = g.pending.swap_remove(i);
                g.a.bind(l);
            } else {
                g.pending[i].1 -= 1;
                i += 1;
            }
        }
    }
    for (l, _) in core::mem::take(&mut g.pending) {
        g.a.bind(l);
    }
    let r = g.scalar();
    g.a.mov64_reg(0, r).exit();
    g.a.finish().unwrap()
}

/// Random memory contents for one run; small values are common so that
/// data-dependent branches and offsets go both ways.
#[derive(Clone, Debug)]
pub struct Inputs {
    pub ctx: Vec<u8>,
    pub regions: Vec<Vec<u8>>,
    pub packet: Vec<u8>,
}

impl Inputs {
    pub fn new(rng: &mut Rng, spec: &ProgramSpec) -> Inputs {
        let bytes = |n: usize, rng: &mut Rng| -> Vec<u8> {
            (0..n).map(|_| if rng.chance(50) { rng.below(16) as u8 } else { rng.next_u64() as u8 }).collect()
        };
        let ctx = bytes(spec.ctx_size as usize, rng);
        let regions = spec.regions.iter().map(|&s| bytes(s as usize, rng)).collect();
        let plen =
            if rng.chance(50) { rng.pick(&[0usize, 1, 7, 14, 20, 33, 60]) } else { rng.below(48) as usize };
        let packet = bytes(plen, rng);
        Inputs { ctx, regions, packet }
    }

    pub fn region_slices(&self) -> Vec<&[u8]> {
        self.regions.iter().map(|r| r.as_slice()).collect()
    }
}
