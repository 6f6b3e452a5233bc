//! The wakeup predicate an owner sleeps on while its ring is empty
//! (docs/downloaded-code.md, "Wakeup predicates in the kernel"): region 0
//! is the ring's header; true when `head != tail`. While frames keep
//! arriving the owner never sleeps and never calls the kernel to receive.

use alloc::vec::Vec;
use core::mem::offset_of;

use abi::net::RingHeader;
use bpf::insn::{Insn, JMP_JEQ};
use bpf::Asm;

/// Size of the kernel's predicate context (`PredicateContext { ticks, env }`).
pub const PREDICATE_CTX_SIZE: u32 = 16;

pub fn nonempty_predicate() -> Vec<Insn> {
    let mut a = Asm::new();
    let out = a.label();
    a.ld_region(1, 0, 0);
    a.ldx_w(2, 1, offset_of!(RingHeader, head) as i16);
    a.ldx_w(3, 1, offset_of!(RingHeader, tail) as i16);
    a.mov64_imm(0, 0).jmp_reg(JMP_JEQ, 2, 3, out).mov64_imm(0, 1);
    a.bind(out).exit();
    a.finish().expect("labels bound")
}
