//! Reference interpreter: the semantic oracle for the JIT.
//!
//! Registers hold real host addresses for pointers, exactly as JIT-compiled
//! code does, but every load and store is resolved against the object the
//! verifier said it touches (context, stack, a region, the packet) and
//! bounds-checked before any byte is read. An access outside that object is
//! reported as a `Violation` instead of being performed, so this is both
//! the normal interpreter and the guard used by the soundness tests. It
//! contains no `unsafe` code.

use crate::insn::*;
use crate::program::{Access, VerifiedProgram};
use crate::reject::PtrKind;

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

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunError {
    /// The memory does not match the program's spec.
    BadInput(&'static str),
    /// An access outside the object the verifier assigned to the
    /// instruction. It was not performed. Seeing this means the verifier
    /// accepted an unsafe program.
    Violation { index: usize, addr: u64, size: u32 },
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

/// Runs a verified program and returns r0.
pub fn run(prog: &VerifiedProgram, mem: &Memory) -> Result<u64, RunError> {
    check_memory(prog, mem)?;
    let insns = prog.insns();
    let spec = prog.spec();
    let mut stack = [0u8; STACK_SIZE];
    let stack_base = stack.as_ptr() as u64;
    let packet_base = mem.packet.as_ptr() as u64;
    let mut regs = [0u64; NUM_REGS];
    regs[1] = mem.ctx.as_ptr() as u64;
    regs[10] = stack_base + STACK_SIZE as u64;

    let mut pc = 0;
    loop {
        let insn = insns[pc];
        let (dst, src) = (insn.dst as usize, insn.src as usize);
        let imm = insn.imm as i64 as u64;
        let mut next = pc + 1;
        match insn.class() {
            CLASS_ALU | CLASS_ALU64 => {
                let b = if insn.source() == SRC_X { regs[src] } else { imm };
                regs[dst] = match (insn.op(), insn.class()) {
                    (ALU_END, _) => endian(regs[dst], insn.imm, insn.source() == SRC_X),
                    (op, CLASS_ALU64) => alu64(op, regs[dst], b),
                    (op, _) => alu32(op, regs[dst], b),
                };
            }
            CLASS_LD => {
                let hi = insns[pc + 1].imm;
                regs[dst] = if insn.src == PSEUDO_REGION {
                    let region = mem.regions[insn.imm as usize];
                    (region.as_ptr() as u64).wrapping_add(hi as i64 as u64)
                } else {
                    insn.imm as u32 as u64 | (hi as u32 as u64) << 32
                };
                next = pc + 2;
            }
            CLASS_LDX => {
                let size = access_bytes(insn.size_bits());
                let addr = regs[src].wrapping_add(insn.off as i64 as u64);
                regs[dst] = match prog.access()[pc] {
                    Access::PacketStart => packet_base,
                    Access::PacketEnd => packet_base + mem.packet.len() as u64,
                    Access::Mem { kind, .. } => {
                        let object: &[u8] = match kind {
                            PtrKind::Ctx => &mem.ctx[..spec.ctx_size as usize],
                            PtrKind::Stack => &stack,
                            PtrKind::Region(i) => {
                                &mem.regions[i as usize][..spec.regions[i as usize] as usize]
                            }
                            PtrKind::Packet => mem.packet,
                            PtrKind::PacketEnd => &[],
                        };
                        let bytes = locate(object, addr, size).ok_or(RunError::Violation {
                            index: pc,
                            addr,
                            size,
                        })?;
                        read_le(bytes)
                    }
                    Access::None => return Err(RunError::Violation { index: pc, addr, size }),
                };
            }
            CLASS_ST | CLASS_STX => {
                let size = access_bytes(insn.size_bits());
                let addr = regs[dst].wrapping_add(insn.off as i64 as u64);
                let value = if insn.class() == CLASS_STX { regs[src] } else { imm };
                let is_stack = matches!(prog.access()[pc], Access::Mem { kind: PtrKind::Stack, .. });
                let start = addr.wrapping_sub(stack_base);
                if !is_stack || start > (STACK_SIZE as u64).saturating_sub(size as u64) {
                    return Err(RunError::Violation { index: pc, addr, size });
                }
                let start = start as usize;
                stack[start..start + size as usize].copy_from_slice(&value.to_le_bytes()[..size as usize]);
            }
            _ => match insn.op() {
                JMP_EXIT => return Ok(regs[0]),
                op => {
                    let b = if insn.source() == SRC_X { regs[src] } else { imm };
                    if jump_taken(op, regs[dst], b, insn.class() == CLASS_JMP32) {
                        next = (pc as i64 + 1 + insn.off as i64) as usize;
                    }
                }
            },
        }
        pc = next;
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
