//! The GDT and TSS. Selector layout is fixed by SYSCALL/SYSRET: kernel code
//! and data, then 32-bit user code (unused), user data, 64-bit user code.

use core::arch::asm;

pub const KERNEL_CS: u16 = 0x08;
pub const KERNEL_SS: u16 = 0x10;
/// STAR's SYSRET base: user SS = base + 8, user CS = base + 16.
pub const SYSRET_BASE: u16 = 0x18;
pub const USER_SS: u16 = 0x20 | 3;
pub const USER_CS: u16 = 0x28 | 3;
const TSS_SEL: u16 = 0x30;

#[repr(C, packed(4))]
pub struct Tss {
    _r0: u32,
    pub(super) rsp: [u64; 3],
    _r1: u64,
    ist: [u64; 7],
    _r2: u64,
    _r3: u16,
    iomap: u16,
}

/// Reached by name from `pct_fast`, which sets `rsp[0]`.
pub static mut TSS: Tss = Tss { _r0: 0, rsp: [0; 3], _r1: 0, ist: [0; 7], _r2: 0, _r3: 0, iomap: 104 };
static mut GDT: [u64; 8] = [
    0,
    0x00AF_9A00_0000_FFFF, // kernel code
    0x00CF_9200_0000_FFFF, // kernel data
    0x00CF_FA00_0000_FFFF, // user code 32 (placeholder for SYSRET layout)
    0x00CF_F200_0000_FFFF, // user data
    0x00AF_FA00_0000_FFFF, // user code 64
    0,                     // TSS (low)
    0,                     // TSS (high)
];

#[repr(C, align(16))]
pub struct Stack([u8; 16384]);
/// The double fault's stack, then the crossing's (one range: the trap
/// entry tells a trap on either by one comparison, `arch::trap`).
pub static mut TRAP_STACKS: [Stack; 2] = [const { Stack([0; 16384]) }; 2];
pub const TRAP_STACKS_SIZE: usize = 2 * 16384;

/// IST slot for NMI, double fault and machine check (a fresh stack even if
/// rsp is bad).
pub const IST_DOUBLE_FAULT: u8 = 1;
/// IST slot for every other vector while a driver runs (`idt::crossing`):
/// the frame of a trap a driver takes never lands where its `rsp` points.
pub const IST_CROSSING: u8 = 2;

/// The stacks the processor switches to, double fault's and the
/// crossing's: a driver domain maps them writable, so that a trap the
/// driver takes can be delivered in its page table (`dev::domain`).
pub fn trap_stacks() -> [(u64, u64); 2] {
    let df = &raw const TRAP_STACKS as u64;
    let crossing = df + 16384;
    [(df, df + 16384), (crossing, crossing + 16384)]
}

pub fn init() {
    // SAFETY: boot-time, single CPU; the tables are static and outlive use.
    unsafe {
        TSS.ist[0] = trap_stacks()[0].1;
        TSS.ist[1] = trap_stacks()[1].1;
        let base = &raw const TSS as u64;
        let limit = (core::mem::size_of::<Tss>() - 1) as u64;
        GDT[6] = limit | (base & 0xFF_FFFF) << 16 | 0x89 << 40 | ((base >> 24) & 0xFF) << 56;
        GDT[7] = base >> 32;
        let mut desc = [0u8; 10];
        desc[..2].copy_from_slice(&(8u16 * 8 - 1).to_le_bytes());
        desc[2..].copy_from_slice(&(&raw const GDT as u64).to_le_bytes());
        asm!(
            "lgdt [{d}]",
            "push {cs}",
            "lea {t}, [rip + 2f]",
            "push {t}",
            "retfq",
            "2:",
            "mov ds, {ss:x}",
            "mov es, {ss:x}",
            "mov ss, {ss:x}",
            "xor {t:e}, {t:e}",
            "mov fs, {t:x}",
            "mov gs, {t:x}",
            "ltr {tss:x}",
            d = in(reg) &desc,
            cs = in(reg) KERNEL_CS as u64,
            ss = in(reg) KERNEL_SS as u64,
            tss = in(reg) TSS_SEL as u64,
            t = out(reg) _,
        );
    }
}

/// Where the CPU puts the frame when user mode is interrupted.
pub fn set_kernel_entry_stack(top: u64) {
    // SAFETY: single CPU, interrupts off: the TSS is not being read now.
    unsafe { TSS.rsp[0] = top }
}
