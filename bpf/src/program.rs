//! The verifier's output. Only the verifier can construct it, so holding a
//! `VerifiedProgram` is proof that the instructions passed every check.

use alloc::vec::Vec;

use crate::insn::Insn;
use crate::reject::PtrKind;
use crate::spec::ProgramSpec;

/// What the verifier learnt about one load/store instruction. Back ends
/// use it to choose code (packet-field loads, Spectre masking) and the
/// guarded interpreter uses it to check each access against its object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Not a memory instruction (or not reached).
    None,
    /// A load or store inside one object. `masked` is set when the address
    /// depends on a register offset, so the load must be clamped to the
    /// object for speculative execution.
    Mem { kind: PtrKind, masked: bool },
    /// Load of the context's packet-start field: yields the packet pointer.
    PacketStart,
    /// Load of the context's packet-end field: yields the end pointer.
    PacketEnd,
}

#[derive(Clone, Debug)]
pub struct VerifiedProgram {
    pub(crate) insns: Vec<Insn>,
    pub(crate) spec: ProgramSpec,
    pub(crate) access: Vec<Access>,
}

impl VerifiedProgram {
    pub fn insns(&self) -> &[Insn] {
        &self.insns
    }

    pub fn spec(&self) -> &ProgramSpec {
        &self.spec
    }

    /// Per-slot access annotations, parallel to `insns()`.
    pub fn access(&self) -> &[Access] {
        &self.access
    }
}
