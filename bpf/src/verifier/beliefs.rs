//! What the verifier believed about each register before each instruction:
//! the join of every state it checked there. The fuzzing oracle compares
//! concrete runs with it, so a register outside what the verifier believed
//! is caught as soon as it happens, even while nothing bad follows yet.

use alloc::vec;
use alloc::vec::Vec;

use super::value::Val;
use crate::insn::NUM_REGS;
use crate::reject::PtrKind;

/// What a register concretely holds, as the oracle sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Concrete {
    Uninit,
    Scalar(u64),
    /// A pointer `offset` bytes from the start of its object (from r10 for
    /// the stack, from the end for the packet end).
    Ptr {
        kind: PtrKind,
        offset: i64,
    },
}

/// Per instruction, the join of the register files the verifier checked.
#[derive(Clone, Debug)]
pub struct Beliefs {
    regs: Vec<Option<[Val; NUM_REGS]>>,
}

impl Beliefs {
    pub(crate) fn new(len: usize) -> Beliefs {
        Beliefs { regs: vec![None; len] }
    }

    pub(crate) fn record(&mut self, pc: usize, regs: &[Val; NUM_REGS]) {
        let slot = &mut self.regs[pc];
        *slot = Some(match slot {
            None => *regs,
            Some(old) => core::array::from_fn(|r| old[r].join(regs[r], false)),
        });
    }

    /// Whether register `reg` may hold `c` before instruction `pc`. A
    /// register the verifier did not track there (never checked, or
    /// forgotten as dead) admits anything.
    pub fn admits(&self, pc: usize, reg: usize, c: Concrete) -> bool {
        let Some(regs) = &self.regs[pc] else { return true };
        match (regs[reg], c) {
            (Val::Uninit, _) => true,
            (Val::Scalar(r), Concrete::Scalar(v)) => r.min <= v && v <= r.max,
            (Val::Ptr(p), Concrete::Ptr { kind, offset }) => {
                p.kind == kind && p.lo <= offset && offset <= p.hi
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verifier::value::{Ptr, Range};

    #[test]
    fn admits_only_what_some_checked_state_allowed() {
        let mut b = Beliefs::new(2);
        let mut regs = [Val::Uninit; NUM_REGS];
        regs[1] = Val::Ptr(Ptr::at(PtrKind::Ctx, 0));
        regs[2] = Val::Scalar(Range::new(3, 5));
        b.record(0, &regs);
        regs[2] = Val::exact(9);
        regs[3] = Val::Ptr(Ptr::at(PtrKind::Stack, -16));
        b.record(0, &regs);
        let scalar = Concrete::Scalar;
        let ptr = |kind, offset| Concrete::Ptr { kind, offset };
        // Joined scalar range [3, 9]; a pointer there is a confusion.
        assert!(b.admits(0, 2, scalar(3)) && b.admits(0, 2, scalar(7)) && b.admits(0, 2, scalar(9)));
        assert!(!b.admits(0, 2, scalar(2)) && !b.admits(0, 2, scalar(10)));
        assert!(!b.admits(0, 2, ptr(PtrKind::Stack, -16)) && !b.admits(0, 2, Concrete::Uninit));
        // The context pointer at offset 0 only.
        assert!(b.admits(0, 1, ptr(PtrKind::Ctx, 0)));
        assert!(!b.admits(0, 1, ptr(PtrKind::Ctx, 8)) && !b.admits(0, 1, ptr(PtrKind::Stack, 0)));
        // Untracked on one path (uninitialised there), or never checked.
        assert!(b.admits(0, 3, scalar(1)) && b.admits(1, 2, scalar(100)));
    }
}
