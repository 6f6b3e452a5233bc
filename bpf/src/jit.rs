//! x86-64 JIT for verified programs.
//!
//! The output is position-independent machine code for
//! [`JitFn`]: `fn(ctx, regions, packet, packet_len) -> r0` under the
//! System V calling convention. Regions are reached through the table
//! pointer (kept in r12), the packet bounds and the context base live in
//! the native frame below the 512-byte eBPF stack, so the code embeds no
//! absolute address and can be copied anywhere.
//!
//! Spectre v1: every load whose address depends on a register offset
//! (`Access::Mem { masked: true }`, and every packet load) is clamped with
//! two `cmov`s to `[object start, object end - access size]` before it is
//! performed. `cmov` is a data dependency, not a prediction, so even when
//! the bounds-check branch that justified the access is mispredicted the
//! load stays inside the object. Clamping to the exact bounds (rather than
//! AND-ing with a power-of-two mask) keeps it inside objects of any size.
//! Constant-offset loads need no clamp: their address does not depend on
//! any value a misprediction could change (the verifier checks both sides
//! of every branch with the types the registers really hold).

use alloc::vec::Vec;

use crate::insn::{
    access_bytes, Insn, ALU_ADD, ALU_AND, ALU_ARSH, ALU_DIV, ALU_END, ALU_LSH, ALU_MOD, ALU_MOV, ALU_MUL,
    ALU_NEG, ALU_OR, ALU_RSH, ALU_SUB, ALU_XOR, CLASS_ALU, CLASS_ALU64, CLASS_JMP, CLASS_LD, CLASS_LDX,
    CLASS_ST, CLASS_STX, JMP_EXIT, JMP_JA, JMP_JEQ, JMP_JGE, JMP_JGT, JMP_JLE, JMP_JLT, JMP_JNE, JMP_JSET,
    JMP_JSGE, JMP_JSGT, JMP_JSLT, NUM_REGS, PSEUDO_REGION, SRC_X, STACK_SIZE,
};
use crate::program::{Access, VerifiedProgram};
use crate::reject::PtrKind;
use crate::x86::{
    Emitter, Reg, CC_A, CC_AE, CC_B, CC_BE, CC_E, CC_G, CC_GE, CC_L, CC_LE, CC_NE, EXT_ADD, EXT_AND, EXT_CMP,
    EXT_OR, EXT_SUB, EXT_XOR, OP_ADD, OP_AND, OP_CMP, OP_OR, OP_SUB, OP_TEST, OP_XOR, R10, R11, R12, R13,
    R14, R15, R8, R9, RAX, RBP, RBX, RCX, RDI, RDX, RSI, RSP, SHIFT_SAR, SHIFT_SHL, SHIFT_SHR, UNARY_DIV,
    UNARY_NEG,
};

/// Signature of JIT-compiled code. `regions` points to one base pointer per
/// declared region; `packet`/`packet_len` describe the packet (any value
/// when the program has no packet access). All memory must match the
/// program's spec as `interp::check_memory` describes.
pub type JitFn = unsafe extern "sysv64" fn(
    ctx: *const u8,
    regions: *const *const u8,
    packet: *const u8,
    packet_len: usize,
) -> u64;

/// eBPF register -> x86 register. r1-r5 sit in argument registers, r6-r9
/// and r10 (frame pointer, kept in rbp) in callee-saved ones.
const MAP: [Reg; NUM_REGS] = [RAX, RDI, RSI, RDX, RCX, R8, RBX, R13, R14, R15, RBP];
/// Holds the region table for the whole run.
const REGIONS: Reg = R12;
// Scratch registers: r9, r10, r11 are not eBPF-visible.

// Frame slots below the eBPF stack, relative to rbp.
const SLOT_PKT: i32 = -(STACK_SIZE as i32) - 8;
const SLOT_PKT_END: i32 = -(STACK_SIZE as i32) - 16;
const SLOT_CTX: i32 = -(STACK_SIZE as i32) - 24;
const FRAME: i32 = STACK_SIZE as i32 + 32;

const SAVED: [Reg; 6] = [RBP, RBX, R12, R13, R14, R15];

/// Compiles a verified program to x86-64 machine code.
pub fn compile(prog: &VerifiedProgram) -> Vec<u8> {
    let insns = prog.insns();
    let mut e = Emitter::default();
    prologue(&mut e);
    let mut starts = Vec::with_capacity(insns.len());
    let mut fixups: Vec<(usize, usize)> = Vec::new();
    let mut pc = 0;
    while pc < insns.len() {
        // Both slots of ld_imm64 map to its code; jumps never target the second.
        starts.push(e.pos());
        let insn = insns[pc];
        match insn.class() {
            CLASS_ALU | CLASS_ALU64 => alu(&mut e, insn),
            CLASS_LD => {
                ld_imm64(&mut e, insn, insns[pc + 1].imm);
                starts.push(e.pos());
                pc += 1;
            }
            CLASS_LDX => load(&mut e, prog, insn, prog.access()[pc]),
            CLASS_ST | CLASS_STX => store(&mut e, insn),
            _ => {
                if let Some(at) = jump(&mut e, insn) {
                    fixups.push((at, (pc as i64 + 1 + insn.off as i64) as usize));
                }
            }
        }
        pc += 1;
    }
    for (at, target) in fixups {
        e.patch(at, starts[target]);
    }
    e.buf
}

fn prologue(e: &mut Emitter) {
    for r in SAVED {
        e.push(r);
    }
    e.mov_rr(true, RBP, RSP);
    e.alu_ri(true, EXT_SUB, RSP, FRAME);
    e.mov_rr(true, REGIONS, RSI);
    e.store(8, RBP, SLOT_PKT, RDX);
    e.alu_rr(true, OP_ADD, RDX, RCX);
    e.store(8, RBP, SLOT_PKT_END, RDX);
    e.store(8, RBP, SLOT_CTX, RDI);
    // eBPF r1 (rdi) already holds the context pointer.
}

fn epilogue(e: &mut Emitter) {
    e.mov_rr(true, RSP, RBP);
    for r in SAVED.iter().rev() {
        e.pop(*r);
    }
    e.ret();
}

fn ld_imm64(e: &mut Emitter, insn: Insn, hi: i32) {
    let dst = MAP[insn.dst as usize];
    if insn.src == PSEUDO_REGION {
        e.load(8, dst, REGIONS, insn.imm * 8);
        if hi != 0 {
            e.alu_ri(true, EXT_ADD, dst, hi);
        }
    } else {
        e.mov_ri64(dst, insn.imm as u32 as u64 | (hi as u32 as u64) << 32);
    }
}

fn alu(e: &mut Emitter, insn: Insn) {
    let w = insn.class() == CLASS_ALU64;
    let dst = MAP[insn.dst as usize];
    let src = MAP[insn.src as usize];
    let by_reg = insn.source() == SRC_X;
    let imm = insn.imm;
    match insn.op() {
        op @ (ALU_ADD | ALU_SUB | ALU_AND | ALU_OR | ALU_XOR) => {
            let (rr, ri) = match op {
                ALU_ADD => (OP_ADD, EXT_ADD),
                ALU_SUB => (OP_SUB, EXT_SUB),
                ALU_AND => (OP_AND, EXT_AND),
                ALU_OR => (OP_OR, EXT_OR),
                _ => (OP_XOR, EXT_XOR),
            };
            if by_reg {
                e.alu_rr(w, rr, dst, src);
            } else {
                e.alu_ri(w, ri, dst, imm);
            }
        }
        ALU_MOV => match (by_reg, w) {
            (true, _) => e.mov_rr(w, dst, src),
            (false, true) => e.mov_ri64(dst, imm as i64 as u64),
            (false, false) => e.mov_ri32(dst, imm as u32),
        },
        ALU_MUL => {
            if by_reg {
                e.imul_rr(w, dst, src);
            } else {
                e.imul_ri(w, dst, imm);
            }
        }
        ALU_DIV | ALU_MOD => divide(e, insn, w, dst, src),
        op @ (ALU_LSH | ALU_RSH | ALU_ARSH) => {
            let ext = match op {
                ALU_LSH => SHIFT_SHL,
                ALU_RSH => SHIFT_SHR,
                _ => SHIFT_SAR,
            };
            if !by_reg {
                e.shift_ri(w, ext, dst, imm as u8);
            } else if src == RCX {
                e.shift_cl(w, ext, dst);
            } else {
                // The count must be in cl, which is eBPF r4: park r4 in r9.
                e.mov_rr(true, R9, RCX);
                e.mov_rr(true, RCX, src);
                let target = if dst == RCX { R9 } else { dst };
                e.shift_cl(w, ext, target);
                // Restores r4, or installs the result if r4 was the destination.
                e.mov_rr(true, RCX, R9);
            }
        }
        ALU_NEG => e.unary(w, UNARY_NEG, dst),
        ALU_END => match (by_reg, imm) {
            (false, 16) => e.movzx16(dst, dst),
            (false, 32) => e.mov_rr(false, dst, dst),
            (false, _) => {}
            (true, 16) => {
                e.rol16_8(dst);
                e.movzx16(dst, dst);
            }
            (true, 32) => e.bswap(false, dst),
            (true, _) => e.bswap(true, dst),
        },
        _ => e.trap(),
    }
}

/// Unsigned division: x86 `div` uses rdx:rax, which are eBPF r3 and r0,
/// so both are parked in scratch registers around it. A register divisor
/// of zero gives eBPF's result (quotient 0, remainder the dividend) rather
/// than a #DE fault: the verifier proves divisors non-zero, and this keeps
/// a verifier bug from becoming a kernel fault.
fn divide(e: &mut Emitter, insn: Insn, w: bool, dst: Reg, src: Reg) {
    let is_div = insn.op() == ALU_DIV;
    let zero = if insn.source() == SRC_X {
        e.mov_rr(true, R11, src);
        e.alu_rr(w, OP_TEST, R11, R11);
        Some(e.jcc(CC_E))
    } else {
        if w {
            e.mov_ri64(R11, insn.imm as i64 as u64);
        } else {
            e.mov_ri32(R11, insn.imm as u32);
        }
        None
    };
    e.mov_rr(true, R9, RAX);
    e.mov_rr(true, R10, RDX);
    // A 32-bit mov zero-extends, giving the 32-bit dividend.
    e.mov_rr(w, RAX, dst);
    e.alu_rr(false, OP_XOR, RDX, RDX);
    e.unary(w, UNARY_DIV, R11);
    let result = if is_div { RAX } else { RDX };
    e.mov_rr(true, R11, result);
    e.mov_rr(true, RAX, R9);
    e.mov_rr(true, RDX, R10);
    e.mov_rr(true, dst, R11);
    if let Some(at) = zero {
        let done = e.jmp();
        let here = e.pos();
        e.patch(at, here);
        if is_div {
            e.mov_ri32(dst, 0);
        } else {
            // The remainder is the dividend (its low half for ALU32).
            e.mov_rr(w, dst, dst);
        }
        let here = e.pos();
        e.patch(done, here);
    }
}

fn load(e: &mut Emitter, prog: &VerifiedProgram, insn: Insn, access: Access) {
    let dst = MAP[insn.dst as usize];
    let src = MAP[insn.src as usize];
    let size = access_bytes(insn.size_bits());
    let off = insn.off as i32;
    match access {
        Access::PacketStart => e.load(8, dst, RBP, SLOT_PKT),
        Access::PacketEnd => e.load(8, dst, RBP, SLOT_PKT_END),
        Access::Mem { kind, masked } if masked || kind == PtrKind::Packet => {
            // r11 = address, r9 = lowest allowed, r10 = highest allowed.
            e.lea(R11, src, off);
            let spec = prog.spec();
            let room = |object: u32| object as i32 - size as i32;
            match kind {
                PtrKind::Ctx => {
                    e.load(8, R9, RBP, SLOT_CTX);
                    e.lea(R10, R9, room(spec.ctx_size));
                }
                PtrKind::Region(i) => {
                    e.load(8, R9, REGIONS, i as i32 * 8);
                    e.lea(R10, R9, room(spec.regions[i as usize]));
                }
                _ => {
                    e.load(8, R9, RBP, SLOT_PKT);
                    e.load(8, R10, RBP, SLOT_PKT_END);
                    e.lea(R10, R10, -(size as i32));
                }
            }
            e.alu_rr(true, OP_CMP, R11, R10);
            e.cmov(CC_A, R11, R10);
            e.alu_rr(true, OP_CMP, R11, R9);
            e.cmov(CC_B, R11, R9);
            e.load(size, dst, R11, 0);
        }
        Access::Mem { .. } => e.load(size, dst, src, off),
        // Not reached by any verified path.
        Access::None => e.trap(),
    }
}

fn store(e: &mut Emitter, insn: Insn) {
    let base = MAP[insn.dst as usize];
    let size = access_bytes(insn.size_bits());
    if insn.class() == CLASS_STX {
        e.store(size, base, insn.off as i32, MAP[insn.src as usize]);
    } else {
        e.store_imm(size, base, insn.off as i32, insn.imm);
    }
}

/// Emits a jump; returns the rel32 position to patch, if any.
fn jump(e: &mut Emitter, insn: Insn) -> Option<usize> {
    let op = insn.op();
    match op {
        JMP_JA => return Some(e.jmp()),
        JMP_EXIT => {
            epilogue(e);
            return None;
        }
        _ => {}
    }
    let w = insn.class() == CLASS_JMP;
    let dst = MAP[insn.dst as usize];
    let by_reg = insn.source() == SRC_X;
    match (op == JMP_JSET, by_reg) {
        (true, true) => e.alu_rr(w, OP_TEST, dst, MAP[insn.src as usize]),
        (true, false) => e.test_ri(w, dst, insn.imm),
        (false, true) => e.alu_rr(w, OP_CMP, dst, MAP[insn.src as usize]),
        (false, false) => e.alu_ri(w, EXT_CMP, dst, insn.imm),
    }
    let cc = match op {
        JMP_JEQ => CC_E,
        JMP_JNE | JMP_JSET => CC_NE,
        JMP_JGT => CC_A,
        JMP_JGE => CC_AE,
        JMP_JLT => CC_B,
        JMP_JLE => CC_BE,
        JMP_JSGT => CC_G,
        JMP_JSGE => CC_GE,
        JMP_JSLT => CC_L,
        _ => CC_LE,
    };
    Some(e.jcc(cc))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::Asm;
    use crate::spec::ProgramSpec;
    use crate::verifier::verify;

    fn count_cmovs(code: &[u8]) -> usize {
        code.windows(2).filter(|w| w[0] == 0x0f && (w[1] == 0x40 | CC_A || w[1] == 0x40 | CC_B)).count()
    }

    /// Division by a zero register gives eBPF's result, as the
    /// interpreter's `alu64`/`alu32` define it, instead of faulting. The
    /// verifier never accepts such a program, so it is built by hand.
    #[test]
    fn division_by_zero_register_does_not_fault() {
        use crate::insn::{alu32, alu64};
        use crate::program::Access;
        use alloc::vec;
        let dividend = 0xdead_beef_1234_5678u64;
        for op in [ALU_DIV, ALU_MOD] {
            for w in [true, false] {
                let mut a = Asm::new();
                a.ld_imm64(0, dividend).mov64_imm(3, 0);
                if w {
                    a.alu64_reg(op, 0, 3);
                } else {
                    a.alu32_reg(op, 0, 3);
                }
                a.exit();
                let insns = a.finish().unwrap();
                let access = vec![Access::None; insns.len()];
                let prog = VerifiedProgram { insns, spec: ProgramSpec::new(8), access };
                let exe = crate::test_exec::Executable::new(&compile(&prog));
                let want = if w { alu64(op, dividend, 0) } else { alu32(op, dividend, 0) };
                assert_eq!(exe.call(&[0; 8], &[], &[]), want, "op {op:#x} 64-bit {w}");
            }
        }
    }

    /// Variable-offset loads are clamped; constant-offset loads are not.
    #[test]
    fn clamps_only_variable_loads() {
        let spec = ProgramSpec::new(8).with_regions(&[64]);
        let mut a = Asm::new();
        let out = a.label();
        a.mov64_imm(0, 0)
            .ldx_dw(2, 1, 0)
            .jgt_imm(2, 56, out)
            .ld_region(3, 0, 0)
            .ldx_dw(4, 3, 8)
            .add64_reg(3, 2)
            .ldx_dw(0, 3, 0)
            .bind(out)
            .exit();
        let prog = verify(&a.finish().unwrap(), &spec).unwrap();
        assert_eq!(count_cmovs(&compile(&prog)), 2);

        let mut a = Asm::new();
        a.ld_region(3, 0, 0).ldx_dw(0, 3, 56).exit();
        let prog = verify(&a.finish().unwrap(), &spec).unwrap();
        assert_eq!(count_cmovs(&compile(&prog)), 0);
    }
}
