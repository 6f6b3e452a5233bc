//! What a verified filter claims, found by running it symbolically over
//! every path (it is loop-free, so paths are finite; a budget bounds them).
//!
//! Each register holds either a pointer (context, packet + constant,
//! packet end), a value whose 64 bits are each a constant or a (possibly
//! inverted) bit of the packet, or `Unknown`. Loads, moves, masks, shifts,
//! byte swaps and carry-free additions keep bits exact; anything else
//! gives `Unknown`. An equality test of such a value against a constant
//! adds byte constraints to the path's cube; a packet pointer compared
//! with the packet end adds a length bound. Every constraint recorded on a
//! path is *implied* by taking it, so the cube of a path contains every
//! frame that takes it. Hence:
//!
//! - the union of the accepting paths' cubes contains every frame the
//!   filter accepts (the *claim*: sound for the overlap refusal even when
//!   the filter is not canonical);
//! - when exactly one path accepts and it recorded *every* condition it
//!   took (only equalities and length minimums, no `!=`, no unknowns), its
//!   cube is exactly the accepted set: the filter is *canonical* and runs
//!   merged with the others.

use alloc::vec::Vec;

use bpf::insn::{
    access_bytes, alu32, alu64, jump_taken, Insn, ALU_ADD, ALU_AND, ALU_ARSH, ALU_END, ALU_LSH, ALU_MOV,
    ALU_OR, ALU_RSH, ALU_SUB, ALU_XOR, CLASS_ALU, CLASS_ALU64, CLASS_JMP, CLASS_JMP32, CLASS_LD, CLASS_LDX,
    CLASS_ST, CLASS_STX, FRAME_REG, JMP_CALL, JMP_EXIT, JMP_JA, JMP_JEQ, JMP_JGE, JMP_JGT, JMP_JLE, JMP_JLT,
    JMP_JNE, JMP_JSET, LD_IMM64, NUM_REGS, SIZE_DW, SRC_X,
};
use bpf::VerifiedProgram;

use crate::cube::Cube;

/// Most paths explored before a filter is taken as claiming everything.
pub const MAX_PATHS: usize = 256;
/// Most instructions stepped over all paths.
pub const MAX_STEPS: usize = 1 << 16;
/// Most cubes kept in an opaque filter's claim.
pub const MAX_CLAIM_CUBES: usize = 64;

/// What a filter accepts, as far as the analysis can say.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Shape {
    /// Accepts exactly the frames in the cube.
    Canonical(Cube),
    /// Accepts only frames inside the union of these cubes (an
    /// over-approximation; a single universal cube when unknown).
    Opaque(Vec<Cube>),
}

impl Shape {
    /// The cubes whose union contains every frame the filter accepts.
    pub fn claim(&self) -> &[Cube] {
        match self {
            Shape::Canonical(c) => core::slice::from_ref(c),
            Shape::Opaque(cs) => cs,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Bit {
    Zero,
    One,
    /// Bit `pos % 8` (LSB = 0) of packet byte `pos / 8`, inverted if `inv`.
    Pkt {
        pos: u32,
        inv: bool,
    },
}

impl Bit {
    fn konst(b: bool) -> Bit {
        if b {
            Bit::One
        } else {
            Bit::Zero
        }
    }
    fn flip(self) -> Bit {
        match self {
            Bit::Zero => Bit::One,
            Bit::One => Bit::Zero,
            Bit::Pkt { pos, inv } => Bit::Pkt { pos, inv: !inv },
        }
    }
}

type Bits = [Bit; 64];

#[derive(Clone, Debug, PartialEq, Eq)]
enum Val {
    Unknown,
    Ctx,
    /// Packet start + offset.
    Pkt(i64),
    End,
    Bits(alloc::boxed::Box<Bits>),
}

impl Val {
    fn konst(v: u64) -> Val {
        Val::bits(core::array::from_fn(|i| Bit::konst(v >> i & 1 == 1)))
    }
    fn bits(b: Bits) -> Val {
        Val::Bits(alloc::boxed::Box::new(b))
    }
    fn as_const(&self) -> Option<u64> {
        let Val::Bits(b) = self else { return None };
        b.iter().enumerate().try_fold(0u64, |acc, (i, bit)| match bit {
            Bit::Zero => Some(acc),
            Bit::One => Some(acc | 1 << i),
            Bit::Pkt { .. } => None,
        })
    }
}

#[derive(Clone)]
struct State {
    pc: usize,
    regs: [Val; NUM_REGS],
    /// 8-byte spills at frame offsets.
    stack: Vec<(i16, Val)>,
    cube: Cube,
    /// Every condition taken so far is recorded in `cube`.
    exact: bool,
}

/// An accepting path.
struct Accept {
    cube: Cube,
    exact: bool,
}

/// Analyses a filter verified with `crate::filter_spec()`.
pub fn shape(prog: &VerifiedProgram) -> Shape {
    let pkt = prog.spec().packet;
    let insns = prog.insns();
    let mut regs: [Val; NUM_REGS] = core::array::from_fn(|_| Val::Unknown);
    regs[1] = Val::Ctx;
    let start = State { pc: 0, regs, stack: Vec::new(), cube: Cube::universal(), exact: true };
    let mut work = alloc::vec![start];
    let (mut paths, mut steps) = (1usize, 0usize);
    let mut accepts: Vec<Accept> = Vec::new();
    while let Some(mut s) = work.pop() {
        loop {
            steps += 1;
            if steps > MAX_STEPS {
                return Shape::Opaque(alloc::vec![Cube::universal()]);
            }
            let Some(&insn) = insns.get(s.pc) else {
                return Shape::Opaque(alloc::vec![Cube::universal()]);
            };
            match step(&mut s, insn, insns, pkt) {
                Next::Go => {}
                Next::Drop => break,
                Next::Exit => {
                    let accepts_here = match s.regs[0].as_const() {
                        Some(0) => false,
                        Some(_) => true,
                        None => {
                            s.exact = false;
                            true
                        }
                    };
                    if accepts_here {
                        accepts.push(Accept { cube: s.cube.clone(), exact: s.exact });
                    }
                    break;
                }
                Next::Fork(other) => {
                    paths += 1;
                    if paths > MAX_PATHS {
                        return Shape::Opaque(alloc::vec![Cube::universal()]);
                    }
                    work.push(*other);
                }
                Next::Give => return Shape::Opaque(alloc::vec![Cube::universal()]),
            }
        }
    }
    if let [only] = &accepts[..] {
        if only.exact {
            return Shape::Canonical(only.cube.clone());
        }
    }
    let mut claim: Vec<Cube> = Vec::new();
    for a in accepts {
        let mut c = a.cube;
        c.min_len = 0;
        if !claim.contains(&c) {
            claim.push(c);
        }
    }
    if claim.len() > MAX_CLAIM_CUBES {
        claim = alloc::vec![Cube::universal()];
    }
    Shape::Opaque(claim)
}

enum Next {
    Go,
    /// The path cannot be taken.
    Drop,
    Exit,
    /// Continue here; also explore this state.
    Fork(alloc::boxed::Box<State>),
    /// Cannot analyse: claim everything.
    Give,
}

fn step(s: &mut State, insn: Insn, insns: &[Insn], pkt: Option<bpf::PacketFields>) -> Next {
    let (dst, src) = (usize::from(insn.dst), usize::from(insn.src));
    match insn.class() {
        CLASS_LD if insn.code == LD_IMM64 => {
            let Some(hi) = insns.get(s.pc + 1) else { return Next::Give };
            s.regs[dst] = if insn.src == 0 {
                Val::konst(u64::from(insn.imm as u32) | u64::from(hi.imm as u32) << 32)
            } else {
                Val::Unknown // a region pointer: not packet data
            };
            s.pc += 2;
            return Next::Go;
        }
        CLASS_LDX => {
            let n = access_bytes(insn.size_bits()) as usize;
            s.regs[dst] = if src == usize::from(FRAME_REG) {
                let spilled = s.stack.iter().find(|(o, _)| *o == insn.off).map(|(_, v)| v.clone());
                match spilled {
                    Some(v) if insn.size_bits() == SIZE_DW => v,
                    _ => Val::Unknown,
                }
            } else {
                load(&s.regs[src], i64::from(insn.off), n, pkt)
            };
        }
        CLASS_ST | CLASS_STX => {
            let n = i32::from(access_bytes(insn.size_bits()) as u16);
            if dst == usize::from(FRAME_REG) {
                let off = i32::from(insn.off);
                s.stack.retain(|(o, _)| i32::from(*o) + 8 <= off || off + n <= i32::from(*o));
                if insn.class() == CLASS_STX && insn.size_bits() == SIZE_DW {
                    s.stack.push((insn.off, s.regs[src].clone()));
                }
            } else {
                s.stack.clear(); // through a copy of the frame pointer: forget it all
            }
        }
        CLASS_ALU | CLASS_ALU64 => {
            let is64 = insn.class() == CLASS_ALU64;
            let b = if insn.source() == SRC_X {
                s.regs[src].clone()
            } else if is64 {
                Val::konst(i64::from(insn.imm) as u64)
            } else {
                Val::konst(u64::from(insn.imm as u32))
            };
            s.regs[dst] = alu(insn, core::mem::replace(&mut s.regs[dst], Val::Unknown), b, is64);
        }
        CLASS_JMP | CLASS_JMP32 => return jump(s, insn),
        _ => return Next::Give,
    }
    s.pc += 1;
    Next::Go
}

fn load(base: &Val, off: i64, n: usize, pkt: Option<bpf::PacketFields>) -> Val {
    match base {
        Val::Ctx => match pkt {
            Some(p) if n == p.width as usize && off == i64::from(p.data_off) => Val::Pkt(0),
            Some(p) if n == p.width as usize && off == i64::from(p.data_end_off) => Val::End,
            _ => Val::Unknown,
        },
        Val::Pkt(o) => {
            let first = o.saturating_add(off);
            if !(0..=0xffff - 8).contains(&first) {
                return Val::Unknown;
            }
            let first = first as u32;
            Val::bits(core::array::from_fn(|i| {
                if i < 8 * n {
                    Bit::Pkt { pos: 8 * first + i as u32, inv: false }
                } else {
                    Bit::Zero
                }
            }))
        }
        _ => Val::Unknown,
    }
}

fn alu(insn: Insn, a: Val, b: Val, is64: bool) -> Val {
    let op = insn.op();
    let width = if is64 { 64 } else { 32 };
    let trunc = |v: Val| match v {
        Val::Bits(mut x) if !is64 => {
            x[32..].fill(Bit::Zero);
            Val::Bits(x)
        }
        Val::Bits(x) => Val::Bits(x),
        _ if is64 => v,
        _ => Val::Unknown,
    };
    if op == ALU_MOV {
        return trunc(b);
    }
    if op == ALU_END {
        let Val::Bits(x) = a else { return Val::Unknown };
        let to_be = insn.source() == SRC_X;
        return match insn.imm {
            16 | 32 | 64 => {
                let w = insn.imm as usize;
                Val::bits(core::array::from_fn(|i| {
                    if i >= w {
                        Bit::Zero
                    } else if to_be {
                        x[(w / 8 - 1 - i / 8) * 8 + i % 8]
                    } else {
                        x[i]
                    }
                }))
            }
            _ => Val::Unknown,
        };
    }
    if let (Some(x), Some(y)) = (a.as_const(), b.as_const()) {
        let f = if is64 { alu64 } else { alu32 };
        return Val::konst(f(op, x, y));
    }
    if let (Val::Pkt(p), Some(c)) = (&a, b.as_const()) {
        return match op {
            ALU_ADD if is64 => Val::Pkt(p.wrapping_add(c as i64)),
            ALU_SUB if is64 => Val::Pkt(p.wrapping_sub(c as i64)),
            _ => Val::Unknown,
        };
    }
    let (Val::Bits(x), Val::Bits(y)) = (&a, &b) else { return Val::Unknown };
    let (x, y) = (trunc(Val::Bits(x.clone())), trunc(Val::Bits(y.clone())));
    let (Val::Bits(x), Val::Bits(y)) = (x, y) else { return Val::Unknown };
    let shift = b.as_const().map(|c| (c & (width as u64 - 1)) as usize);
    let mut out = [Bit::Zero; 64];
    match op {
        ALU_AND | ALU_OR | ALU_XOR | ALU_ADD => {
            for i in 0..width {
                out[i] = match (op, x[i], y[i]) {
                    (ALU_AND, Bit::Zero, _) | (ALU_AND, _, Bit::Zero) => Bit::Zero,
                    (ALU_AND, Bit::One, v) | (ALU_AND, v, Bit::One) => v,
                    (ALU_OR | ALU_ADD, Bit::Zero, v) | (ALU_OR | ALU_ADD, v, Bit::Zero) => v,
                    (ALU_OR, Bit::One, _) | (ALU_OR, _, Bit::One) => Bit::One,
                    (ALU_XOR, Bit::Zero, v) | (ALU_XOR, v, Bit::Zero) => v,
                    (ALU_XOR, Bit::One, v) | (ALU_XOR, v, Bit::One) => v.flip(),
                    (ALU_AND | ALU_OR, p, q) if p == q => p,
                    // Two packet bits, or a carry: not a bit-exact value.
                    _ => return Val::Unknown,
                };
            }
        }
        ALU_SUB if y.iter().all(|&v| v == Bit::Zero) => out = *x,
        ALU_LSH | ALU_RSH | ALU_ARSH => {
            let Some(k) = shift else { return Val::Unknown };
            for (i, o) in out.iter_mut().enumerate().take(width) {
                *o = match op {
                    ALU_LSH => i.checked_sub(k).map_or(Bit::Zero, |j| x[j]),
                    ALU_RSH => x.get(i + k).filter(|_| i + k < width).copied().unwrap_or(Bit::Zero),
                    _ => x[(i + k).min(width - 1)],
                };
            }
        }
        _ => return Val::Unknown,
    }
    Val::bits(out)
}

/// What a conditional edge says about the path.
enum Edge {
    Never,
    Always,
    /// Taken exactly when these bits equal these constants (all of them).
    BitsEq(Vec<(Bit, bool)>),
    /// Taken exactly when the bits differ somewhere (not a cube).
    BitsNe(Vec<(Bit, bool)>),
    /// Taken exactly when the packet is at least `n` bytes long.
    LenAtLeast(u64),
    /// Taken exactly when the packet is shorter than `n` bytes.
    LenBelow(u64),
    /// Not expressible.
    Unknown,
}

fn jump(s: &mut State, insn: Insn) -> Next {
    let op = insn.op();
    let target = (s.pc as i64 + 1 + i64::from(insn.off)) as usize;
    match op {
        JMP_JA => {
            s.pc = target;
            return Next::Go;
        }
        JMP_EXIT => return Next::Exit,
        JMP_CALL => return Next::Give, // rejected by the verifier
        _ => {}
    }
    let is32 = insn.class() == CLASS_JMP32;
    let a = s.regs[usize::from(insn.dst)].clone();
    let b = if insn.source() == SRC_X {
        s.regs[usize::from(insn.src)].clone()
    } else if is32 {
        Val::konst(u64::from(insn.imm as u32))
    } else {
        Val::konst(i64::from(insn.imm) as u64)
    };
    let taken = edge(op, &a, &b, is32);
    let mut other = s.clone();
    other.pc += 1;
    s.pc = target;
    // `s` takes the jump, `other` falls through.
    let (t, f) = match taken {
        Edge::Never => return go(other, s),
        Edge::Always => return Next::Go,
        Edge::BitsEq(bits) => (Edge::BitsEq(bits.clone()), Edge::BitsNe(bits)),
        Edge::BitsNe(bits) => (Edge::BitsNe(bits.clone()), Edge::BitsEq(bits)),
        Edge::LenAtLeast(n) => (Edge::LenAtLeast(n), Edge::LenBelow(n)),
        Edge::LenBelow(n) => (Edge::LenBelow(n), Edge::LenAtLeast(n)),
        Edge::Unknown => (Edge::Unknown, Edge::Unknown),
    };
    let keep_taken = apply(s, t);
    let keep_fall = apply(&mut other, f);
    match (keep_taken, keep_fall) {
        (true, true) => Next::Fork(alloc::boxed::Box::new(other)),
        (true, false) => Next::Go,
        (false, true) => go(other, s),
        (false, false) => Next::Drop,
    }
}

fn go(next: State, s: &mut State) -> Next {
    *s = next;
    Next::Go
}

/// Records an edge's condition on the path; false if it cannot hold.
fn apply(s: &mut State, e: Edge) -> bool {
    match e {
        Edge::Never => false,
        Edge::Always => true,
        Edge::BitsEq(bits) => {
            for (bit, want) in bits {
                let ok = match bit {
                    Bit::Zero => !want,
                    Bit::One => want,
                    Bit::Pkt { pos, inv } => {
                        let (off, m) = ((pos / 8) as u16, 1u8 << (pos % 8));
                        s.cube.constrain(off, m, if want ^ inv { m } else { 0 })
                    }
                };
                if !ok {
                    return false;
                }
            }
            true
        }
        Edge::BitsNe(bits) => {
            // Decided already? Then it adds nothing (or is impossible).
            let mut undecided = false;
            for (bit, want) in bits {
                let known = match bit {
                    Bit::Zero => Some(false),
                    Bit::One => Some(true),
                    Bit::Pkt { pos, inv } => {
                        let (mask, value) = s.cube.known((pos / 8) as u16);
                        let m = 1u8 << (pos % 8);
                        (mask & m != 0).then_some((value & m != 0) ^ inv)
                    }
                };
                match known {
                    Some(k) if k != want => return true,
                    Some(_) => {}
                    None => undecided = true,
                }
            }
            if undecided {
                s.exact = false;
            }
            undecided
        }
        Edge::LenAtLeast(n) => {
            s.cube.min_len = s.cube.min_len.max(n.min(0xffff) as u16);
            true
        }
        Edge::LenBelow(n) => {
            if u64::from(s.cube.min_len) >= n {
                return false;
            }
            s.exact = false;
            true
        }
        Edge::Unknown => {
            s.exact = false;
            true
        }
    }
}

/// The condition under which the jump is taken.
fn edge(op: u8, a: &Val, b: &Val, is32: bool) -> Edge {
    if let (Some(x), Some(y)) = (a.as_const(), b.as_const()) {
        return if jump_taken(op, x, y, is32) { Edge::Always } else { Edge::Never };
    }
    if !matches!(op, JMP_JEQ | JMP_JNE | JMP_JGT | JMP_JGE | JMP_JLT | JMP_JLE | JMP_JSET) {
        return Edge::Unknown; // signed orders: no exact view
    }
    let bits_vs_const = match (a, b) {
        (Val::Bits(x), _) if b.as_const().is_some() => b.as_const().map(|c| (x, c)),
        (_, Val::Bits(y)) if a.as_const().is_some() => a.as_const().map(|c| (y, c)),
        _ => None,
    };
    match (a, b) {
        (Val::Pkt(x), Val::End) if !is32 => len_edge(op, *x, false),
        (Val::End, Val::Pkt(x)) if !is32 => len_edge(op, *x, true),
        (Val::Pkt(x), Val::Pkt(y)) if !is32 && op != JMP_JSET => {
            // Both offsets from one base: the order of the offsets.
            let (x, y) = (*x as u64 ^ 1 << 63, *y as u64 ^ 1 << 63);
            if jump_taken(op, x, y, false) {
                Edge::Always
            } else {
                Edge::Never
            }
        }
        _ if matches!(op, JMP_JEQ | JMP_JNE | JMP_JSET) => {
            let Some((x, c)) = bits_vs_const else { return Edge::Unknown };
            let w = if is32 { 32 } else { 64 };
            let bits: Vec<(Bit, bool)> = if op == JMP_JSET {
                // Taken when some bit under the mask is set: "all zero" is
                // the fall-through edge.
                let bits = (0..w).filter(|&i| c >> i & 1 == 1).map(|i| (x[i], false)).collect();
                return Edge::BitsNe(bits);
            } else {
                (0..w).map(|i| (x[i], c >> i & 1 == 1)).collect()
            };
            if op == JMP_JEQ {
                Edge::BitsEq(bits)
            } else {
                Edge::BitsNe(bits)
            }
        }
        _ => Edge::Unknown,
    }
}

/// `data + x OP data_end` (or with the operands swapped) as a length
/// condition on `len = data_end - data`.
fn len_edge(op: u8, x: i64, swapped: bool) -> Edge {
    if op == JMP_JSET {
        return Edge::Unknown; // refused on pointers by the verifier
    }
    let Ok(x) = u64::try_from(x) else {
        // A pointer before the packet start is below the end: decided.
        let below = matches!(
            (op, swapped),
            (JMP_JLT | JMP_JLE | JMP_JNE, false) | (JMP_JGT | JMP_JGE | JMP_JNE, true)
        );
        return if below { Edge::Always } else { Edge::Never };
    };
    // Normalise to "p OP end".
    let op = match (op, swapped) {
        (JMP_JGT, true) => JMP_JLT,
        (JMP_JGE, true) => JMP_JLE,
        (JMP_JLT, true) => JMP_JGT,
        (JMP_JLE, true) => JMP_JGE,
        (o, _) => o,
    };
    match op {
        JMP_JGT => Edge::LenBelow(x),                     // x > len
        JMP_JGE => Edge::LenBelow(x.saturating_add(1)),   // x >= len
        JMP_JLT => Edge::LenAtLeast(x.saturating_add(1)), // x < len
        JMP_JLE => Edge::LenAtLeast(x),                   // x <= len
        _ => Edge::Unknown,
    }
}
