//! The interrupt descriptor table: every vector goes to its stub in
//! `trap.rs`. Breakpoint and overflow are callable from ring 3 (`int3`,
//! `into`) so that they can be forwarded to the environment.

use super::gdt::{IST_DOUBLE_FAULT, KERNEL_CS};
use core::arch::asm;

#[derive(Clone, Copy)]
#[repr(C)]
struct Gate {
    lo: u64,
    hi: u64,
}

static mut IDT: [Gate; 256] = [Gate { lo: 0, hi: 0 }; 256];

fn gate(handler: u64, dpl: u64, ist: u64) -> Gate {
    let lo = (handler & 0xFFFF)
        | (KERNEL_CS as u64) << 16
        | ist << 32
        | (0x8E | dpl << 5) << 40
        | ((handler >> 16) & 0xFFFF) << 48;
    Gate { lo, hi: handler >> 32 }
}

pub fn init() {
    // SAFETY: boot-time, single CPU; the IDT is static.
    unsafe {
        for (v, g) in (*(&raw mut IDT).cast::<[Gate; 256]>()).iter_mut().enumerate() {
            let dpl = if v == 3 || v == 4 { 3 } else { 0 };
            // NMI, double fault and machine check get a stack of their own: they
            // may arrive while rsp points into an environment's save area.
            let ist = if matches!(v, 2 | 8 | 18) { IST_DOUBLE_FAULT as u64 } else { 0 };
            *g = gate(super::trap::stub(v), dpl, ist);
        }
        let mut desc = [0u8; 10];
        desc[..2].copy_from_slice(&(256u16 * 16 - 1).to_le_bytes());
        desc[2..].copy_from_slice(&(&raw const IDT as u64).to_le_bytes());
        asm!("lidt [{}]", in(reg) &desc, options(nostack));
    }
}
