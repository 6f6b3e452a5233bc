//! Structural checks that need no value tracking: opcode and field
//! validity, jump targets, reachability and termination.

use alloc::vec;
use alloc::vec::Vec;

use crate::insn::{
    Insn, ALU_ARSH, ALU_DIV, ALU_END, ALU_LSH, ALU_MOD, ALU_MOV, ALU_NEG, ALU_RSH, CLASS_ALU, CLASS_ALU64,
    CLASS_JMP, CLASS_JMP32, CLASS_LD, CLASS_LDX, CLASS_ST, CLASS_STX, FRAME_REG, HELPER_TAIL_CALL, JMP_CALL,
    JMP_EXIT, JMP_JA, LD_IMM64, MODE_ABS, MODE_ATOMIC, MODE_IND, MODE_MEM, MODE_MEMSX, NUM_REGS,
    PSEUDO_REGION, SRC_X,
};
use crate::reject::{Reason, Reject};
use crate::spec::ProgramSpec;

/// Per-slot facts the value pass relies on.
pub(crate) struct Shape {
    /// Slot has more than one predecessor (a place to prune paths).
    pub join: Vec<bool>,
    /// Registers that may be read before being written, from each slot on
    /// (bit r for register r). Dead registers are forgotten at join points
    /// so that states differing only in dead values prune each other.
    pub live: Vec<u16>,
}

pub(crate) fn check_spec(spec: &ProgramSpec) -> Result<(), Reason> {
    if spec.ctx_size > i32::MAX as u32 || spec.regions.iter().any(|&s| s > i32::MAX as u32) {
        return Err(Reason::InvalidSpec("object larger than 2 GiB"));
    }
    if let Some(p) = spec.packet {
        if p.width != 4 && p.width != 8 {
            return Err(Reason::InvalidSpec("packet field width must be 4 or 8"));
        }
        let end = |o: u32| o as u64 + p.width as u64;
        if end(p.data_off) > spec.ctx_size as u64 || end(p.data_end_off) > spec.ctx_size as u64 {
            return Err(Reason::InvalidSpec("packet fields outside the context"));
        }
        if p.data_off < p.data_end_off + p.width && p.data_end_off < p.data_off + p.width {
            return Err(Reason::InvalidSpec("packet fields overlap"));
        }
    }
    Ok(())
}

pub(crate) fn check(insns: &[Insn], spec: &ProgramSpec) -> Result<Shape, Reject> {
    check_spec(spec).map_err(|r| Reject::new(0, r))?;
    let len = insns.len();
    if len == 0 {
        return Err(Reject::new(0, Reason::EmptyProgram));
    }
    if len > spec.max_insns {
        return Err(Reject::new(spec.max_insns, Reason::TooManyInstructions { len, max: spec.max_insns }));
    }

    let mut second_half = vec![false; len];
    let mut i = 0;
    while i < len {
        check_insn(insns, i, spec).map_err(|r| Reject::new(i, r))?;
        if insns[i].code == LD_IMM64 {
            second_half[i + 1] = true;
            i += 2;
        } else {
            i += 1;
        }
    }

    // Jumps only go forward, so one pass in order sees every predecessor of
    // a slot before the slot itself.
    let mut preds = vec![0u32; len];
    preds[0] = 1;
    let mut i = 0;
    while i < len {
        let insn = insns[i];
        if preds[i] == 0 {
            return Err(Reject::new(i, Reason::UnreachableInstruction));
        }
        let class = insn.class();
        let is_jump = class == CLASS_JMP || class == CLASS_JMP32;
        let next = if insn.code == LD_IMM64 { i + 2 } else { i + 1 };
        if is_jump && insn.op() != JMP_EXIT {
            let target = i as i64 + 1 + insn.off as i64;
            if target <= i as i64 {
                return Err(Reject::new(i, Reason::BackwardJump { target }));
            }
            if target >= len as i64 {
                return Err(Reject::new(i, Reason::JumpOutOfRange { target }));
            }
            let target = target as usize;
            if second_half[target] {
                return Err(Reject::new(i, Reason::JumpIntoLdImm64 { target }));
            }
            preds[target] += 1;
        }
        let falls_through = !(is_jump && (insn.op() == JMP_EXIT || insn.op() == JMP_JA));
        if falls_through {
            if next >= len {
                return Err(Reject::new(i, Reason::FallOffEnd));
            }
            preds[next] += 1;
        }
        i = next;
    }
    let join = preds.iter().map(|&p| p > 1).collect();
    let live = liveness(insns, &preds);
    Ok(Shape { join, live })
}

/// Backward liveness; one reverse pass suffices as every edge goes forward.
fn liveness(insns: &[Insn], preds: &[u32]) -> Vec<u16> {
    let len = insns.len();
    let mut live = vec![0u16; len + 1];
    for i in (0..len).rev() {
        // Unreached slots (ld_imm64 second halves) keep an empty set.
        if preds[i] == 0 {
            continue;
        }
        let insn = insns[i];
        let bit = |r: u8| 1u16 << r;
        let by_reg = insn.source() == SRC_X;
        let at = |j: i64| live.get(j as usize).copied().unwrap_or(0);
        let target = i as i64 + 1 + insn.off as i64;
        let (uses, defs, out) = match insn.class() {
            CLASS_ALU | CLASS_ALU64 => {
                let dst_read = if insn.op() == ALU_MOV { 0 } else { bit(insn.dst) };
                let src_read = if by_reg && insn.op() != ALU_END { bit(insn.src) } else { 0 };
                (dst_read | src_read, bit(insn.dst), at(i as i64 + 1))
            }
            CLASS_LD => (0, bit(insn.dst), at(i as i64 + 2)),
            CLASS_LDX => (bit(insn.src), bit(insn.dst), at(i as i64 + 1)),
            CLASS_ST => (bit(insn.dst), 0, at(i as i64 + 1)),
            CLASS_STX => (bit(insn.dst) | bit(insn.src), 0, at(i as i64 + 1)),
            _ => match insn.op() {
                JMP_EXIT => (bit(0), 0, 0),
                JMP_JA => (0, 0, at(target)),
                _ => {
                    let src_read = if by_reg { bit(insn.src) } else { 0 };
                    (bit(insn.dst) | src_read, 0, at(target) | at(i as i64 + 1))
                }
            },
        };
        live[i] = uses | (out & !defs);
    }
    live.truncate(len);
    live
}

fn reg(r: u8) -> Result<(), Reason> {
    if r as usize >= NUM_REGS {
        Err(Reason::BadRegister(r))
    } else {
        Ok(())
    }
}

/// A register the instruction writes.
fn dst_reg(r: u8) -> Result<(), Reason> {
    reg(r)?;
    if r == FRAME_REG {
        return Err(Reason::WriteToFramePointer);
    }
    Ok(())
}

fn zero(value: i64, field: &'static str) -> Result<(), Reason> {
    if value != 0 {
        Err(Reason::ReservedField(field))
    } else {
        Ok(())
    }
}

fn check_insn(insns: &[Insn], i: usize, spec: &ProgramSpec) -> Result<(), Reason> {
    let insn = insns[i];
    match insn.class() {
        CLASS_LD => check_ld(insns, i, spec),
        CLASS_LDX => {
            match insn.mode() {
                MODE_MEM => {}
                MODE_MEMSX => return Err(Reason::UnsupportedExtension("sign-extending load")),
                _ => return Err(Reason::UnknownOpcode(insn.code)),
            }
            dst_reg(insn.dst)?;
            reg(insn.src)?;
            zero(insn.imm as i64, "imm")
        }
        CLASS_ST => {
            if insn.mode() != MODE_MEM {
                return Err(Reason::UnknownOpcode(insn.code));
            }
            reg(insn.dst)?;
            zero(insn.src as i64, "src")
        }
        CLASS_STX => {
            match insn.mode() {
                MODE_MEM => {}
                MODE_ATOMIC => return Err(Reason::AtomicOperation),
                _ => return Err(Reason::UnknownOpcode(insn.code)),
            }
            reg(insn.dst)?;
            reg(insn.src)?;
            zero(insn.imm as i64, "imm")
        }
        CLASS_ALU | CLASS_ALU64 => check_alu(insn),
        _ => check_jmp(insn),
    }
}

fn check_ld(insns: &[Insn], i: usize, spec: &ProgramSpec) -> Result<(), Reason> {
    let insn = insns[i];
    match insn.mode() {
        MODE_ABS | MODE_IND => return Err(Reason::LegacyPacketLoad),
        _ if insn.code != LD_IMM64 => return Err(Reason::UnknownOpcode(insn.code)),
        _ => {}
    }
    dst_reg(insn.dst)?;
    zero(insn.off as i64, "off")?;
    let Some(second) = insns.get(i + 1) else {
        return Err(Reason::IncompleteLdImm64);
    };
    if second.code != 0 || second.dst != 0 || second.src != 0 || second.off != 0 {
        return Err(Reason::MalformedLdImm64);
    }
    match insn.src {
        0 => Ok(()),
        PSEUDO_REGION => {
            let count = spec.regions.len();
            if insn.imm < 0 || insn.imm as usize >= count {
                return Err(Reason::UnknownRegion { region: insn.imm as i64, count });
            }
            Ok(())
        }
        s => Err(Reason::BadPseudoSource(s)),
    }
}

fn check_alu(insn: Insn) -> Result<(), Reason> {
    let op = insn.op();
    let is64 = insn.class() == CLASS_ALU64;
    let by_reg = insn.source() == SRC_X;
    if op > ALU_END {
        return Err(Reason::UnknownOpcode(insn.code));
    }
    dst_reg(insn.dst)?;
    match op {
        ALU_END => {
            if is64 {
                return Err(if by_reg {
                    Reason::UnknownOpcode(insn.code)
                } else {
                    Reason::UnsupportedExtension("unconditional byte swap")
                });
            }
            zero(insn.src as i64, "src")?;
            zero(insn.off as i64, "off")?;
            if !matches!(insn.imm, 16 | 32 | 64) {
                return Err(Reason::BadEndianWidth(insn.imm));
            }
            return Ok(());
        }
        ALU_NEG => {
            if by_reg {
                return Err(Reason::UnknownOpcode(insn.code));
            }
            zero(insn.src as i64, "src")?;
            zero(insn.off as i64, "off")?;
            return zero(insn.imm as i64, "imm");
        }
        _ => {}
    }
    if insn.off != 0 {
        return Err(match (op, insn.off) {
            (ALU_DIV | ALU_MOD, 1) => Reason::UnsupportedExtension("signed division"),
            (ALU_MOV, 8 | 16 | 32) if by_reg => Reason::UnsupportedExtension("sign-extending move"),
            _ => Reason::ReservedField("off"),
        });
    }
    if by_reg {
        reg(insn.src)?;
        return zero(insn.imm as i64, "imm");
    }
    zero(insn.src as i64, "src")?;
    let width = if is64 { 64 } else { 32 };
    match op {
        ALU_LSH | ALU_RSH | ALU_ARSH if insn.imm < 0 || insn.imm >= width => {
            Err(Reason::ShiftOutOfRange(insn.imm))
        }
        ALU_DIV | ALU_MOD if insn.imm == 0 => Err(Reason::DivisionByZero),
        _ => Ok(()),
    }
}

fn check_jmp(insn: Insn) -> Result<(), Reason> {
    let is32 = insn.class() == CLASS_JMP32;
    let by_reg = insn.source() == SRC_X;
    match insn.op() {
        JMP_JA => {
            if is32 {
                return Err(Reason::UnsupportedExtension("32-bit unconditional jump"));
            }
            if by_reg {
                return Err(Reason::UnknownOpcode(insn.code));
            }
            zero(insn.dst as i64, "dst")?;
            zero(insn.src as i64, "src")?;
            zero(insn.imm as i64, "imm")
        }
        JMP_CALL => {
            if is32 || by_reg {
                return Err(Reason::UnknownOpcode(insn.code));
            }
            Err(match insn.src {
                0 if insn.imm == HELPER_TAIL_CALL => Reason::TailCall,
                0 => Reason::HelperCall(insn.imm),
                1 => Reason::LocalCall,
                2 => Reason::KfuncCall,
                _ => Reason::ReservedField("src"),
            })
        }
        JMP_EXIT => {
            if is32 || by_reg {
                return Err(Reason::UnknownOpcode(insn.code));
            }
            zero(insn.dst as i64, "dst")?;
            zero(insn.src as i64, "src")?;
            zero(insn.off as i64, "off")?;
            zero(insn.imm as i64, "imm")
        }
        0xe0 | 0xf0 => Err(Reason::UnknownOpcode(insn.code)),
        _ => {
            reg(insn.dst)?;
            if by_reg {
                reg(insn.src)?;
                zero(insn.imm as i64, "imm")
            } else {
                zero(insn.src as i64, "src")
            }
        }
    }
}
