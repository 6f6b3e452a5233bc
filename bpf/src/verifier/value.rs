//! Abstract register values: unsigned ranges for scalars, typed pointers
//! with offset ranges, and the transfer functions for ALU operations.

use crate::insn::{
    alu32, alu64, endian, ALU_ADD, ALU_AND, ALU_ARSH, ALU_DIV, ALU_LSH, ALU_MOD, ALU_MOV, ALU_MUL, ALU_NEG,
    ALU_OR, ALU_RSH, ALU_SUB, ALU_XOR, JMP_JEQ, JMP_JGE, JMP_JGT, JMP_JLE, JMP_JLT, JMP_JNE, JMP_JSGE,
    JMP_JSGT, JMP_JSLE, JMP_JSLT,
};
use crate::reject::PtrKind;

/// Largest magnitude a pointer offset (constant or variable) may reach.
/// Keeps all offset arithmetic far from i64 overflow and lets the JIT use
/// 32-bit displacements.
pub(crate) const MAX_PTR_OFF: i64 = (1 << 31) - 1;

/// Inclusive unsigned range of a 64-bit scalar.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Range {
    pub min: u64,
    pub max: u64,
}

impl Range {
    pub const FULL: Range = Range { min: 0, max: u64::MAX };
    pub const FULL32: Range = Range { min: 0, max: u32::MAX as u64 };

    pub fn exact(v: u64) -> Range {
        Range { min: v, max: v }
    }

    pub fn new(min: u64, max: u64) -> Range {
        Range { min, max }
    }

    pub fn known(self) -> Option<u64> {
        (self.min == self.max).then_some(self.min)
    }

    pub fn includes(self, other: Range) -> bool {
        self.min <= other.min && other.max <= self.max
    }

    /// The range of the low 32 bits.
    pub fn low32(self) -> Range {
        match self.known() {
            Some(v) => Range::exact(v as u32 as u64),
            None if self.max <= u32::MAX as u64 => self,
            None => Range::FULL32,
        }
    }

    /// Values a load of `bytes` bytes can produce.
    pub fn of_width(bytes: u32) -> Range {
        if bytes >= 8 {
            Range::FULL
        } else {
            Range::new(0, (1u64 << (bytes * 8)) - 1)
        }
    }
}

/// A pointer into one memory object. The offset lies in `[lo, hi]`, a
/// range because a register was added or because paths with different
/// offsets were merged; every access through it is checked over the whole
/// range (stack accesses need `lo == hi`).
/// `id` is non-zero once a register (not an immediate) was added: such a
/// pointer needs Spectre masking at its loads, and for packet pointers the
/// id ties pointers that share the same variable part, so a bounds proof
/// made through one applies to the others.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Ptr {
    pub kind: PtrKind,
    pub lo: i64,
    pub hi: i64,
    pub id: u32,
}

impl Ptr {
    pub fn at(kind: PtrKind, off: i64) -> Ptr {
        Ptr { kind, lo: off, hi: off, id: 0 }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Val {
    Uninit,
    Scalar(Range),
    Ptr(Ptr),
}

impl Val {
    pub fn exact(v: u64) -> Val {
        Val::Scalar(Range::exact(v))
    }

    /// True when every concrete value `other` can describe is also described
    /// by `self`, so a safe exploration from `self` covers `other`.
    pub fn includes(self, other: Val) -> bool {
        match (self, other) {
            // Nothing after this point read the register, so its value is irrelevant.
            (Val::Uninit, _) => true,
            (Val::Scalar(a), Val::Scalar(b)) => a.includes(b),
            (Val::Ptr(a), Val::Ptr(b)) => {
                if matches!(a.kind, PtrKind::Packet | PtrKind::PacketEnd) {
                    // Proofs are tied to ids and lower bounds: be exact.
                    return a == b;
                }
                a.kind == b.kind && a.lo <= b.lo && b.hi <= a.hi && (b.id == 0 || a.id != 0)
            }
            _ => false,
        }
    }
}

impl Val {
    /// A value describing both `self` and `other` (for merging paths).
    /// With `widen`, differing scalars lose all range information so that
    /// repeated merges reach a fixed point quickly. Pointers of one kind
    /// (not packet ones, whose proofs hang on exact offsets) get the union
    /// of their offset ranges; anything else becomes unusable.
    pub fn join(self, other: Val, widen: bool) -> Val {
        match (self, other) {
            (a, b) if a == b => a,
            (Val::Scalar(_), Val::Scalar(_)) if widen => Val::Scalar(Range::FULL),
            (Val::Scalar(a), Val::Scalar(b)) => Val::Scalar(Range::new(a.min.min(b.min), a.max.max(b.max))),
            (Val::Ptr(a), Val::Ptr(b))
                if a.kind == b.kind && !matches!(a.kind, PtrKind::Packet | PtrKind::PacketEnd) =>
            {
                Val::Ptr(Ptr {
                    kind: a.kind,
                    lo: a.lo.min(b.lo),
                    hi: a.hi.max(b.hi),
                    // Non-zero keeps the pointer masked if either was.
                    id: a.id.max(b.id),
                })
            }
            // Unusable from here on: reading it is rejected.
            _ => Val::Uninit,
        }
    }
}

/// Smallest all-ones mask covering `x`.
fn fill(x: u64) -> u64 {
    if x == 0 {
        0
    } else {
        u64::MAX >> x.leading_zeros()
    }
}

/// Result range of a 64-bit ALU operation on scalars.
pub(crate) fn alu64_range(op: u8, a: Range, b: Range) -> Range {
    if let (Some(x), Some(y)) = (a.known(), b.known()) {
        return Range::exact(alu64(op, x, y));
    }
    match op {
        ALU_MOV => b,
        ALU_ADD => match a.max.checked_add(b.max) {
            Some(max) => Range::new(a.min + b.min, max),
            None => Range::FULL,
        },
        ALU_SUB if a.min >= b.max => Range::new(a.min - b.max, a.max - b.min),
        ALU_MUL => match a.max.checked_mul(b.max) {
            Some(max) => Range::new(a.min * b.min, max),
            None => Range::FULL,
        },
        ALU_DIV => Range::new(a.min / b.max.max(1), a.max / b.min.max(1)),
        ALU_MOD if a.max < b.min => a,
        ALU_MOD => Range::new(0, a.max.min(b.max.saturating_sub(1))),
        ALU_AND => Range::new(0, a.max.min(b.max)),
        ALU_OR => Range::new(a.min.max(b.min), fill(a.max | b.max)),
        ALU_XOR => Range::new(0, fill(a.max | b.max)),
        ALU_LSH | ALU_RSH | ALU_ARSH => shift_range(op, a, b, 63, Range::FULL),
        _ => Range::FULL,
    }
}

/// Shift transfer. `mask` is 63 or 31; `full` is the widest result.
fn shift_range(op: u8, a: Range, b: Range, mask: u64, full: Range) -> Range {
    let width_bits = mask as u32 + 1;
    let sign = 1u64 << mask;
    // Amounts beyond the mask wrap, so only an in-range amount range is usable.
    let amounts = (b.max <= mask).then_some((b.min as u32, b.max as u32));
    match (op, amounts) {
        (ALU_RSH, Some((lo, hi))) => Range::new(a.min >> hi, a.max >> lo),
        (ALU_RSH, None) => Range::new(0, a.max),
        (ALU_LSH, Some((lo, hi))) => {
            let fits = a.max == 0 || (a.max.leading_zeros() - (64 - width_bits)) >= hi;
            if fits {
                Range::new(a.min << lo, a.max << hi)
            } else {
                full
            }
        }
        (ALU_ARSH, Some((lo, hi))) if a.max < sign => Range::new(a.min >> hi, a.max >> lo),
        (ALU_ARSH, None) if a.max < sign => Range::new(0, a.max),
        _ => full,
    }
}

/// Result range of a 32-bit ALU operation (always within u32).
pub(crate) fn alu32_range(op: u8, a: Range, b: Range) -> Range {
    let (a, b) = (a.low32(), b.low32());
    if let (Some(x), Some(y)) = (a.known(), b.known()) {
        return Range::exact(alu32(op, x, y));
    }
    let r = match op {
        ALU_LSH | ALU_RSH | ALU_ARSH => shift_range(op, a, b, 31, Range::FULL32),
        ALU_NEG => Range::FULL32,
        _ => alu64_range(op, a, b),
    };
    // Inputs are below 2^32, so a 64-bit result below 2^32 is the 32-bit one.
    if r.max <= u32::MAX as u64 {
        r
    } else {
        Range::FULL32
    }
}

/// Result range of a byte-order conversion.
pub(crate) fn endian_range(a: Range, width: i32, to_be: bool) -> Range {
    if let Some(v) = a.known() {
        return Range::exact(endian(v, width, to_be));
    }
    let full = Range::of_width(width as u32 / 8);
    if !to_be && full.includes(a) {
        a
    } else {
        full
    }
}

/// Narrows `a` and `b` assuming `a OP b` holds for a 64-bit unsigned or
/// signed comparison. `None` means the condition cannot hold.
pub(crate) fn refine(op: u8, a: Range, b: Range, half: u64) -> Option<(Range, Range)> {
    let op = match op {
        JMP_JSGT | JMP_JSGE | JMP_JSLT | JMP_JSLE => {
            // Signed order equals unsigned order within one sign half.
            let low = a.max < half && b.max < half;
            let high = a.min >= half && b.min >= half;
            if !(low || high) {
                return Some((a, b));
            }
            match op {
                JMP_JSGT => JMP_JGT,
                JMP_JSGE => JMP_JGE,
                JMP_JSLT => JMP_JLT,
                _ => JMP_JLE,
            }
        }
        other => other,
    };
    let (mut a, mut b) = (a, b);
    match op {
        JMP_JEQ => {
            let r = Range::new(a.min.max(b.min), a.max.min(b.max));
            a = r;
            b = r;
        }
        JMP_JNE => {
            if let Some(v) = b.known() {
                a = shave(a, v)?;
            }
            if let Some(v) = a.known() {
                b = shave(b, v)?;
            }
        }
        JMP_JGT => {
            a.min = a.min.max(b.min.checked_add(1)?);
            b.max = b.max.min(a.max.checked_sub(1)?);
        }
        JMP_JGE => {
            a.min = a.min.max(b.min);
            b.max = b.max.min(a.max);
        }
        JMP_JLT => return refine(JMP_JGT, b, a, half).map(|(b, a)| (a, b)),
        JMP_JLE => return refine(JMP_JGE, b, a, half).map(|(b, a)| (a, b)),
        _ => {}
    }
    (a.min <= a.max && b.min <= b.max).then_some((a, b))
}

/// Removes `v` from the range if it is an endpoint.
fn shave(r: Range, v: u64) -> Option<Range> {
    if r.known() == Some(v) {
        return None;
    }
    let mut r = r;
    if r.min == v {
        r.min += 1;
    } else if r.max == v {
        r.max -= 1;
    }
    Some(r)
}

/// The negation of a conditional jump, for the fall-through edge.
pub(crate) fn negate(op: u8) -> Option<u8> {
    Some(match op {
        JMP_JEQ => JMP_JNE,
        JMP_JNE => JMP_JEQ,
        JMP_JGT => JMP_JLE,
        JMP_JLE => JMP_JGT,
        JMP_JGE => JMP_JLT,
        JMP_JLT => JMP_JGE,
        JMP_JSGT => JMP_JSLE,
        JMP_JSLE => JMP_JSGT,
        JMP_JSGE => JMP_JSLT,
        JMP_JSLT => JMP_JSGE,
        _ => return None,
    })
}

/// Interprets a scalar range as a signed offset to add to a pointer, if it
/// is small enough.
pub(crate) fn as_offset(r: Range) -> Option<(i64, i64)> {
    if r.max <= MAX_PTR_OFF as u64 {
        return Some((r.min as i64, r.max as i64));
    }
    let v = r.known()? as i64;
    (v.unsigned_abs() <= MAX_PTR_OFF as u64).then_some((v, v))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::insn::jump_taken;

    #[test]
    fn ranges_cover_concrete_results() {
        // Exhaustive over a small domain: every concrete result must lie in
        // the abstract result.
        let ops = [
            ALU_ADD, ALU_SUB, ALU_MUL, ALU_DIV, ALU_OR, ALU_AND, ALU_LSH, ALU_RSH, ALU_MOD, ALU_XOR, ALU_MOV,
            ALU_ARSH,
        ];
        let vals = [0u64, 1, 2, 3, 7, 31, 32, 33, 63, 64, 0x8000_0000, 0xffff_fffe, u64::MAX];
        for &op in &ops {
            for (i, &a0) in vals.iter().enumerate() {
                for &a1 in &vals[i..] {
                    for (j, &b0) in vals.iter().enumerate() {
                        for &b1 in &vals[j..] {
                            let (a, b) = (Range::new(a0, a1), Range::new(b0, b1));
                            let r64 = alu64_range(op, a, b);
                            let r32 = alu32_range(op, a, b);
                            for x in [a0, a1, (a0 / 2 + a1 / 2).max(a0)] {
                                for y in [b0, b1, (b0 / 2 + b1 / 2).max(b0)] {
                                    if (op == ALU_DIV || op == ALU_MOD) && y == 0 {
                                        continue;
                                    }
                                    let v = alu64(op, x, y);
                                    assert!(r64.min <= v && v <= r64.max, "{op:x} {a:?} {b:?}");
                                    if (op == ALU_DIV || op == ALU_MOD) && y as u32 == 0 {
                                        continue;
                                    }
                                    let v = alu32(op, x, y);
                                    assert!(r32.min <= v && v <= r32.max, "32 {op:x} {a:?} {b:?}");
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn refine_is_sound() {
        let vals = [0u64, 1, 5, 6, 100, i64::MAX as u64, 1 << 63, u64::MAX];
        let ops =
            [JMP_JEQ, JMP_JNE, JMP_JGT, JMP_JGE, JMP_JLT, JMP_JLE, JMP_JSGT, JMP_JSGE, JMP_JSLT, JMP_JSLE];
        for &op in &ops {
            for &a0 in &vals {
                for &a1 in vals.iter().filter(|&&v| v >= a0) {
                    for &b0 in &vals {
                        for &b1 in vals.iter().filter(|&&v| v >= b0) {
                            let (a, b) = (Range::new(a0, a1), Range::new(b0, b1));
                            for x in [a0, a1] {
                                for y in [b0, b1] {
                                    if !jump_taken(op, x, y, false) {
                                        continue;
                                    }
                                    let (ra, rb) = refine(op, a, b, 1 << 63).expect("feasible");
                                    assert!(ra.min <= x && x <= ra.max, "{op:x} {a:?} {b:?}");
                                    assert!(rb.min <= y && y <= rb.max, "{op:x} {a:?} {b:?}");
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// A value in `[lo, hi]`, biased toward the ends.
    fn member(rng: &mut crate::gen::Rng, r: Range) -> u64 {
        match rng.below(4) {
            0 => r.min,
            1 => r.max,
            _ => r.min + rng.next_u64() % (r.max - r.min).saturating_add(1).max(1),
        }
    }

    /// A range whose ends are drawn from values near the 32- and 64-bit
    /// boundaries, where ALU32, shifts and signed compares go wrong.
    fn range(rng: &mut crate::gen::Rng) -> Range {
        let edges = [
            0u64,
            1,
            5,
            31,
            32,
            63,
            64,
            255,
            0x7fff_ffff,
            0x8000_0000,
            0xffff_ffff,
            1 << 32,
            (1 << 32) + 1,
            i64::MAX as u64,
            1 << 63,
            u64::MAX - 1,
            u64::MAX,
        ];
        let pick = |rng: &mut crate::gen::Rng| match rng.below(3) {
            0 => rng.pick(&edges),
            1 => rng.pick(&edges).wrapping_add(rng.below(5)).wrapping_sub(2),
            _ => rng.next_u64() >> rng.below(64),
        };
        let (a, b) = (pick(rng), pick(rng));
        Range::new(a.min(b), a.max(b))
    }

    /// Random ranges and random members: every concrete ALU (64 and 32
    /// bit), byte swap and comparison result lies in the abstract one.
    #[test]
    fn transfer_functions_are_sound_on_random_ranges() {
        let mut rng = crate::gen::Rng::new(0xa5);
        let ops = [
            ALU_ADD, ALU_SUB, ALU_MUL, ALU_DIV, ALU_OR, ALU_AND, ALU_LSH, ALU_RSH, ALU_MOD, ALU_XOR, ALU_MOV,
            ALU_ARSH, ALU_NEG,
        ];
        let jumps =
            [JMP_JEQ, JMP_JNE, JMP_JGT, JMP_JGE, JMP_JLT, JMP_JLE, JMP_JSGT, JMP_JSGE, JMP_JSLT, JMP_JSLE];
        for _ in 0..300_000 {
            let (a, b) = (range(&mut rng), range(&mut rng));
            let (x, y) = (member(&mut rng, a), member(&mut rng, b));
            let op = rng.pick(&ops);
            if !((op == ALU_DIV || op == ALU_MOD) && y == 0) {
                let v = alu64(op, x, y);
                let r = alu64_range(op, a, b);
                assert!(
                    r.min <= v && v <= r.max,
                    "64 {op:#x} {a:?} {b:?} {x:#x} {y:#x} -> {v:#x} not in {r:?}"
                );
            }
            if !((op == ALU_DIV || op == ALU_MOD) && y as u32 == 0) {
                let v = alu32(op, x, y);
                let r = alu32_range(op, a, b);
                assert!(
                    r.min <= v && v <= r.max,
                    "32 {op:#x} {a:?} {b:?} {x:#x} {y:#x} -> {v:#x} not in {r:?}"
                );
            }
            let width = rng.pick(&[16, 32, 64]);
            let to_be = rng.chance(50);
            let (v, r) = (endian(x, width, to_be), endian_range(a, width, to_be));
            assert!(r.min <= v && v <= r.max, "endian {width} {to_be} {a:?} {x:#x}");
            // Comparisons: 64-bit always, 32-bit as the verifier uses them
            // (only when both values are below 2^32).
            let op = rng.pick(&jumps);
            let fits32 = a.max <= u32::MAX as u64 && b.max <= u32::MAX as u64;
            for (is32, half) in [(false, 1u64 << 63), (true, 1 << 31)] {
                if is32 && !fits32 {
                    continue;
                }
                let taken = jump_taken(op, x, y, is32);
                let edge = if taken { Some(op) } else { negate(op) };
                let edge = edge.expect("every compare has a negation");
                let (ra, rb) = refine(edge, a, b, half).expect("a feasible edge is kept");
                assert!(
                    ra.min <= x && x <= ra.max && rb.min <= y && y <= rb.max,
                    "{op:#x} {is32} {a:?} {b:?} {x:#x} {y:#x}"
                );
            }
        }
    }
}
