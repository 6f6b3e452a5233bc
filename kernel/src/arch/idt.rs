//! The interrupt descriptor table: every vector goes to its stub in
//! `trap.rs`. Breakpoint and overflow are callable from ring 3 (`int3`,
//! `into`) so that they can be forwarded to the environment.
//!
//! A second table serves while a driver runs (`crossing`, loaded by the
//! crossing, `dev::xpc`): stubs that push the same frame but never take
//! the exception fast path (a driver's trap is never an environment's),
//! every vector on a stack of its own, so that a trap a driver takes is delivered on a stack the kernel
//! knows is good whatever the driver did to its `rsp` (paper 004 §3.1:
//! a fault during a crossing must end in the driver's stop, never in a
//! kernel crash). Outside crossings traps from user mode must land in the
//! environment's save area (TSS.rsp0), so the kernel's table keeps IST for
//! NMI, double fault and machine check only.

use super::gdt::{IST_CROSSING, IST_DOUBLE_FAULT, KERNEL_CS};
use super::idtr::{Idtr, CROSSING_IDTR, KERNEL_IDTR};
use core::arch::asm;

#[derive(Clone, Copy)]
#[repr(C)]
struct Gate {
    lo: u64,
    hi: u64,
}

static mut IDT: [Gate; 256] = [Gate { lo: 0, hi: 0 }; 256];
static mut CROSSING_IDT: [Gate; 256] = [Gate { lo: 0, hi: 0 }; 256];

fn gate(handler: u64, dpl: u64, ist: u64) -> Gate {
    let lo = (handler & 0xFFFF)
        | (KERNEL_CS as u64) << 16
        | ist << 32
        | (0x8E | dpl << 5) << 40
        | ((handler >> 16) & 0xFFFF) << 48;
    Gate { lo, hi: handler >> 32 }
}

pub fn init() {
    // SAFETY: boot-time, single CPU; the tables are static.
    unsafe {
        let kernel = &mut *(&raw mut IDT).cast::<[Gate; 256]>();
        let crossing = &mut *(&raw mut CROSSING_IDT).cast::<[Gate; 256]>();
        for (v, (g, c)) in kernel.iter_mut().zip(crossing.iter_mut()).enumerate() {
            let dpl = if v == 3 || v == 4 { 3 } else { 0 };
            // NMI, double fault and machine check get a stack of their own: they
            // may arrive while rsp points into an environment's save area.
            let fresh = matches!(v, 2 | 8 | 18);
            let ist = if fresh { IST_DOUBLE_FAULT } else { 0 };
            *g = gate(super::trap::stub(v), dpl, ist as u64);
            *c = gate(super::trap::crossing_stub(v), dpl, if fresh { ist } else { IST_CROSSING } as u64);
        }
        let limit = 256u16 * 16 - 1;
        KERNEL_IDTR = Idtr { limit, base: &raw const IDT as u64 };
        CROSSING_IDTR = Idtr { limit, base: &raw const CROSSING_IDT as u64 };
        asm!("lidt [{}]", in(reg) &raw const KERNEL_IDTR, options(nostack));
    }
}
