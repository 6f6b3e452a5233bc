//! Helper for the SSE test: fills all sixteen XMM registers with a pattern
//! from its seed, spins across many timer ticks without yielding, and
//! checks the registers still hold the pattern.
#![no_std]
#![no_main]

use core::arch::asm;
use user::kinfo;

#[repr(C, align(16))]
struct Regs([u64; 32]);

fn main(seed: u64) -> i32 {
    let mut want = Regs([0; 32]);
    let mut rng = user::rng::Rng::new(seed);
    for w in want.0.iter_mut() {
        *w = rng.next_u64();
    }
    let mut got = Regs([0; 32]);
    let start = kinfo::ticks();
    // SAFETY: loads and stores the XMM registers from/to local 256-byte,
    // 16-aligned buffers; the spin loop touches only rcx.
    unsafe {
        asm!(
            "movdqa xmm0, [{w}]", "movdqa xmm1, [{w}+16]", "movdqa xmm2, [{w}+32]", "movdqa xmm3, [{w}+48]",
            "movdqa xmm4, [{w}+64]", "movdqa xmm5, [{w}+80]", "movdqa xmm6, [{w}+96]", "movdqa xmm7, [{w}+112]",
            "movdqa xmm8, [{w}+128]", "movdqa xmm9, [{w}+144]", "movdqa xmm10, [{w}+160]", "movdqa xmm11, [{w}+176]",
            "movdqa xmm12, [{w}+192]", "movdqa xmm13, [{w}+208]", "movdqa xmm14, [{w}+224]", "movdqa xmm15, [{w}+240]",
            "mov rcx, 30000000",
            "2: dec rcx",
            "jnz 2b",
            "movdqa [{g}], xmm0", "movdqa [{g}+16], xmm1", "movdqa [{g}+32], xmm2", "movdqa [{g}+48], xmm3",
            "movdqa [{g}+64], xmm4", "movdqa [{g}+80], xmm5", "movdqa [{g}+96], xmm6", "movdqa [{g}+112], xmm7",
            "movdqa [{g}+128], xmm8", "movdqa [{g}+144], xmm9", "movdqa [{g}+160], xmm10", "movdqa [{g}+176], xmm11",
            "movdqa [{g}+192], xmm12", "movdqa [{g}+208], xmm13", "movdqa [{g}+224], xmm14", "movdqa [{g}+240], xmm15",
            w = in(reg) want.0.as_ptr(), g = in(reg) got.0.as_mut_ptr(),
            out("rcx") _, out("xmm0") _, out("xmm1") _, out("xmm2") _, out("xmm3") _, out("xmm4") _,
            out("xmm5") _, out("xmm6") _, out("xmm7") _, out("xmm8") _, out("xmm9") _, out("xmm10") _,
            out("xmm11") _, out("xmm12") _, out("xmm13") _, out("xmm14") _, out("xmm15") _,
        )
    };
    let ticks = kinfo::ticks() - start;
    let intact = want.0 == got.0;
    user::println!("sse worker {seed}: {ticks} timer ticks while spinning, registers intact: {intact}");
    if !intact {
        1
    } else if ticks < 3 {
        2
    } else {
        0
    }
}

user::entry!(main);
