//! The verifier: structural checks (`cfg`), then a depth-first walk over
//! every path of the loop-free program with an abstract state per path.
//!
//! Soundness notes:
//! * Both edges of every conditional jump are explored, even when the
//!   value ranges say one of them is impossible (the impossible edge keeps
//!   the unrefined state and is marked speculative). A mispredicted branch
//!   therefore never runs code the verifier has not checked with the types
//!   the registers really hold. Only architectural faults (division by
//!   zero) are not checked on speculative paths.
//! * Paths are explored in instruction order with a bounded set of states
//!   per join point (path-sensitive up to `MAX_STATES_PER_JOIN`, merged
//!   beyond), so work is at most that bound times the program length, and
//!   is additionally capped by `ProgramSpec::max_steps`. A merged state
//!   describes both paths (`State::join`), so everything checked against
//!   it must hold over whole ranges: merged pointers keep an offset range
//!   that every access checks end to end (stack accesses refuse ranges),
//!   see `docs/downloaded-code.md`, "The join rule".

mod beliefs;
mod cfg;
mod state;
mod value;

pub use beliefs::{Beliefs, Concrete};

use alloc::boxed::Box;
use alloc::vec;
use alloc::vec::Vec;

use crate::insn::{
    access_bytes, decode, jump_taken, Insn, ALU_ADD, ALU_DIV, ALU_END, ALU_MOD, ALU_MOV, ALU_SUB, CLASS_ALU,
    CLASS_ALU64, CLASS_JMP32, CLASS_LD, CLASS_LDX, CLASS_ST, CLASS_STX, INSN_SIZE, JMP_EXIT, JMP_JA, JMP_JEQ,
    JMP_JGE, JMP_JGT, JMP_JLE, JMP_JLT, JMP_JSET, JMP_JSGE, JMP_JSGT, JMP_JSLE, JMP_JSLT, PSEUDO_REGION,
    SRC_X, STACK_SIZE,
};
use crate::program::{Access, VerifiedProgram};
use crate::reject::{PtrKind, Reason, Reject};
use crate::spec::ProgramSpec;
use state::State;
use value::{alu32_range, alu64_range, as_offset, endian_range, negate, refine};
use value::{Ptr, Range, Val, MAX_PTR_OFF};

/// Distinct states kept per join point. Past this, a new state is merged
/// into the last one (losing path sensitivity there).
const MAX_STATES_PER_JOIN: usize = 8;
/// Merges at one join point after which differing scalars are widened to
/// the full range.
const MERGES_BEFORE_WIDENING: u32 = 2;

/// Verifies a program given as raw bytes (8 bytes per slot).
pub fn verify_bytes(bytes: &[u8], spec: &ProgramSpec) -> Result<VerifiedProgram, Reject> {
    let insns = decode(bytes)
        .map_err(|t| Reject::new(t.len / INSN_SIZE, Reason::TruncatedInstruction { len: t.len }))?;
    verify(&insns, spec)
}

/// Verifies a program; on success it may be interpreted or compiled.
pub fn verify(insns: &[Insn], spec: &ProgramSpec) -> Result<VerifiedProgram, Reject> {
    run_verifier(insns, spec, None).map(|(p, _)| p)
}

/// `verify`, also returning what it believed about each register before
/// each instruction (for the fuzzing oracle, `interp::run_checked`).
pub fn verify_with_beliefs(insns: &[Insn], spec: &ProgramSpec) -> Result<(VerifiedProgram, Beliefs), Reject> {
    run_verifier(insns, spec, Some(Beliefs::new(insns.len()))).map(|(p, b)| (p, b.expect("recorded")))
}

fn run_verifier(
    insns: &[Insn],
    spec: &ProgramSpec,
    beliefs: Option<Beliefs>,
) -> Result<(VerifiedProgram, Option<Beliefs>), Reject> {
    let shape = cfg::check(insns, spec)?;
    let mut v = Verifier { insns, spec, access: vec![Access::None; insns.len()], beliefs };
    v.explore(&shape)?;
    Ok((VerifiedProgram { insns: insns.to_vec(), spec: spec.clone(), access: v.access }, v.beliefs))
}

/// Exploration bookkeeping: states queued per instruction.
struct Walk<'s> {
    pending: Vec<Vec<State>>,
    merges: Vec<u32>,
    steps: usize,
    shape: &'s cfg::Shape,
}

impl Walk<'_> {
    /// Queues a state at `pc`, keeping at most `MAX_STATES_PER_JOIN` there:
    /// a state included in a queued one is dropped, queued states included
    /// in it are replaced, and beyond the limit it is merged into the last.
    fn enqueue(&mut self, pc: usize, mut st: State) {
        // Dead registers cannot matter; forgetting them lets states coincide.
        for (r, v) in st.regs.iter_mut().enumerate() {
            if self.shape.live[pc] & (1 << r) == 0 {
                *v = Val::Uninit;
            }
        }
        let queue = &mut self.pending[pc];
        if queue.iter().any(|old| old.includes(&st)) {
            return;
        }
        queue.retain(|old| !st.includes(old));
        if queue.len() < MAX_STATES_PER_JOIN {
            queue.push(st);
            return;
        }
        self.merges[pc] += 1;
        let widen = self.merges[pc] > MERGES_BEFORE_WIDENING;
        let last = queue.last_mut().expect("queue is full");
        *last = last.join(&st, widen);
    }
}

enum Flow {
    Next(usize),
    Branch(usize, Box<State>),
    Exit,
}

struct Verifier<'a> {
    insns: &'a [Insn],
    spec: &'a ProgramSpec,
    access: Vec<Access>,
    beliefs: Option<Beliefs>,
}

fn read(st: &State, r: u8) -> Result<Val, Reason> {
    match st.regs[r as usize] {
        Val::Uninit => Err(Reason::UninitRegister(r)),
        v => Ok(v),
    }
}

fn access_kind(a: Access) -> PtrKind {
    match a {
        Access::Mem { kind, .. } => kind,
        Access::PacketStart => PtrKind::Packet,
        Access::PacketEnd | Access::None => PtrKind::PacketEnd,
    }
}

impl Verifier<'_> {
    /// Walks the program in instruction order. States wait at join points
    /// until every predecessor has been processed, so each instruction
    /// handles at most `MAX_STATES_PER_JOIN` states: total work is bounded
    /// by that times the program length.
    fn explore(&mut self, shape: &cfg::Shape) -> Result<(), Reject> {
        let len = self.insns.len();
        let mut w = Walk { pending: vec![Vec::new(); len], merges: vec![0; len], steps: 0, shape };
        w.pending[0].push(State::entry());
        for pc in 0..len {
            for st in core::mem::take(&mut w.pending[pc]) {
                self.chain(pc, st, &mut w)?;
            }
        }
        Ok(())
    }

    /// Runs one state straight on until it reaches a join point (where it
    /// is queued) or exits. Instructions with one predecessor need no
    /// queueing: no other state can arrive there.
    fn chain(&mut self, mut pc: usize, mut st: State, w: &mut Walk) -> Result<(), Reject> {
        loop {
            w.steps += 1;
            if w.steps > self.spec.max_steps {
                let steps = self.spec.max_steps;
                return Err(Reject::new(pc, Reason::TooComplex { steps }));
            }
            if let Some(b) = &mut self.beliefs {
                b.record(pc, &st.regs);
            }
            let next = match self.step(pc, &mut st).map_err(|r| Reject::new(pc, r))? {
                Flow::Exit => return Ok(()),
                Flow::Next(next) => next,
                Flow::Branch(target, taken) => {
                    w.enqueue(target, *taken);
                    pc + 1
                }
            };
            if w.shape.join[next] {
                w.enqueue(next, st);
                return Ok(());
            }
            pc = next;
        }
    }

    fn step(&mut self, pc: usize, st: &mut State) -> Result<Flow, Reason> {
        let insn = self.insns[pc];
        match insn.class() {
            CLASS_ALU | CLASS_ALU64 => self.alu(pc, insn, st)?,
            CLASS_LD => {
                let hi = self.insns[pc + 1].imm;
                st.regs[insn.dst as usize] = if insn.src == PSEUDO_REGION {
                    let kind = PtrKind::Region(insn.imm as u32);
                    Val::Ptr(Ptr::at(kind, hi as i64))
                } else {
                    Val::exact(insn.imm as u32 as u64 | (hi as u32 as u64) << 32)
                };
                return Ok(Flow::Next(pc + 2));
            }
            CLASS_LDX => {
                let Val::Ptr(p) = read(st, insn.src)? else {
                    return Err(Reason::ScalarDereference);
                };
                let size = access_bytes(insn.size_bits());
                let (access, val) = self.load(st, p, insn.off, size)?;
                self.note(pc, access)?;
                st.regs[insn.dst as usize] = val;
            }
            CLASS_ST | CLASS_STX => {
                let Val::Ptr(p) = read(st, insn.dst)? else {
                    return Err(Reason::ScalarDereference);
                };
                let val = if insn.class() == CLASS_STX {
                    read(st, insn.src)?
                } else {
                    Val::exact(insn.imm as i64 as u64)
                };
                let size = access_bytes(insn.size_bits());
                self.store(st, p, insn.off, size, val)?;
                self.note(pc, Access::Mem { kind: PtrKind::Stack, masked: false })?;
            }
            _ => return self.jump(pc, insn, st),
        }
        Ok(Flow::Next(pc + 1))
    }

    /// Records the access made by a memory instruction; all paths must agree
    /// on the object so the back ends can compile it once.
    fn note(&mut self, pc: usize, new: Access) -> Result<(), Reason> {
        let old = self.access[pc];
        self.access[pc] = match (old, new) {
            (Access::None, n) => n,
            (Access::Mem { kind: a, masked: m }, Access::Mem { kind: b, masked: n }) if a == b => {
                Access::Mem { kind: a, masked: m || n }
            }
            (o, n) if o == n => o,
            (o, n) => {
                return Err(Reason::MixedPointerKinds { first: access_kind(o), second: access_kind(n) })
            }
        };
        Ok(())
    }

    fn alu(&self, pc: usize, insn: Insn, st: &mut State) -> Result<(), Reason> {
        let is64 = insn.class() == CLASS_ALU64;
        let op = insn.op();
        let dst = insn.dst as usize;
        let by_reg = insn.source() == SRC_X;
        if op == ALU_END {
            return match read(st, insn.dst)? {
                Val::Scalar(r) => {
                    st.regs[dst] = Val::Scalar(endian_range(r, insn.imm, by_reg));
                    Ok(())
                }
                Val::Ptr(p) => Err(Reason::PointerArithmetic { op, kind: p.kind }),
                Val::Uninit => unreachable!("read() rejects uninit"),
            };
        }
        let b = if by_reg { read(st, insn.src)? } else { Val::exact(insn.imm as i64 as u64) };
        if op == ALU_MOV {
            st.regs[dst] = match (is64, b) {
                (true, v) => v,
                (false, Val::Ptr(p)) => return Err(Reason::PointerArithmetic32(p.kind)),
                (false, Val::Scalar(r)) => Val::Scalar(r.low32()),
                (false, Val::Uninit) => unreachable!("read() rejects uninit"),
            };
            return Ok(());
        }
        let a = read(st, insn.dst)?;
        st.regs[dst] = match (a, b) {
            (Val::Scalar(a), Val::Scalar(b)) => {
                if op == ALU_DIV || op == ALU_MOD {
                    let divisor = if is64 { b } else { b.low32() };
                    // Division faults cannot happen under misspeculation.
                    if divisor.min == 0 && !st.speculative {
                        return Err(Reason::DivisorMaybeZero(insn.src));
                    }
                }
                Val::Scalar(if is64 { alu64_range(op, a, b) } else { alu32_range(op, a, b) })
            }
            (Val::Ptr(p), _) | (_, Val::Ptr(p)) if !is64 => return Err(Reason::PointerArithmetic32(p.kind)),
            (Val::Ptr(p), Val::Scalar(b)) => match op {
                ALU_ADD => Val::Ptr(ptr_add(pc, p, b, by_reg, false)?),
                ALU_SUB => Val::Ptr(ptr_add(pc, p, b, by_reg, true)?),
                _ => return Err(Reason::PointerArithmetic { op, kind: p.kind }),
            },
            (Val::Scalar(a), Val::Ptr(p)) => match op {
                ALU_ADD => Val::Ptr(ptr_add(pc, p, a, true, false)?),
                ALU_SUB => return Err(Reason::ScalarMinusPointer),
                _ => return Err(Reason::PointerArithmetic { op, kind: p.kind }),
            },
            (Val::Ptr(p), Val::Ptr(q)) => match op {
                ALU_ADD => return Err(Reason::PointerPlusPointer),
                // Distances inside the packet reveal no address.
                ALU_SUB
                    if matches!(p.kind, PtrKind::Packet | PtrKind::PacketEnd)
                        && q.kind == PtrKind::Packet =>
                {
                    Val::Scalar(Range::FULL)
                }
                ALU_SUB => return Err(Reason::PointerDifference { left: p.kind, right: q.kind }),
                _ => return Err(Reason::PointerArithmetic { op, kind: p.kind }),
            },
            _ => unreachable!("read() rejects uninit"),
        };
        Ok(())
    }

    fn load(&self, st: &State, p: Ptr, off: i16, size: u32) -> Result<(Access, Val), Reason> {
        let lo = p.lo + off as i64;
        let hi = p.hi + off as i64;
        let mem = Access::Mem { kind: p.kind, masked: p.id != 0 };
        let scalar = Val::Scalar(Range::of_width(size));
        match p.kind {
            PtrKind::Stack => {
                let o = stack_offset(p, off, size)?;
                Ok((mem, st.stack_load(o, size)?))
            }
            PtrKind::Ctx => {
                if lo < 0 || hi + size as i64 > self.spec.ctx_size as i64 {
                    return Err(Reason::CtxOutOfBounds { lo, hi, size });
                }
                if let Some(f) = self.spec.packet {
                    let fields = [
                        (f.data_off, Access::PacketStart, PtrKind::Packet),
                        (f.data_end_off, Access::PacketEnd, PtrKind::PacketEnd),
                    ];
                    // Only a load from one known offset is a field load.
                    let exact = p.id == 0 && p.lo == p.hi;
                    for (field, access, kind) in fields {
                        let field = field as i64;
                        if exact && lo == field && size == f.width {
                            return Ok((access, Val::Ptr(Ptr::at(kind, 0))));
                        }
                        if lo < field + f.width as i64 && field < hi + size as i64 {
                            return Err(Reason::PacketFieldMisuse { lo, size });
                        }
                    }
                }
                Ok((mem, scalar))
            }
            PtrKind::Region(i) => {
                let limit = self.spec.regions[i as usize] as i64;
                if lo < 0 || hi + size as i64 > limit {
                    return Err(Reason::RegionOutOfBounds { region: i, lo, hi, size });
                }
                Ok((mem, scalar))
            }
            PtrKind::Packet => {
                if lo < 0 {
                    return Err(Reason::PacketBeforeStart { lo });
                }
                // See `State::proofs`: the proof bound is relative to `lo`.
                match st.proof(p.id) {
                    Some(bound) if lo + size as i64 <= bound => {}
                    _ => return Err(Reason::PacketNotProven { lo, size }),
                }
                Ok((mem, scalar))
            }
            PtrKind::PacketEnd => Err(Reason::PacketEndAccess),
        }
    }

    fn store(&self, st: &mut State, p: Ptr, off: i16, size: u32, val: Val) -> Result<(), Reason> {
        if p.kind == PtrKind::Stack {
            let o = stack_offset(p, off, size)?;
            return st.stack_store(o, size, Some(val));
        }
        if let Val::Ptr(q) = val {
            return Err(Reason::PointerStoreOutsideStack(q.kind));
        }
        Err(match p.kind {
            PtrKind::Ctx => Reason::CtxWrite,
            PtrKind::Region(i) => Reason::RegionWrite(i),
            _ => Reason::PacketWrite,
        })
    }

    fn jump(&self, pc: usize, insn: Insn, st: &mut State) -> Result<Flow, Reason> {
        let op = insn.op();
        let target = (pc as i64 + 1 + insn.off as i64) as usize;
        match op {
            JMP_JA => return Ok(Flow::Next(target)),
            JMP_EXIT => {
                return match st.regs[0] {
                    Val::Uninit => Err(Reason::ExitWithoutReturnValue),
                    Val::Ptr(p) => Err(Reason::PointerLeak(p.kind)),
                    Val::Scalar(_) => Ok(Flow::Exit),
                }
            }
            _ => {}
        }
        let is32 = insn.class() == CLASS_JMP32;
        let by_reg = insn.source() == SRC_X;
        let a = read(st, insn.dst)?;
        let b = if by_reg { read(st, insn.src)? } else { Val::exact(insn.imm as i64 as u64) };
        let mut taken = Box::new(st.clone());
        match (a, b) {
            // `x OP x` is decided by OP alone (`refine` would treat the two
            // operands as independent values): the edge that cannot be
            // taken keeps the unrefined state and is speculative.
            (Val::Scalar(_), Val::Scalar(_)) if by_reg && insn.src == insn.dst => {
                if op != JMP_JSET {
                    if jump_taken(op, 0, 0, is32) {
                        st.speculative = true;
                    } else {
                        taken.speculative = true;
                    }
                }
            }
            (Val::Scalar(ra), Val::Scalar(rb)) => {
                let fits32 = ra.max <= u32::MAX as u64 && rb.max <= u32::MAX as u64;
                if !is32 || fits32 {
                    let half = if is32 { 1 << 31 } else { 1 << 63 };
                    let write = |s: &mut State, (na, nb): (Range, Range)| {
                        s.regs[insn.dst as usize] = Val::Scalar(na);
                        if by_reg && insn.src != insn.dst {
                            s.regs[insn.src as usize] = Val::Scalar(nb);
                        }
                    };
                    // An impossible edge keeps the unrefined state (see module doc).
                    match refine(op, ra, rb, half) {
                        Some(r) => write(&mut taken, r),
                        None => taken.speculative = true,
                    }
                    match negate(op).map(|n| refine(n, ra, rb, half)) {
                        Some(Some(r)) => write(st, r),
                        Some(None) => st.speculative = true,
                        None => {}
                    }
                }
            }
            (Val::Ptr(p), Val::Ptr(q)) => {
                if is32 || op == JMP_JSET {
                    return Err(Reason::PointerComparisonOp(p.kind));
                }
                use PtrKind::{Packet, PacketEnd};
                match (p.kind, q.kind) {
                    (Packet, PacketEnd) => packet_proofs(op, p, &mut taken, st),
                    (PacketEnd, Packet) => packet_proofs(swap_sides(op), q, &mut taken, st),
                    (Packet, Packet) | (PacketEnd, PacketEnd) => {}
                    (left, right) => return Err(Reason::PointerKindComparison { left, right }),
                }
            }
            (Val::Ptr(p), _) | (_, Val::Ptr(p)) => return Err(Reason::PointerScalarComparison(p.kind)),
            _ => unreachable!("read() rejects uninit"),
        }
        Ok(Flow::Branch(target, taken))
    }
}

/// Checks a stack access and returns its offset from r10. The offset must
/// be one constant: a pointer with an offset range (a register was added,
/// or paths with different offsets were merged) is refused, because slot
/// contents are tracked per offset and checking one end of the range says
/// nothing about the slot the access really hits.
fn stack_offset(p: Ptr, off: i16, size: u32) -> Result<i64, Reason> {
    if p.id != 0 || p.lo != p.hi {
        return Err(Reason::StackVariableOffset);
    }
    let off = p.lo + off as i64;
    if off < -(STACK_SIZE as i64) || off + size as i64 > 0 {
        return Err(Reason::StackOutOfBounds { off, size });
    }
    if off % size as i64 != 0 {
        return Err(Reason::MisalignedStack { off, size });
    }
    Ok(off)
}

/// Adds (or subtracts) a scalar to a pointer.
fn ptr_add(pc: usize, p: Ptr, b: Range, by_reg: bool, sub: bool) -> Result<Ptr, Reason> {
    if p.kind == PtrKind::PacketEnd {
        let op = if sub { ALU_SUB } else { ALU_ADD };
        return Err(Reason::PointerArithmetic { op, kind: p.kind });
    }
    let (lo, hi) = as_offset(b).ok_or(Reason::UnboundedPointerOffset(p.kind))?;
    let (lo, hi) = if sub { (-hi, -lo) } else { (lo, hi) };
    let (lo, hi) = (p.lo + lo, p.hi + hi);
    if lo < -MAX_PTR_OFF || hi > MAX_PTR_OFF {
        return Err(Reason::PointerOffsetOverflow(p.kind));
    }
    // A register operand may hold anything under misspeculation, so the
    // pointer gets a new identity and its loads are masked.
    let id = if by_reg { pc as u32 + 1 } else { p.id };
    Ok(Ptr { kind: p.kind, lo, hi, id })
}

/// The same comparison with its operands swapped.
fn swap_sides(op: u8) -> u8 {
    match op {
        JMP_JGT => JMP_JLT,
        JMP_JLT => JMP_JGT,
        JMP_JGE => JMP_JLE,
        JMP_JLE => JMP_JGE,
        JMP_JSGT => JMP_JSLT,
        JMP_JSLT => JMP_JSGT,
        JMP_JSGE => JMP_JSLE,
        JMP_JSLE => JMP_JSGE,
        other => other,
    }
}

/// Records what `packet OP packet_end` proves on each edge.
fn packet_proofs(op: u8, p: Ptr, taken: &mut State, fall: &mut State) {
    // Addresses are compared unsigned; signed forms are not given meaning.
    let proves = |op: u8| match op {
        JMP_JLT => Some(1),
        JMP_JLE | JMP_JEQ => Some(0),
        _ => None,
    };
    if let Some(extra) = proves(op) {
        taken.add_proof(p.id, p.lo + extra);
    }
    if let Some(extra) = negate(op).and_then(proves) {
        fall.add_proof(p.id, p.lo + extra);
    }
}
