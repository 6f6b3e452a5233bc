//! Downloaded-code safety gate: a verifier, reference interpreter and
//! x86-64 JIT for small, loop-free, read-only eBPF programs (wakeup
//! predicates, packet filters). See `docs/downloaded-code.md`.
#![no_std]

extern crate alloc;
#[cfg(test)]
extern crate std;
// Unit tests share the integration tests' executable mapping (which names
// the crate `bpf`).
#[cfg(test)]
extern crate self as bpf;
#[cfg(test)]
#[allow(dead_code)] // `run_native` is for the campaign
#[path = "../tests/common/exec.rs"]
mod test_exec;

pub mod builder;
pub mod campaign;
pub mod gen;
pub mod insn;
pub mod interp;
pub mod jit;
pub mod object;
pub mod program;
pub mod reject;
pub mod relayout;
pub mod spec;
pub mod stress;
pub mod verifier;
pub mod x86;

pub use builder::{Asm, BuildError, Label};
pub use insn::Insn;
pub use interp::{run, Memory, RunError};
pub use jit::{compile, JitFn};
pub use program::{Access, VerifiedProgram};
pub use reject::{PtrKind, Reason, Reject};
pub use spec::{PacketFields, ProgramSpec};
pub use verifier::{verify, verify_bytes, verify_with_beliefs};
