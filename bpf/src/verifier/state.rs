//! The abstract machine state along one path: registers, stack contents
//! and the packet bounds proven so far.

use alloc::vec::Vec;

use super::value::{Ptr, Range, Val};
use crate::insn::{NUM_REGS, STACK_SIZE};
use crate::reject::{PtrKind, Reason};

const SLOTS: usize = STACK_SIZE / 8;

/// What is known about one stack byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum StackByte {
    Uninit,
    /// Written with scalar data of unknown value.
    Data,
    /// Part of an 8-byte register spill; see `State::spills`.
    Spill,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct State {
    pub regs: [Val; NUM_REGS],
    /// Byte `i` is at r10 - STACK_SIZE + i.
    stack: [StackByte; STACK_SIZE],
    /// The register value spilled into each aligned 8-byte slot.
    spills: [Val; SLOTS],
    /// Packet proofs: for packet pointers with this id, `lo + n <= bound`
    /// implies the `n` bytes at the pointer are inside the packet.
    proofs: Vec<(u32, i64)>,
    /// The path went through a branch edge that value ranges say cannot be
    /// taken. It is still checked for memory safety (a misprediction can
    /// run it), but not for faults that only matter architecturally.
    pub speculative: bool,
}

impl State {
    pub fn entry() -> State {
        let mut regs = [Val::Uninit; NUM_REGS];
        regs[1] = Val::Ptr(Ptr::at(PtrKind::Ctx, 0));
        regs[10] = Val::Ptr(Ptr::at(PtrKind::Stack, 0));
        State {
            regs,
            stack: [StackByte::Uninit; STACK_SIZE],
            spills: [Val::Uninit; SLOTS],
            proofs: Vec::new(),
            speculative: false,
        }
    }

    pub fn proof(&self, id: u32) -> Option<i64> {
        self.proofs.iter().find(|p| p.0 == id).map(|p| p.1)
    }

    pub fn add_proof(&mut self, id: u32, bound: i64) {
        match self.proofs.iter_mut().find(|p| p.0 == id) {
            Some(p) => p.1 = p.1.max(bound),
            None => self.proofs.push((id, bound)),
        }
    }

    /// Index into `stack` of r10 + off (caller has bounds-checked).
    fn byte_index(off: i64) -> usize {
        (off + STACK_SIZE as i64) as usize
    }

    /// Records a store of `size` bytes at r10 + off. `val` is the stored
    /// register for 8-byte stores, which keep their exact value.
    pub fn stack_store(&mut self, off: i64, size: u32, val: Option<Val>) -> Result<(), Reason> {
        let start = Self::byte_index(off);
        let end = start + size as usize;
        if let (8, Some(v)) = (size, val) {
            self.spills[start / 8] = v;
            self.stack[start..end].fill(StackByte::Spill);
            return Ok(());
        }
        if let Some(Val::Ptr(_)) = val {
            return Err(Reason::PartialPointerSpill);
        }
        // A narrower store breaks up any spill in its slot. The rest of a
        // spilled pointer is forgotten so that its bits can never be read
        // back as data; the rest of a spilled scalar is plain data.
        let slot = start / 8;
        if self.stack[slot * 8..slot * 8 + 8].contains(&StackByte::Spill) {
            let rest = match self.spills[slot] {
                Val::Ptr(_) => StackByte::Uninit,
                _ => StackByte::Data,
            };
            self.stack[slot * 8..slot * 8 + 8].fill(rest);
            self.spills[slot] = Val::Uninit;
        }
        self.stack[start..end].fill(StackByte::Data);
        Ok(())
    }

    /// The value produced by a load of `size` bytes at r10 + off.
    pub fn stack_load(&self, off: i64, size: u32) -> Result<Val, Reason> {
        let start = Self::byte_index(off);
        let end = start + size as usize;
        for (i, b) in self.stack[start..end].iter().enumerate() {
            if *b == StackByte::Uninit {
                return Err(Reason::UninitStack { off: off + i as i64 });
            }
        }
        let slot = start / 8;
        if self.stack[start] != StackByte::Spill {
            return Ok(Val::Scalar(Range::of_width(size)));
        }
        match self.spills[slot] {
            v @ Val::Ptr(_) if size == 8 => Ok(v),
            Val::Ptr(_) => Err(Reason::PartialPointerFill { off }),
            Val::Scalar(r) if size == 8 => Ok(Val::Scalar(r)),
            // Part of a spilled scalar: little-endian bytes of unknown value
            // unless it was a constant.
            Val::Scalar(r) => Ok(Val::Scalar(match r.known() {
                Some(v) => {
                    let shift = (start % 8) * 8;
                    Range::exact((v >> shift) & Range::of_width(size).max)
                }
                None if off % 8 == 0 && r.max <= Range::of_width(size).max => r,
                None => Range::of_width(size),
            })),
            Val::Uninit => Ok(Val::Scalar(Range::of_width(size))),
        }
    }

    /// A state describing both `self` and `other`; see `Val::join`.
    pub fn join(&self, other: &State, widen: bool) -> State {
        let mut out = self.clone();
        for (r, o) in out.regs.iter_mut().zip(&other.regs) {
            *r = r.join(*o, widen);
        }
        for slot in 0..SLOTS {
            let spill = self.spills[slot].join(other.spills[slot], widen);
            let spill_is_ptr = matches!(spill, Val::Ptr(_));
            out.spills[slot] = spill;
            for i in slot * 8..slot * 8 + 8 {
                let scalar_spill = |s: &State| matches!(s.spills[slot], Val::Scalar(_));
                out.stack[i] = match (self.stack[i], other.stack[i]) {
                    (StackByte::Spill, StackByte::Spill) if spill != Val::Uninit => StackByte::Spill,
                    (StackByte::Data, StackByte::Data) => StackByte::Data,
                    (StackByte::Data, StackByte::Spill) if scalar_spill(other) => StackByte::Data,
                    (StackByte::Spill, StackByte::Data) if scalar_spill(self) => StackByte::Data,
                    _ => StackByte::Uninit,
                };
            }
            if !out.stack[slot * 8..slot * 8 + 8].contains(&StackByte::Spill) {
                out.spills[slot] = Val::Uninit;
            } else {
                debug_assert!(spill_is_ptr || matches!(spill, Val::Scalar(_)));
            }
        }
        out.speculative = self.speculative && other.speculative;
        out.proofs =
            self.proofs.iter().filter_map(|&(id, b)| other.proof(id).map(|ob| (id, b.min(ob)))).collect();
        out
    }

    /// See `Val::includes`: a completed safe exploration from `self` covers `other`.
    pub fn includes(&self, other: &State) -> bool {
        if self.speculative && !other.speculative {
            return false;
        }
        if !self.regs.iter().zip(&other.regs).all(|(a, b)| a.includes(*b)) {
            return false;
        }
        for (i, (&a, &b)) in self.stack.iter().zip(&other.stack).enumerate() {
            let ok = match (a, b) {
                (StackByte::Uninit, _) => true,
                (StackByte::Data, StackByte::Data) => true,
                (StackByte::Data, StackByte::Spill) => {
                    matches!(other.spills[i / 8], Val::Scalar(_))
                }
                (StackByte::Spill, StackByte::Spill) => self.spills[i / 8].includes(other.spills[i / 8]),
                _ => false,
            };
            if !ok {
                return false;
            }
        }
        self.proofs.iter().all(|&(id, bound)| other.proof(id).is_some_and(|b| b >= bound))
    }
}
