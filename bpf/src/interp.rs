//! Reference interpreter: the semantic oracle for the JIT and the verifier.
//!
//! Registers hold real host addresses for pointers, exactly as JIT-compiled
//! code does, but every load and store is resolved against the object the
//! verifier said it touches (context, stack, a region, the packet) and
//! bounds-checked before any byte is read. Beside the values it keeps a
//! *shadow* of what each register and stack byte really is on this run
//! (uninitialised, scalar, or which kind of pointer), and reports as a
//! `RunError` every run-time fact that contradicts what the verifier
//! guarantees (`docs/downloaded-code.md`): an access outside its object, a
//! division by zero, a read of a register or stack byte never written, a
//! pointer used where only a scalar may go (ALU, comparisons, partial
//! spills and fills) or returned in r0. A violation is reported instead of
//! performed, so this is both the normal interpreter and the guard used by
//! the soundness tests and the fuzzing campaign. It contains no `unsafe`.

use crate::insn::{
    access_bytes, alu32, alu64, endian, jump_taken, Insn, ALU_ADD, ALU_DIV, ALU_END, ALU_MOD, ALU_MOV,
    ALU_NEG, ALU_SUB, CLASS_ALU, CLASS_ALU64, CLASS_JMP32, CLASS_LD, CLASS_LDX, CLASS_ST, CLASS_STX,
    JMP_EXIT, JMP_JA, JMP_JSET, NUM_REGS, PSEUDO_REGION, SRC_X, STACK_SIZE,
};
use crate::program::{Access, VerifiedProgram};
use crate::reject::PtrKind;
use crate::verifier::{Beliefs, Concrete};

/// The memory a program runs against.
#[derive(Clone, Copy, Debug)]
pub struct Memory<'a> {
    /// At least `spec.ctx_size` bytes.
    pub ctx: &'a [u8],
    /// One slice per declared region, each at least its declared size.
    pub regions: &'a [&'a [u8]],
    /// The packet (empty when the program has no packet access).
    pub packet: &'a [u8],
}

/// Why a run stopped. Every variant but `BadInput` means the verifier
/// accepted a program that breaks one of its guarantees.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunError {
    /// The memory does not match the program's spec.
    BadInput(&'static str),
    /// An access outside the object the verifier assigned to the
    /// instruction. It was not performed.
    Violation { index: usize, addr: u64, size: u32 },
    /// A division or modulo by zero was about to execute.
    DivisionByZero { index: usize },
    /// A register read before anything was written to it.
    UninitRegister { index: usize, reg: u8 },
    /// A stack byte (offset from r10) read before this run wrote it.
    UninitStack { index: usize, off: i64 },
    /// A register whose run-time type does not fit its use: a pointer in
    /// scalar arithmetic, a comparison or a partial spill, a scalar or a
    /// pointer of another kind used as a load/store base, part of a
    /// spilled pointer read back as data.
    TypeConfusion { index: usize, reg: u8 },
    /// `exit` with a pointer in r0.
    PointerLeak { index: usize },
    /// Before instruction `index`, register `reg` held a value (or type)
    /// the verifier did not allow for there (`run_checked` only).
    Unforeseen { index: usize, reg: u8 },
}

impl RunError {
    /// True when the error can only come from an unsound verifier (not
    /// from memory that does not match the spec).
    pub fn is_verifier_bug(&self) -> bool {
        !matches!(self, RunError::BadInput(_))
    }
}

/// What a register or spilled stack byte really holds on this run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tag {
    Uninit,
    Scalar,
    Ptr(PtrKind),
}

/// What a stack byte really holds: `Ptr(kind, i)` is byte `i` of a
/// spilled pointer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Byte {
    Uninit,
    Data,
    Ptr(PtrKind, u8),
}

/// Checks that `mem` provides everything the spec promises the program.
pub fn check_memory(prog: &VerifiedProgram, mem: &Memory) -> Result<(), RunError> {
    let spec = prog.spec();
    if mem.ctx.len() < spec.ctx_size as usize {
        return Err(RunError::BadInput("context shorter than declared"));
    }
    if mem.regions.len() != spec.regions.len() {
        return Err(RunError::BadInput("wrong number of regions"));
    }
    if mem.regions.iter().zip(&spec.regions).any(|(r, &size)| r.len() < size as usize) {
        return Err(RunError::BadInput("region shorter than declared"));
    }
    Ok(())
}

/// One run's machine: values plus their shadow types.
struct Machine<'m> {
    prog: &'m VerifiedProgram,
    mem: &'m Memory<'m>,
    regs: [u64; NUM_REGS],
    tags: [Tag; NUM_REGS],
    stack: [u8; STACK_SIZE],
    shadow: [Byte; STACK_SIZE],
    pc: usize,
}

/// Runs a verified program and returns r0.
pub fn run(prog: &VerifiedProgram, mem: &Memory) -> Result<u64, RunError> {
    run_inner(prog, mem, None)
}

/// `run`, also checking before every instruction that each register holds
/// what the verifier believed it could (`verify_with_beliefs`).
pub fn run_checked(prog: &VerifiedProgram, mem: &Memory, beliefs: &Beliefs) -> Result<u64, RunError> {
    run_inner(prog, mem, Some(beliefs))
}

fn run_inner(prog: &VerifiedProgram, mem: &Memory, beliefs: Option<&Beliefs>) -> Result<u64, RunError> {
    check_memory(prog, mem)?;
    let mut m = Machine {
        prog,
        mem,
        regs: [0; NUM_REGS],
        tags: [Tag::Uninit; NUM_REGS],
        stack: [0; STACK_SIZE],
        shadow: [Byte::Uninit; STACK_SIZE],
        pc: 0,
    };
    m.regs[1] = mem.ctx.as_ptr() as u64;
    m.tags[1] = Tag::Ptr(PtrKind::Ctx);
    m.regs[10] = m.stack_base() + STACK_SIZE as u64;
    m.tags[10] = Tag::Ptr(PtrKind::Stack);
    let insns = prog.insns();
    loop {
        if let Some(b) = beliefs {
            m.check(b)?;
        }
        let insn = insns[m.pc];
        let next = match insn.class() {
            CLASS_ALU | CLASS_ALU64 => m.alu(insn).map(|_| m.pc + 1)?,
            CLASS_LD => {
                let hi = insns[m.pc + 1].imm;
                let (value, tag) = if insn.src == PSEUDO_REGION {
                    let region = mem.regions[insn.imm as usize];
                    let base = region.as_ptr() as u64;
                    (base.wrapping_add(hi as i64 as u64), Tag::Ptr(PtrKind::Region(insn.imm as u32)))
                } else {
                    (insn.imm as u32 as u64 | (hi as u32 as u64) << 32, Tag::Scalar)
                };
                m.set(insn.dst, value, tag);
                m.pc + 2
            }
            CLASS_LDX => m.load(insn).map(|_| m.pc + 1)?,
            CLASS_ST | CLASS_STX => m.store(insn).map(|_| m.pc + 1)?,
            _ => match insn.op() {
                JMP_EXIT => {
                    return match m.read(0)? {
                        Tag::Scalar => Ok(m.regs[0]),
                        _ => Err(RunError::PointerLeak { index: m.pc }),
                    }
                }
                JMP_JA => (m.pc as i64 + 1 + insn.off as i64) as usize,
                op => {
                    let taken = m.jump(insn, op)?;
                    if taken {
                        (m.pc as i64 + 1 + insn.off as i64) as usize
                    } else {
                        m.pc + 1
                    }
                }
            },
        };
        m.pc = next;
    }
}

impl Machine<'_> {
    fn stack_base(&self) -> u64 {
        self.stack.as_ptr() as u64
    }

    /// Where offsets into an object of this kind count from.
    fn origin(&self, kind: PtrKind) -> u64 {
        let packet = self.mem.packet.as_ptr() as u64;
        match kind {
            PtrKind::Ctx => self.mem.ctx.as_ptr() as u64,
            PtrKind::Stack => self.stack_base() + STACK_SIZE as u64,
            PtrKind::Region(i) => self.mem.regions[i as usize].as_ptr() as u64,
            PtrKind::Packet => packet,
            PtrKind::PacketEnd => packet + self.mem.packet.len() as u64,
        }
    }

    /// Every register against the verifier's beliefs at this instruction.
    fn check(&self, beliefs: &Beliefs) -> Result<(), RunError> {
        for (r, (&value, &tag)) in self.regs.iter().zip(&self.tags).enumerate() {
            let c = match tag {
                Tag::Uninit => Concrete::Uninit,
                Tag::Scalar => Concrete::Scalar(value),
                Tag::Ptr(kind) => {
                    Concrete::Ptr { kind, offset: value.wrapping_sub(self.origin(kind)) as i64 }
                }
            };
            if !beliefs.admits(self.pc, r, c) {
                return Err(RunError::Unforeseen { index: self.pc, reg: r as u8 });
            }
        }
        Ok(())
    }

    fn confused(&self, reg: u8) -> RunError {
        RunError::TypeConfusion { index: self.pc, reg }
    }

    fn set(&mut self, reg: u8, value: u64, tag: Tag) {
        self.regs[reg as usize] = value;
        self.tags[reg as usize] = tag;
    }

    /// The shadow type of a register that must have been written.
    fn read(&self, reg: u8) -> Result<Tag, RunError> {
        match self.tags[reg as usize] {
            Tag::Uninit => Err(RunError::UninitRegister { index: self.pc, reg }),
            t => Ok(t),
        }
    }

    /// A register that must hold a scalar.
    fn scalar(&self, reg: u8) -> Result<u64, RunError> {
        match self.read(reg)? {
            Tag::Scalar => Ok(self.regs[reg as usize]),
            _ => Err(self.confused(reg)),
        }
    }

    fn alu(&mut self, insn: Insn) -> Result<(), RunError> {
        let is64 = insn.class() == CLASS_ALU64;
        let op = insn.op();
        let (dst, src) = (insn.dst, insn.src);
        let by_reg = insn.source() == SRC_X;
        if op == ALU_END || op == ALU_NEG {
            let a = self.scalar(dst)?;
            let r = match op {
                ALU_END => endian(a, insn.imm, by_reg),
                _ if is64 => alu64(op, a, 0),
                _ => alu32(op, a, 0),
            };
            self.set(dst, r, Tag::Scalar);
            return Ok(());
        }
        let (b, tb) = if by_reg {
            (self.regs[src as usize], self.read(src)?)
        } else {
            (insn.imm as i64 as u64, Tag::Scalar)
        };
        if op == ALU_MOV {
            // A 32-bit move would truncate a pointer into a scalar.
            if !is64 && tb != Tag::Scalar {
                return Err(self.confused(src));
            }
            let r = if is64 { b } else { alu32(op, 0, b) };
            self.set(dst, r, tb);
            return Ok(());
        }
        let a = self.regs[dst as usize];
        let ta = self.read(dst)?;
        // The register blamed when the operand types do not fit.
        let culprit = if matches!(ta, Tag::Ptr(_)) { dst } else { src };
        let tag = match (ta, tb) {
            (Tag::Scalar, Tag::Scalar) => Tag::Scalar,
            _ if !is64 => return Err(self.confused(culprit)),
            (Tag::Ptr(k), Tag::Scalar) | (Tag::Scalar, Tag::Ptr(k))
                if op == ALU_ADD && k != PtrKind::PacketEnd =>
            {
                Tag::Ptr(k)
            }
            (Tag::Ptr(k), Tag::Scalar) if op == ALU_SUB && k != PtrKind::PacketEnd => Tag::Ptr(k),
            // Distances inside the packet reveal no address.
            (Tag::Ptr(PtrKind::Packet | PtrKind::PacketEnd), Tag::Ptr(PtrKind::Packet)) if op == ALU_SUB => {
                Tag::Scalar
            }
            _ => return Err(self.confused(culprit)),
        };
        if op == ALU_DIV || op == ALU_MOD {
            let divisor = if is64 { b } else { b as u32 as u64 };
            if divisor == 0 {
                return Err(RunError::DivisionByZero { index: self.pc });
            }
        }
        let r = if is64 { alu64(op, a, b) } else { alu32(op, a, b) };
        self.set(dst, r, tag);
        Ok(())
    }

    /// Whether a conditional jump is taken; only scalars, or packet
    /// pointers with 64-bit ordered jumps, may be compared.
    fn jump(&self, insn: Insn, op: u8) -> Result<bool, RunError> {
        let is32 = insn.class() == CLASS_JMP32;
        let ta = self.read(insn.dst)?;
        let (b, tb) = if insn.source() == SRC_X {
            (self.regs[insn.src as usize], self.read(insn.src)?)
        } else {
            (insn.imm as i64 as u64, Tag::Scalar)
        };
        let packet = |t| matches!(t, Tag::Ptr(PtrKind::Packet | PtrKind::PacketEnd));
        let ok = match (ta, tb) {
            (Tag::Scalar, Tag::Scalar) => true,
            (a, b) => packet(a) && packet(b) && !is32 && op != JMP_JSET,
        };
        if !ok {
            let culprit = if matches!(ta, Tag::Ptr(_)) { insn.dst } else { insn.src };
            return Err(self.confused(culprit));
        }
        Ok(jump_taken(op, self.regs[insn.dst as usize], b, is32))
    }

    /// The base register of a memory instruction, which must be a pointer
    /// of the kind the verifier recorded.
    fn base(&self, reg: u8, kind: PtrKind) -> Result<u64, RunError> {
        match self.read(reg)? {
            Tag::Ptr(k) if k == kind => Ok(self.regs[reg as usize]),
            _ => Err(self.confused(reg)),
        }
    }

    fn load(&mut self, insn: Insn) -> Result<(), RunError> {
        let size = access_bytes(insn.size_bits());
        let (src, pc) = (insn.src, self.pc);
        let spec = self.prog.spec();
        let mem = self.mem;
        let (value, tag) = match self.prog.access()[pc] {
            access @ (Access::PacketStart | Access::PacketEnd) => {
                // The verifier promised a load of exactly the bound field.
                let base = self.base(src, PtrKind::Ctx)?;
                let addr = base.wrapping_add(insn.off as i64 as u64);
                let fields = spec.packet.ok_or(RunError::Violation { index: pc, addr, size })?;
                let (field, value, kind) = match access {
                    Access::PacketStart => (fields.data_off, 0, PtrKind::Packet),
                    _ => (fields.data_end_off, mem.packet.len() as u64, PtrKind::PacketEnd),
                };
                if addr != mem.ctx.as_ptr() as u64 + field as u64 || size != fields.width {
                    return Err(RunError::Violation { index: pc, addr, size });
                }
                (mem.packet.as_ptr() as u64 + value, Tag::Ptr(kind))
            }
            Access::Mem { kind: PtrKind::Stack, .. } => {
                let addr = self.base(src, PtrKind::Stack)?.wrapping_add(insn.off as i64 as u64);
                let start = self.stack_index(addr, size)?;
                self.stack_load(start, size, insn.dst)?
            }
            Access::Mem { kind, .. } => {
                let addr = self.base(src, kind)?.wrapping_add(insn.off as i64 as u64);
                let object: &[u8] = match kind {
                    PtrKind::Ctx => &mem.ctx[..spec.ctx_size as usize],
                    PtrKind::Region(i) => &mem.regions[i as usize][..spec.regions[i as usize] as usize],
                    PtrKind::Packet => mem.packet,
                    PtrKind::Stack | PtrKind::PacketEnd => &[],
                };
                let bytes =
                    locate(object, addr, size).ok_or(RunError::Violation { index: pc, addr, size })?;
                (read_le(bytes), Tag::Scalar)
            }
            Access::None => {
                let addr = self.regs[src as usize].wrapping_add(insn.off as i64 as u64);
                return Err(RunError::Violation { index: pc, addr, size });
            }
        };
        self.set(insn.dst, value, tag);
        Ok(())
    }

    /// Index into the stack of an access of `size` bytes at `addr`.
    fn stack_index(&self, addr: u64, size: u32) -> Result<usize, RunError> {
        let start = addr.wrapping_sub(self.stack_base());
        if start > (STACK_SIZE - size as usize) as u64 {
            return Err(RunError::Violation { index: self.pc, addr, size });
        }
        Ok(start as usize)
    }

    /// Reads stack bytes: all must have been written, and bytes of a
    /// spilled pointer come back only as that whole pointer.
    fn stack_load(&self, start: usize, size: u32, dst: u8) -> Result<(u64, Tag), RunError> {
        let bytes = &self.shadow[start..start + size as usize];
        if let Some(i) = bytes.iter().position(|b| *b == Byte::Uninit) {
            let off = (start + i) as i64 - STACK_SIZE as i64;
            return Err(RunError::UninitStack { index: self.pc, off });
        }
        let tag = match bytes[0] {
            Byte::Ptr(kind, 0) if size == 8 && (1..8).all(|i| bytes[i] == Byte::Ptr(kind, i as u8)) => {
                Tag::Ptr(kind)
            }
            _ if bytes.iter().any(|b| matches!(b, Byte::Ptr(..))) => return Err(self.confused(dst)),
            _ => Tag::Scalar,
        };
        Ok((read_le(&self.stack[start..start + size as usize]), tag))
    }

    fn store(&mut self, insn: Insn) -> Result<(), RunError> {
        let size = access_bytes(insn.size_bits());
        let (value, tag) = if insn.class() == CLASS_STX {
            (self.regs[insn.src as usize], self.read(insn.src)?)
        } else {
            (insn.imm as i64 as u64, Tag::Scalar)
        };
        let is_stack = matches!(self.prog.access()[self.pc], Access::Mem { kind: PtrKind::Stack, .. });
        if !is_stack {
            let addr = self.regs[insn.dst as usize].wrapping_add(insn.off as i64 as u64);
            return Err(RunError::Violation { index: self.pc, addr, size });
        }
        let addr = self.base(insn.dst, PtrKind::Stack)?.wrapping_add(insn.off as i64 as u64);
        let start = self.stack_index(addr, size)?;
        let end = start + size as usize;
        match tag {
            Tag::Ptr(kind) if size == 8 => {
                for (i, b) in self.shadow[start..end].iter_mut().enumerate() {
                    *b = Byte::Ptr(kind, i as u8);
                }
            }
            Tag::Ptr(_) => return Err(self.confused(insn.src)),
            _ => self.shadow[start..end].fill(Byte::Data),
        }
        self.stack[start..end].copy_from_slice(&value.to_le_bytes()[..size as usize]);
        Ok(())
    }
}

/// The `size` bytes at host address `addr` if they lie inside `object`.
fn locate(object: &[u8], addr: u64, size: u32) -> Option<&[u8]> {
    let start = addr.checked_sub(object.as_ptr() as u64)?;
    let end = start.checked_add(size as u64)?;
    if end > object.len() as u64 {
        return None;
    }
    Some(&object[start as usize..end as usize])
}

fn read_le(bytes: &[u8]) -> u64 {
    let mut buf = [0u8; 8];
    buf[..bytes.len()].copy_from_slice(bytes);
    u64::from_le_bytes(buf)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::Asm;
    use crate::spec::{PacketFields, ProgramSpec};
    use alloc::vec::Vec;

    const CTX: Access = Access::Mem { kind: PtrKind::Ctx, masked: false };
    const STACK: Access = Access::Mem { kind: PtrKind::Stack, masked: false };

    /// Runs a program the verifier never saw, with hand-written access
    /// annotations (one per memory instruction, in order), to check that
    /// the oracle reports what an unsound verifier would let through.
    fn oracle(f: impl FnOnce(&mut Asm), accesses: &[Access], ctx0: u8) -> Result<u64, RunError> {
        let mut a = Asm::new();
        f(&mut a);
        let insns = a.finish().unwrap();
        let mut it = accesses.iter();
        let access: Vec<Access> = insns
            .iter()
            .map(|i| match i.class() {
                CLASS_LDX | CLASS_ST | CLASS_STX => *it.next().expect("annotation"),
                _ => Access::None,
            })
            .collect();
        let spec = ProgramSpec::new(16).with_packet(PacketFields { data_off: 8, data_end_off: 12, width: 4 });
        let prog = VerifiedProgram { insns, spec, access };
        let mut ctx = [0u8; 16];
        ctx[0] = ctx0;
        run(&prog, &Memory { ctx: &ctx, regions: &[], packet: &[1, 2, 3] })
    }

    #[test]
    fn reports_division_by_zero() {
        let div = |a: &mut Asm| {
            a.ldx_b(2, 1, 0).mov64_imm(0, 5).mod32_reg(0, 2).exit();
        };
        assert_eq!(oracle(div, &[CTX], 3), Ok(2));
        assert_eq!(oracle(div, &[CTX], 0), Err(RunError::DivisionByZero { index: 2 }));
    }

    #[test]
    fn reports_uninitialised_registers_and_stack() {
        let r = oracle(
            |a| {
                a.mov64_reg(0, 2).exit();
            },
            &[],
            0,
        );
        assert_eq!(r, Err(RunError::UninitRegister { index: 0, reg: 2 }));
        let r = oracle(
            |a| {
                a.st_b(10, -5, 1).ldx_h(0, 10, -6).exit();
            },
            &[STACK, STACK],
            0,
        );
        assert_eq!(r, Err(RunError::UninitStack { index: 1, off: -6 }));
        let r = oracle(
            |a| {
                a.st_b(10, -6, 1).st_b(10, -5, 2).ldx_h(0, 10, -6).exit();
            },
            &[STACK; 3],
            0,
        );
        assert_eq!(r, Ok(0x201));
    }

    #[test]
    fn reports_pointer_misuse() {
        assert_eq!(
            oracle(
                |a| {
                    a.mov64_reg(0, 1).exit();
                },
                &[],
                0
            ),
            Err(RunError::PointerLeak { index: 1 })
        );
        let confused = |reg| Err(RunError::TypeConfusion { index: 1, reg });
        // Arithmetic and comparisons that would reveal or truncate an address.
        assert_eq!(
            oracle(
                |a| {
                    a.mov64_imm(0, 0).mul64_reg(0, 1).exit();
                },
                &[],
                0
            ),
            confused(1)
        );
        assert_eq!(
            oracle(
                |a| {
                    a.mov64_imm(0, 0).add32_reg(0, 1).exit();
                },
                &[],
                0
            ),
            confused(1)
        );
        assert_eq!(
            oracle(
                |a| {
                    a.mov64_imm(0, 0).mov32_reg(0, 1).exit();
                },
                &[],
                0
            ),
            confused(1)
        );
        let cmp = |a: &mut Asm| {
            let l = a.label();
            a.mov64_imm(0, 0).jeq_imm(1, 0, l).bind(l).exit();
        };
        assert_eq!(oracle(cmp, &[], 0), confused(1));
        // A scalar, or a pointer of another kind, as a load base.
        assert_eq!(
            oracle(
                |a| {
                    a.mov64_imm(2, 64).ldx_b(0, 2, 0).exit();
                },
                &[CTX],
                0
            ),
            confused(2)
        );
        assert_eq!(
            oracle(
                |a| {
                    a.mov64_imm(0, 0).ldx_b(0, 10, -1).exit();
                },
                &[CTX],
                0
            ),
            confused(10)
        );
        // Partial spills and fills of a pointer.
        assert_eq!(
            oracle(
                |a| {
                    a.mov64_imm(0, 0).stx_w(10, -8, 1).exit();
                },
                &[STACK],
                0
            ),
            confused(1)
        );
        let partial_fill = |a: &mut Asm| {
            a.stx_dw(10, -8, 1).ldx_w(0, 10, -4).exit();
        };
        assert_eq!(oracle(partial_fill, &[STACK, STACK], 0), confused(0));
        // A whole fill gives the pointer back.
        let fill = |a: &mut Asm| {
            a.stx_dw(10, -8, 1).mov64_imm(1, 0).ldx_dw(2, 10, -8).ldx_b(0, 2, 0).exit();
        };
        assert_eq!(oracle(fill, &[STACK, STACK, CTX], 9), Ok(9));
    }

    #[test]
    fn packet_field_loads_must_hit_the_field() {
        let load = |off| {
            move |a: &mut Asm| {
                a.ldx_w(2, 1, off).ldx_b(0, 2, 0).exit();
            }
        };
        let packet = Access::Mem { kind: PtrKind::Packet, masked: false };
        assert_eq!(oracle(load(8), &[Access::PacketStart, packet], 0), Ok(1));
        let r = oracle(load(12), &[Access::PacketStart, packet], 0);
        assert!(matches!(r, Err(RunError::Violation { index: 0, size: 4, .. })), "{r:?}");
        let r = oracle(load(8), &[Access::PacketEnd, packet], 0);
        assert!(matches!(r, Err(RunError::Violation { index: 0, .. })), "{r:?}");
        // Packet pointers compare with each other, never with scalars.
        let cmp = |a: &mut Asm| {
            let l = a.label();
            a.ldx_w(2, 1, 8).ldx_w(3, 1, 12).mov64_imm(0, 0).jgt_reg(2, 3, l).mov64_imm(0, 1).bind(l).exit();
        };
        assert_eq!(oracle(cmp, &[Access::PacketStart, Access::PacketEnd], 0), Ok(1));
    }
}
