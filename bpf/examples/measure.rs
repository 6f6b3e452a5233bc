//! Prints verifier and JIT cost per instruction on programs shaped like
//! real predicates and filters (bounds-checked region reads, branches,
//! arithmetic). Run with `cargo run -p bpf --release --example measure`.

use std::time::Instant;

use bpf::{compile, verify, Asm, Insn, ProgramSpec};

/// `blocks` repetitions of: load an index from the context, bounds-check
/// it, read the region at that index, fold it into r0, and branch on it.
fn predicate(blocks: usize) -> Vec<Insn> {
    let mut a = Asm::new();
    a.mov64_imm(0, 0);
    for i in 0..blocks {
        let skip = a.label();
        let off = (i % 8) as i16 * 4;
        a.ldx_w(2, 1, off)
            .jgt_imm(2, 4088, skip)
            .ld_region(3, (i % 2) as u32, 0)
            .add64_reg(3, 2)
            .ldx_dw(4, 3, 0)
            .xor64_reg(0, 4)
            .mul64_imm(0, 31)
            .jset_imm(4, 1, skip)
            .add64_imm(0, 1)
            .bind(skip);
    }
    a.exit();
    a.finish().unwrap()
}

/// Adversarial shape: every branch sets some register to a different
/// constant, so path states never coincide and only merging bounds work.
fn diverging(blocks: usize) -> Vec<Insn> {
    let mut a = Asm::new();
    a.ldx_dw(2, 1, 0);
    for r in [0u8, 3, 4, 5, 6, 7, 8, 9] {
        a.mov64_imm(r, 0);
    }
    for i in 0..blocks {
        let skip = a.label();
        let r = [0u8, 3, 4, 5, 6, 7, 8, 9][i % 8];
        a.jeq_imm(2, i as i32, skip)
            .mov64_imm(r, i as i32)
            .stx_dw(10, -8 * (1 + (i % 64) as i16), r)
            .bind(skip);
    }
    for r in [3u8, 4, 5, 6, 7, 8, 9] {
        a.add64_reg(0, r);
    }
    a.exit();
    a.finish().unwrap()
}

fn main() {
    if let Ok(n) = std::env::var("STEPS") {
        let spec = ProgramSpec::new(32).with_max_insns(1 << 16).with_max_steps(n.parse().unwrap());
        println!("{:?}", verify(&diverging(1300), &spec).err());
        return;
    }
    let spec = ProgramSpec::new(32).with_regions(&[4096, 4096]).with_max_insns(1 << 16);
    let programs = [predicate(4), predicate(64), predicate(400), diverging(1300)];
    for insns in programs {
        let iters = (200_000 / insns.len()).max(10);
        let t = Instant::now();
        let mut prog = None;
        for _ in 0..iters {
            prog = Some(verify(&insns, &spec).expect("verifies"));
        }
        let verify_ns = t.elapsed().as_nanos() as f64 / (iters * insns.len()) as f64;
        let prog = prog.unwrap();
        let t = Instant::now();
        let mut code_len = 0;
        for _ in 0..iters {
            code_len = compile(&prog).len();
        }
        let jit_ns = t.elapsed().as_nanos() as f64 / (iters * insns.len()) as f64;
        println!(
            "{:5} insns: verify {:7.1} ns/insn, JIT {:6.1} ns/insn, {:.1} code bytes/insn",
            insns.len(),
            verify_ns,
            jit_ns,
            code_len as f64 / insns.len() as f64
        );
    }
}
