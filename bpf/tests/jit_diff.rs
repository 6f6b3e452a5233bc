//! Differential test: JIT-compiled code and the interpreter agree on r0
//! for thousands of random verified programs and inputs.

mod common;

use bpf::insn::*;
use bpf::{compile, run, verify, Asm, Memory, ProgramSpec};
use common::{gen_program, gen_spec, Executable, Inputs, Rng, ALU_OPS, JMP_OPS, SCALARS};

fn interp(prog: &bpf::VerifiedProgram, i: &Inputs) -> u64 {
    let regions = i.region_slices();
    let mem = Memory { ctx: &i.ctx, regions: &regions, packet: &i.packet };
    run(prog, &mem).expect("interpreter")
}

fn check(prog: &bpf::VerifiedProgram, rng: &mut Rng, runs: usize, what: &str) {
    let code = compile(prog);
    let exe = Executable::new(&code);
    for _ in 0..runs {
        let inputs = Inputs::new(rng, prog.spec());
        let want = interp(prog, &inputs);
        let got = exe.call(&inputs.ctx, &inputs.region_slices(), &inputs.packet);
        assert_eq!(
            got,
            want,
            "{what}: JIT {got:#x} != interpreter {want:#x}\n{:#?}\nctx {:?}",
            prog.insns(),
            inputs.ctx
        );
    }
}

#[test]
fn jit_matches_interpreter_on_random_programs() {
    let mut rng = Rng::new(0xd1ff);
    let mut compiled = 0;
    for n in 0..8000 {
        let spec = gen_spec(&mut rng);
        let insns = gen_program(&mut rng, &spec);
        if let Ok(prog) = verify(&insns, &spec) {
            compiled += 1;
            check(&prog, &mut rng, 6, &format!("program {n}"));
        }
    }
    assert!(compiled > 2500, "only {compiled} programs compiled");
}

/// Straight-line ALU and jump programs over full-range values: every op,
/// width and operand form, with register pairs that alias the registers
/// the JIT treats specially (r0/r3 for division, r4 for shift counts).
#[test]
fn jit_alu_semantics() {
    let mut rng = Rng::new(0xa1);
    let spec = ProgramSpec::new(64);
    let regs = [0u8, 1, 2, 3, 4, 5, 6, 7, 8, 9];
    for _ in 0..1500 {
        let mut a = Asm::new();
        // Load eight full-width values from the context into r0, r2-r9.
        for (i, r) in [0u8, 2, 3, 4, 5, 6, 7, 8, 9].into_iter().enumerate() {
            a.ldx_dw(r, 1, (i as i16 % 8) * 8);
        }
        a.ldx_dw(1, 1, 56);
        for _ in 0..12 {
            let dst = rng.pick(&regs);
            let src = rng.pick(&regs);
            let op = rng.pick(&ALU_OPS);
            let w = rng.chance(50);
            match op {
                ALU_NEG => {
                    if w {
                        a.neg64(dst);
                    } else {
                        a.neg32(dst);
                    }
                }
                ALU_DIV | ALU_MOD => {
                    let skip = a.label();
                    if rng.chance(50) {
                        let imm = rng.imm();
                        let imm = if imm == 0 { 7 } else { imm };
                        if w {
                            a.alu64_imm(op, dst, imm)
                        } else {
                            a.alu32_imm(op, dst, imm)
                        };
                    } else {
                        if w {
                            a.jeq_imm(src, 0, skip);
                        } else {
                            // The verifier tracks 32-bit facts only for
                            // values already below 2^32.
                            a.mov32_reg(src, src).jmp32_imm(JMP_JEQ, src, 0, skip);
                        }
                        if w {
                            a.alu64_reg(op, dst, src)
                        } else {
                            a.alu32_reg(op, dst, src)
                        };
                    }
                    a.bind(skip);
                }
                ALU_LSH | ALU_RSH | ALU_ARSH if rng.chance(50) => {
                    let n = rng.range(0, if w { 63 } else { 31 }) as i32;
                    if w {
                        a.alu64_imm(op, dst, n)
                    } else {
                        a.alu32_imm(op, dst, n)
                    };
                }
                _ if rng.chance(50) => {
                    if w {
                        a.alu64_reg(op, dst, src)
                    } else {
                        a.alu32_reg(op, dst, src)
                    };
                }
                _ => {
                    let mut imm = rng.imm();
                    if matches!(op, ALU_LSH | ALU_RSH | ALU_ARSH) {
                        imm &= if w { 63 } else { 31 };
                    }
                    if w {
                        a.alu64_imm(op, dst, imm)
                    } else {
                        a.alu32_imm(op, dst, imm)
                    };
                }
            }
            if rng.chance(15) {
                let width = rng.pick(&[16, 32, 64]);
                if rng.chance(50) {
                    a.be(dst, width)
                } else {
                    a.le(dst, width)
                };
            }
            if rng.chance(30) {
                // Fold a comparison result into r0 so jumps are observable.
                let skip = a.label();
                let jop = rng.pick(&JMP_OPS);
                let x = rng.pick(&SCALARS[1..]);
                match rng.below(4) {
                    0 => a.jmp_reg(jop, dst, x, skip),
                    1 => a.jmp32_reg(jop, dst, x, skip),
                    2 => a.jmp_imm(jop, dst, rng.imm(), skip),
                    _ => a.jmp32_imm(jop, dst, rng.imm(), skip),
                };
                a.xor64_imm(0, 0x5a5a).bind(skip);
            }
        }
        // Mix all registers into r0.
        for r in 1..10 {
            a.mul64_imm(0, 31).add64_reg(0, r);
        }
        a.exit();
        let insns = a.finish().unwrap();
        let prog = verify(&insns, &spec).unwrap_or_else(|e| panic!("{e}\n{insns:#?}"));
        check(&prog, &mut rng, 4, "alu");
    }
}

/// Spectre clamping must never change an in-bounds result: loads at every
/// offset of a region through a register offset.
#[test]
fn masked_loads_are_exact_in_bounds() {
    let spec = ProgramSpec::new(8).with_regions(&[100]);
    for size in [SIZE_B, SIZE_H, SIZE_W, SIZE_DW] {
        let n = access_bytes(size) as i32;
        let mut a = Asm::new();
        let out = a.label();
        a.mov64_imm(0, 0)
            .ldx_dw(2, 1, 0)
            .jgt_imm(2, 100 - n, out)
            .ld_region(3, 0, 0)
            .add64_reg(3, 2)
            .raw(bpf::Insn::new(CLASS_LDX | MODE_MEM | size, 0, 3, 0, 0))
            .bind(out)
            .exit();
        let prog = verify(&a.finish().unwrap(), &spec).unwrap();
        assert!(prog.access().iter().any(|x| matches!(x, bpf::Access::Mem { masked: true, .. })));
        let exe = Executable::new(&compile(&prog));
        let region: Vec<u8> = (0..100u8).map(|i| i.wrapping_mul(37)).collect();
        for off in 0..=(100 - n) as u64 {
            let ctx = off.to_le_bytes();
            let want = interp_one(&prog, &ctx, &region);
            assert_eq!(exe.call(&ctx, &[&region], &[]), want, "size {n} off {off}");
        }
    }
}

fn interp_one(prog: &bpf::VerifiedProgram, ctx: &[u8], region: &[u8]) -> u64 {
    let regions: [&[u8]; 1] = [region];
    run(prog, &Memory { ctx, regions: &regions, packet: &[] }).unwrap()
}
