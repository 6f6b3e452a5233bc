//! A short, stable-Rust stand-in for the `cargo fuzz` target in `fuzz/`:
//! random byte strings and mutated generated programs go through decoding
//! and verification (which must never panic); whatever is accepted runs in
//! the oracle interpreter (which must report no broken guarantee) and,
//! for mutants, in the JIT (which must agree with the interpreter).

mod common;

use bpf::insn::*;
use bpf::{compile, run, verify, verify_bytes, Memory, ProgramSpec, VerifiedProgram};
use common::{gen_program, gen_spec, Executable, Inputs, Rng};

fn guarded_run(prog: &VerifiedProgram, rng: &mut Rng) -> Vec<(Inputs, u64)> {
    (0..3)
        .map(|_| {
            let inputs = Inputs::new(rng, prog.spec());
            let regions = inputs.region_slices();
            let mem = Memory { ctx: &inputs.ctx, regions: &regions, packet: &inputs.packet };
            match run(prog, &mem) {
                Ok(r0) => (inputs, r0),
                Err(e) if e.is_verifier_bug() => {
                    panic!("accepted program misbehaved: {e:?}\n{:#?}", prog.insns())
                }
                Err(e) => panic!("{e:?}"),
            }
        })
        .collect()
}

/// Opcodes that decode to something, so random programs get past the
/// first instruction more often than with uniformly random bytes.
fn plausible_opcode(rng: &mut Rng) -> u8 {
    match rng.below(4) {
        0 => rng.next_u64() as u8,
        1 => CLASS_ALU64 | rng.pick(&common::ALU_OPS) | rng.pick(&[SRC_K, SRC_X]),
        2 => CLASS_JMP | rng.pick(&common::JMP_OPS) | rng.pick(&[SRC_K, SRC_X]),
        _ => rng.pick(&[
            CLASS_LDX | MODE_MEM | SIZE_W,
            CLASS_LDX | MODE_MEM | SIZE_DW,
            CLASS_STX | MODE_MEM | SIZE_DW,
            CLASS_ST | MODE_MEM | SIZE_B,
            CLASS_JMP | JMP_EXIT,
            LD_IMM64,
        ]),
    }
}

#[test]
fn random_bytes_never_panic() {
    let mut rng = Rng::new(0xf022);
    let mut accepted = 0;
    for _ in 0..20_000 {
        let spec = gen_spec(&mut rng);
        let len = rng.pick(&[0usize, 1, 7, 8, 16, 24, 40, 64, 128]);
        let mut bytes: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
        for chunk in bytes.chunks_mut(8) {
            if chunk.len() == 8 && rng.chance(80) {
                chunk[0] = plausible_opcode(&mut rng);
                chunk[1] &= if rng.chance(80) { 0x77 } else { 0xff };
            }
        }
        if len >= 16 && rng.chance(50) {
            // Give the program a return value and an exit to reach.
            bytes[..8].copy_from_slice(&[0xb7, 0, 0, 0, 1, 0, 0, 0]);
            bytes[len - 8..].copy_from_slice(&[0x95, 0, 0, 0, 0, 0, 0, 0]);
        }
        if let Ok(prog) = verify_bytes(&bytes, &spec) {
            accepted += 1;
            guarded_run(&prog, &mut rng);
        }
    }
    eprintln!("random bytes: {accepted} accepted");
    assert!(accepted > 100);
}

#[test]
fn mutated_programs_never_escape() {
    let mut rng = Rng::new(0x3a7);
    let mut accepted = 0;
    for _ in 0..10_000 {
        let spec: ProgramSpec = gen_spec(&mut rng);
        let mut insns = gen_program(&mut rng, &spec);
        for _ in 0..rng.range(1, 3) {
            let i = rng.below(insns.len() as u64) as usize;
            let mut b = insns[i].to_bytes();
            let byte = rng.below(8) as usize;
            b[byte] ^= 1 << rng.below(8);
            insns[i] = bpf::Insn::from_bytes(b);
        }
        if let Ok(prog) = verify(&insns, &spec) {
            accepted += 1;
            let runs = guarded_run(&prog, &mut rng);
            if accepted % 4 == 0 {
                let exe = Executable::new(&compile(&prog));
                for (i, want) in runs {
                    let got = exe.call(&i.ctx, &i.region_slices(), &i.packet);
                    assert_eq!(got, want, "{:#?}", prog.insns());
                }
            }
        }
    }
    eprintln!("mutants: {accepted} accepted");
    assert!(accepted > 300);
}
