//! Seeded programs aimed at the verifier's weak spots, for the
//! differential fuzzing campaign (`campaign.rs`): many paths into one
//! instruction (so that states are merged) that disagree about pointers
//! and spilled values, then uses of what was merged; 32-bit ALU, shifts
//! and byte swaps feeding offsets and divisors; packet bounds proofs over
//! joins; and bit-level mutations of accepted programs.

use alloc::vec::Vec;

use crate::gen::{Rng, ALU_OPS, JMP_OPS};
use crate::insn::{
    access_bytes, ALU_ARSH, ALU_DIV, ALU_LSH, ALU_MOD, ALU_NEG, ALU_RSH, CLASS_LDX, CLASS_STX, JMP_JEQ,
    JMP_JGE, JMP_JGT, JMP_JLE, JMP_JLT, JMP_JNE, JMP_JSGE, JMP_JSGT, JMP_JSLE, JMP_JSLT, MODE_MEM, SIZE_B,
    SIZE_DW, SIZE_H, SIZE_W,
};
use crate::{Asm, Insn, Label, ProgramSpec};

const CTX: u8 = 6;
const REGION: u8 = 7;
const PKT: u8 = 8;
const PKT_END: u8 = 9;
/// Registers the snippets assign and use; r0 is the result.
const WORK: [u8; 5] = [0, 2, 3, 4, 5];
/// Stack slots the prelude may initialise (r10-8 down to r10-8*SLOTS).
const SLOTS: i64 = 16;

/// What the blocks of one fan or diamond assign: values of one family
/// differ only in offset or value, which is what joins merge.
#[derive(Clone, Copy)]
enum Family {
    Stack,
    Ctx,
    Region,
    Packet,
    Scalar,
    Spill,
    Mixed,
}

struct Stress<'a> {
    rng: &'a mut Rng,
    spec: &'a ProgramSpec,
    a: Asm,
    /// How the current fan's blocks fill the slot (spill family).
    spill_kind: Option<u64>,
}

impl Stress<'_> {
    fn work(&mut self) -> u8 {
        self.rng.pick(&WORK)
    }

    fn size(&mut self) -> u8 {
        self.rng.pick(&[SIZE_B, SIZE_H, SIZE_W, SIZE_DW, SIZE_DW])
    }

    /// A stack offset: usually an aligned slot, sometimes an edge case.
    fn stack_off(&mut self) -> i32 {
        let slot = self.rng.range(1, SLOTS);
        self.stack_slot_or_edge(slot)
    }

    /// Slot `slot` (1-based) as an offset from r10, or now and then an
    /// offset at or past the edges.
    fn stack_slot_or_edge(&mut self, slot: i64) -> i32 {
        match self.rng.below(12) {
            0 => self.rng.pick(&[-512, -520, -4, 0, 8, 48, 56, -1]),
            _ => -8 * slot as i32,
        }
    }

    fn ctx_limit(&self) -> i64 {
        self.spec.ctx_size as i64 - if self.spec.packet.is_some() { 8 } else { 0 }
    }

    /// `dst = <a value of the family>`; the spill family stores one into
    /// `slot` instead.
    fn assign(&mut self, family: Family, dst: u8, slot: i16) {
        let block = self.rng.range(1, SLOTS);
        self.assign_block(family, dst, slot, block);
    }

    /// `assign` for block number `block` of a fan: pointers get an offset
    /// of their own, so that the blocks' states are distinct.
    fn assign_block(&mut self, family: Family, dst: u8, slot: i16, block: i64) {
        let family = match family {
            Family::Mixed => self.rng.pick(&[
                Family::Stack,
                Family::Ctx,
                Family::Region,
                Family::Packet,
                Family::Scalar,
                Family::Spill,
            ]),
            f => f,
        };
        match family {
            Family::Stack => {
                let off = self.stack_slot_or_edge(block);
                self.a.mov64_reg(dst, 10).add64_imm(dst, off);
            }
            Family::Ctx => {
                let off = if self.rng.chance(80) { block % self.spec.ctx_size as i64 } else { block * 4 };
                self.a.mov64_reg(dst, CTX).add64_imm(dst, off as i32);
            }
            Family::Region => {
                let r = self.rng.below(self.spec.regions.len() as u64) as u32;
                let off = self.rng.range(0, self.spec.regions[r as usize] as i64);
                self.a.ld_region(dst, r, off as i32);
            }
            Family::Packet if self.spec.packet.is_some() => {
                let off = (block + self.rng.range(0, 1)) as i32;
                self.a.mov64_reg(dst, PKT);
                if self.rng.chance(50) {
                    // A variable offset: each block's pointer has its own id.
                    let mask = self.rng.pick(&[3, 7, 15]);
                    self.a
                        .ldx_b(1, CTX, block as i16 % 8)
                        .and64_imm(1, mask)
                        .add64_reg(dst, 1)
                        .mov64_reg(1, CTX);
                }
                self.a.add64_imm(dst, off);
            }
            Family::Spill => {
                // Spill a pointer or a scalar into the slot.
                let kind = self.spill_kind.unwrap_or_else(|| self.rng.below(5));
                match kind {
                    0 => {
                        let imm = self.rng.pick(&[0, 1, 5, -1]);
                        self.a.st_dw(10, slot, imm);
                    }
                    4 => {
                        // Narrow stores: data, not a spill.
                        let imm = self.rng.pick(&[0, 1, 5, -1]);
                        self.a.st_w(10, slot, imm).st_w(10, slot + 4, imm);
                    }
                    1 => {
                        let src = self.rng.pick(&[0, 2, 3, 4, 5, CTX, REGION, 10, PKT]);
                        self.a.stx_dw(10, slot, src);
                    }
                    _ => {
                        let off = self.stack_slot_or_edge(block);
                        self.a.mov64_reg(dst, 10).add64_imm(dst, off).stx_dw(10, slot, dst);
                    }
                }
            }
            _ => {
                let imm = self.rng.pick(&[0, 1, 5, -1, 8, 16, 255]);
                if self.rng.chance(70) {
                    self.a.mov64_imm(dst, imm);
                } else {
                    self.a.mov32_imm(dst, imm);
                }
            }
        }
    }

    /// Something that reads what earlier snippets assigned.
    fn use_value(&mut self) {
        let r = self.work();
        match self.rng.below(9) {
            0 if self.rng.chance(30) => {
                let size = self.size();
                let off = if self.rng.chance(80) { 0 } else { self.rng.range(-8, 8) as i16 };
                let dst = self.work();
                self.a.raw(Insn::new(CLASS_LDX | MODE_MEM | size, dst, r, off, 0));
            }
            3 => {
                // Fill from a slot.
                let size = self.size();
                let off = self.stack_off() as i16;
                self.a.raw(Insn::new(CLASS_LDX | MODE_MEM | size, r, 10, off, 0));
            }
            2 | 4 => {
                let src = self.work();
                let op = self.rng.pick(&[ALU_DIV, ALU_MOD]);
                if self.rng.chance(50) {
                    self.a.alu64_reg(op, r, src);
                } else {
                    self.a.alu32_reg(op, r, src);
                }
            }
            5 => self.checked_offset(r),
            6 => {
                let dst = self.work();
                self.a.mov64_reg(dst, r);
            }
            7 => self.exit_with(r),
            _ => self.alu(),
        }
    }

    /// Proves `n` bytes at packet pointer `p` (usually: sometimes one
    /// more or fewer) with any of the equivalent comparisons, then loads.
    fn proven_load(&mut self, p: u8, size: u8) {
        let skip = self.a.label();
        let n =
            access_bytes(size) as i32 + if self.rng.chance(15) { self.rng.range(-1, 1) as i32 } else { 0 };
        // p + n <= end, written as r1 <= end or end >= r1 (r1 = p + n), or
        // as r1 < end with r1 = p + n - 1, or as r1 == end.
        let (op, adjust, taken) = self.rng.pick(&[
            (JMP_JGT, 0, false),
            (JMP_JLE, 0, true),
            (JMP_JLT, -1, true),
            (JMP_JGE, -1, false),
            (JMP_JEQ, 0, true),
            (JMP_JNE, 0, false),
        ]);
        self.a.mov64_reg(1, p).add64_imm(1, n + adjust);
        let target = if taken { self.a.label() } else { skip };
        if self.rng.chance(50) {
            self.a.jmp_reg(op, 1, PKT_END, target);
        } else {
            let swapped = match op {
                JMP_JGT => JMP_JLT,
                JMP_JLE => JMP_JGE,
                JMP_JLT => JMP_JGT,
                JMP_JGE => JMP_JLE,
                o => o,
            };
            self.a.jmp_reg(swapped, PKT_END, 1, target);
        }
        self.take_edge(target, skip);
        let dst = self.work();
        self.a.raw(Insn::new(CLASS_LDX | MODE_MEM | size, dst, p, 0, 0));
        self.a.bind(skip).mov64_reg(1, CTX);
    }

    /// After the jump to `target`: for a taken-edge access, the
    /// fall-through goes to `skip` and the access starts at `target`.
    fn take_edge(&mut self, target: Label, skip: Label) {
        if target != skip {
            self.a.ja(skip).bind(target);
        }
    }

    /// Emits a comparison of `x` with `k` after which, on the edge where
    /// the code continues, `x <= k` (`upper`) or `x >= k` holds; the other
    /// edge goes to `skip`. One of the four equivalent forms (each operator
    /// on the edge where it proves the fact), now and then a 32-bit or
    /// signed variant. With `reg`, `k` is in that register, else immediate.
    fn bound(&mut self, x: u8, upper: bool, k: i64, reg: Option<u8>, skip: Label) {
        // (operator, constant adjustment, continue on the taken edge)
        let forms = if upper {
            [(JMP_JGT, 0, false), (JMP_JLE, 0, true), (JMP_JLT, 1, true), (JMP_JGE, 1, false)]
        } else {
            [(JMP_JLT, 0, false), (JMP_JGE, 0, true), (JMP_JGT, -1, true), (JMP_JLE, -1, false)]
        };
        let (mut op, adjust, taken) = self.rng.pick(&forms);
        if self.rng.chance(10) {
            op = match op {
                JMP_JGT => JMP_JSGT,
                JMP_JGE => JMP_JSGE,
                JMP_JLT => JMP_JSLT,
                _ => JMP_JSLE,
            };
        }
        let target = if taken { self.a.label() } else { skip };
        let is32 = self.rng.chance(15);
        match reg {
            Some(r) => {
                self.a.mov64_imm(r, (k + adjust) as i32);
                if is32 {
                    self.a.jmp32_reg(op, x, r, target);
                } else {
                    self.a.jmp_reg(op, x, r, target);
                }
            }
            None if is32 => {
                self.a.jmp32_imm(op, x, (k + adjust) as i32, target);
            }
            None => {
                self.a.jmp_imm(op, x, (k + adjust) as i32, target);
            }
        }
        self.take_edge(target, skip);
    }

    /// Bounds scalar `idx` on both sides (exactly, or off by one), then
    /// reads a region at base + idx or base - idx with the base outside
    /// the region: both ends of the proven range matter.
    fn range_access(&mut self) {
        let idx = self.work();
        if self.rng.chance(60) {
            // A fresh small value, so runs hit the ends of the range.
            let off = self.rng.range(0, self.ctx_limit() - 2) as i16;
            let size = self.rng.pick(&[SIZE_B, SIZE_B, SIZE_H]);
            self.a.raw(Insn::new(CLASS_LDX | MODE_MEM | size, idx, CTX, off, 0));
        }
        let r = self.rng.below(self.spec.regions.len() as u64) as u32;
        let limit = self.spec.regions[r as usize] as i64;
        let size = self.size();
        let n = access_bytes(size) as i64;
        let skip = self.a.label();
        let slack = self.rng.pick(&[0, 1, 2, 4, 8]);
        let span = (limit - n).max(0);
        let noise = |rng: &mut Rng| if rng.chance(15) { rng.range(-1, 1) } else { 0 };
        // idx in [slack, slack + span]: base - slack + idx, or
        // base + span + slack - idx, stays inside.
        let (lo, hi) = (slack + noise(self.rng), slack + span + noise(self.rng));
        let by_reg = if self.rng.chance(30) { Some(1) } else { None };
        if self.rng.chance(50) {
            self.bound(idx, true, hi, by_reg, skip);
            self.bound(idx, false, lo, by_reg, skip);
        } else {
            self.bound(idx, false, lo, by_reg, skip);
            self.bound(idx, true, hi, by_reg, skip);
        }
        if self.rng.chance(50) {
            self.a.ld_region(1, r, -slack as i32).add64_reg(1, idx);
        } else {
            self.a.ld_region(1, r, (span + slack) as i32).sub64_reg(1, idx);
        }
        let dst = self.work();
        self.a.raw(Insn::new(CLASS_LDX | MODE_MEM | size, dst, 1, 0, 0));
        self.a.bind(skip).mov64_reg(1, CTX);
    }

    /// Returns `r` if a context byte says so.
    fn exit_with(&mut self, r: u8) {
        let l = self.a.label();
        let off = self.rng.range(0, self.ctx_limit() - 1) as i16;
        self.a.ldx_b(1, CTX, off).jset_imm(1, 1, l).mov64_reg(0, r).exit().bind(l).mov64_reg(1, CTX);
    }

    /// Uses `r` (and for spills, `slot`) right after a join.
    fn use_merged(&mut self, family: Family, r: u8, slot: i16) {
        if matches!(family, Family::Spill | Family::Mixed) && self.rng.chance(70) {
            self.a.ldx_dw(r, 10, slot);
        }
        let size = self.size();
        if matches!(family, Family::Packet) && self.spec.packet.is_some() && self.rng.chance(80) {
            return self.proven_load(r, size);
        }
        let pointer = match family {
            Family::Scalar => false,
            Family::Spill | Family::Mixed => self.rng.chance(50),
            _ => true,
        };
        match (pointer, self.rng.below(3)) {
            (true, 0 | 1) => {
                let dst = self.work();
                let off = if self.rng.chance(80) { 0 } else { self.rng.pick(&[-8, 8, 4]) };
                self.a.raw(Insn::new(CLASS_LDX | MODE_MEM | size, dst, r, off, 0));
            }
            (true, _) => {
                let src = self.work();
                self.a.raw(Insn::new(CLASS_STX | MODE_MEM | size, r, src, 0, 0));
            }
            (false, 0) => {
                let dst = self.work();
                if self.rng.chance(50) {
                    self.a.alu64_reg(ALU_DIV, dst, r);
                } else {
                    self.a.alu32_reg(ALU_MOD, dst, r);
                }
            }
            (false, 1) => self.exit_with(r),
            (false, _) => self.checked_offset(r),
        }
    }

    /// Uses scalar `idx` as a bounds-checked offset into a region or the
    /// packet (a packet proof through a register offset).
    fn checked_offset(&mut self, idx: u8) {
        let skip = self.a.label();
        let size = self.size();
        let n = access_bytes(size) as i32;
        let dst = self.work();
        if self.spec.packet.is_some() && self.rng.chance(50) {
            // r1 = packet + (idx & mask), r7 = r1 + n, compared with the end.
            let mask = self.rng.pick(&[7, 15, 31, 255]);
            self.a.and64_imm(idx, mask).mov64_reg(1, PKT).add64_reg(1, idx).mov64_reg(REGION, 1);
            self.a.add64_imm(REGION, n + self.rng.range(-1, 1) as i32);
            let op = self.rng.pick(&[JMP_JGT, JMP_JGE, JMP_JLT, JMP_JLE, JMP_JNE, JMP_JEQ, JMP_JSGT]);
            if self.rng.chance(50) {
                self.a.jmp_reg(op, REGION, PKT_END, skip);
            } else {
                self.a.jmp_reg(op, PKT_END, REGION, skip);
            }
            self.a.raw(Insn::new(CLASS_LDX | MODE_MEM | size, dst, 1, 0, 0));
        } else {
            let r = self.rng.below(self.spec.regions.len() as u64) as u32;
            let bound = self.spec.regions[r as usize] as i32 - n + self.rng.range(-1, 1) as i32;
            let op = self.rng.pick(&[JMP_JGT, JMP_JSGT, JMP_JGE]);
            if self.rng.chance(30) {
                self.a.jmp32_imm(op, idx, bound, skip);
            } else {
                self.a.jmp_imm(op, idx, bound, skip);
            }
            self.a.ld_region(1, r, 0).add64_reg(1, idx);
            self.a.raw(Insn::new(CLASS_LDX | MODE_MEM | size, dst, 1, 0, 0));
        }
        self.a.bind(skip);
        self.a.mov64_reg(1, CTX).ld_region(REGION, 0, 0);
    }

    /// 32-bit and 64-bit ALU, shifts and byte swaps on work registers.
    fn alu(&mut self) {
        let dst = self.work();
        let is64 = self.rng.chance(50);
        match self.rng.below(4) {
            0 => crate::gen::byte_swap(self.rng, &mut self.a, dst),
            1 => {
                let op = self.rng.pick(&[ALU_LSH, ALU_RSH, ALU_ARSH]);
                let width = if is64 { 64 } else { 32 };
                if self.rng.chance(50) {
                    let src = self.work();
                    self.emit_alu(op, dst, None, Some(src), is64);
                } else {
                    let n = self.rng.range(0, width - 1) as i32;
                    self.emit_alu(op, dst, Some(n), None, is64);
                }
            }
            _ => {
                let op = self.rng.pick(&ALU_OPS);
                if self.rng.chance(50) {
                    let src = self.work();
                    self.emit_alu(op, dst, None, Some(src), is64);
                } else {
                    let mut imm = self.rng.imm();
                    if matches!(op, ALU_DIV | ALU_MOD) && imm == 0 {
                        imm = 5;
                    }
                    if matches!(op, ALU_LSH | ALU_RSH | ALU_ARSH) {
                        imm &= if is64 { 63 } else { 31 };
                    }
                    self.emit_alu(op, dst, Some(imm), None, is64);
                }
            }
        }
    }

    fn emit_alu(&mut self, op: u8, dst: u8, imm: Option<i32>, src: Option<u8>, is64: bool) {
        if op == ALU_NEG {
            self.a.neg(dst, is64);
            return;
        }
        match (imm, src, is64) {
            (Some(i), _, true) => self.a.alu64_imm(op, dst, i),
            (Some(i), _, false) => self.a.alu32_imm(op, dst, i),
            (None, Some(s), true) => self.a.alu64_reg(op, dst, s),
            (_, _, _) => self.a.alu32_reg(op, dst, src.unwrap_or(0)),
        };
    }

    /// A conditional jump on the selector in r1, 64 or 32 bits.
    fn cond(&mut self, target: Label) {
        let op = self.rng.pick(&JMP_OPS);
        let imm = if self.rng.chance(80) { self.rng.range(-2, 16) as i32 } else { self.rng.imm() };
        if self.rng.chance(30) {
            self.a.jmp32_imm(op, 1, imm, target);
        } else {
            self.a.jmp_imm(op, 1, imm, target);
        }
    }

    /// Many blocks selected by a context byte, each assigning a value of
    /// one family to the same register, joined: more paths than the
    /// verifier keeps states for.
    fn fan(&mut self) {
        let family = self.family();
        let dst = self.work();
        let slot = -8 * self.rng.range(1, SLOTS) as i16;
        let blocks = if self.rng.chance(70) { self.rng.range(9, 16) } else { self.rng.range(2, 8) } as usize;
        let start = self.rng.range(0, SLOTS);
        let sel = self.work();
        let off = self.rng.range(0, self.ctx_limit() - 1) as i16;
        self.a.ldx_b(sel, CTX, off);
        let labels: Vec<Label> = (0..blocks).map(|_| self.a.label()).collect();
        let join = self.a.label();
        for (i, &l) in labels.iter().enumerate() {
            self.a.jeq_imm(sel, i as i32, l);
        }
        if self.rng.chance(50) {
            self.a.ja(join);
        } else {
            self.a.mov64_imm(0, 0).exit();
        }
        // Blocks agree on how they fill the slot, except perhaps the last,
        // whose state is the one merged.
        self.spill_kind = Some(self.rng.below(5));
        for (i, &l) in labels.iter().enumerate() {
            self.a.bind(l);
            let block = 1 + (start + i as i64) % SLOTS;
            if i + 1 == blocks && self.rng.chance(40) {
                self.spill_kind = None;
            }
            self.assign_block(family, dst, slot, block);
            if self.rng.chance(30) {
                self.assign(family, dst, slot);
            }
            self.a.ja(join);
        }
        self.a.bind(join);
        self.spill_kind = None;
        if self.rng.chance(80) {
            self.use_merged(family, dst, slot);
        }
    }

    /// A chain of diamonds: each may skip an assignment, so `n` of them
    /// give up to 2^n distinct states at the end.
    fn diamonds(&mut self) {
        let family = self.family();
        let dst = self.work();
        let slot = -8 * self.rng.range(1, SLOTS) as i16;
        let off = self.rng.range(0, self.ctx_limit() - 8) as i16;
        let size = self.rng.pick(&[SIZE_B, SIZE_W, SIZE_DW]);
        self.a.raw(Insn::new(CLASS_LDX | MODE_MEM | size, 1, CTX, off, 0));
        for _ in 0..self.rng.range(2, 6) {
            let skip = self.a.label();
            self.cond(skip);
            self.assign(family, dst, slot);
            self.a.bind(skip);
        }
        self.a.mov64_reg(1, CTX);
        if self.rng.chance(80) {
            self.use_merged(family, dst, slot);
        }
    }

    fn family(&mut self) -> Family {
        self.rng.pick(&[
            Family::Stack,
            Family::Stack,
            Family::Ctx,
            Family::Region,
            Family::Packet,
            Family::Scalar,
            Family::Spill,
            Family::Spill,
            Family::Mixed,
        ])
    }
}

/// A program biased toward merged states and their uses.
pub fn gen_stress_program(rng: &mut Rng, spec: &ProgramSpec) -> Vec<Insn> {
    let mut s = Stress { rng, spec, a: Asm::new(), spill_kind: None };
    s.a.mov64_reg(CTX, 1).ld_region(REGION, 0, 0);
    if let Some(p) = spec.packet {
        s.a.ldx_w(PKT, CTX, p.data_off as i16).ldx_w(PKT_END, CTX, p.data_end_off as i16);
    }
    // Scalars from the context and initialised slots.
    for r in WORK {
        let size = s.size();
        let n = access_bytes(size) as i64;
        let off = s.rng.range(0, s.ctx_limit() - n) as i16 & !(n as i16 - 1);
        s.a.raw(Insn::new(CLASS_LDX | MODE_MEM | size, r, CTX, off, 0));
    }
    for slot in 1..=SLOTS as i16 {
        if s.rng.chance(92) {
            let v = s.rng.pick(&[0, 1, 5, 7, -1]);
            s.a.st_dw(10, -8 * slot, v);
        }
    }
    for _ in 0..s.rng.range(1, 6) {
        match s.rng.below(10) {
            0..=2 => s.fan(),
            3..=4 => s.diamonds(),
            5 => s.alu(),
            6 => s.range_access(),
            7 if spec.packet.is_some() => {
                let (p, off) = (s.work(), s.rng.range(0, 24));
                s.assign_block(Family::Packet, p, 0, off);
                let size = s.size();
                s.proven_load(p, size);
            }
            _ => s.use_value(),
        }
    }
    let r = s.work();
    s.a.mov64_reg(0, r).exit();
    s.a.finish().expect("jumps are short")
}

/// Flips bits, swaps registers or replaces an immediate or offset in a
/// few instructions.
pub fn mutate(rng: &mut Rng, insns: &mut [Insn]) {
    for _ in 0..rng.range(1, 3) {
        let i = rng.below(insns.len() as u64) as usize;
        let insn = &mut insns[i];
        match rng.below(5) {
            0 => {
                let mut b = insn.to_bytes();
                b[rng.below(8) as usize] ^= 1 << rng.below(8);
                *insn = Insn::from_bytes(b);
            }
            1 => insn.dst = rng.below(11) as u8,
            2 => insn.src = rng.below(11) as u8,
            3 => insn.imm = rng.imm(),
            _ => insn.off = insn.off.wrapping_add(rng.range(-9, 9) as i16),
        }
    }
}
