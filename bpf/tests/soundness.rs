//! Property test: random programs the verifier accepts never access memory
//! outside the object assigned to each instruction (checked by the guarded
//! interpreter), and enough programs are accepted for this to mean something.

mod common;

use bpf::{run, verify, Memory, RunError};
use common::{gen_program, gen_spec, Inputs, Rng};

#[test]
fn accepted_programs_stay_in_bounds() {
    let programs = 15_000;
    let mut accepted = 0;
    let mut rng = Rng::new(0x5eed);
    for n in 0..programs {
        let spec = gen_spec(&mut rng);
        let insns = gen_program(&mut rng, &spec);
        let Ok(prog) = verify(&insns, &spec) else {
            continue;
        };
        accepted += 1;
        for _ in 0..8 {
            let inputs = Inputs::new(&mut rng, &spec);
            let regions = inputs.region_slices();
            let mem = Memory {
                ctx: &inputs.ctx,
                regions: &regions,
                packet: &inputs.packet,
            };
            match run(&prog, &mem) {
                Ok(_) => {}
                Err(e @ RunError::Violation { .. }) => {
                    panic!("program {n} accepted but {e:?}\nspec {spec:?}\n{insns:#?}")
                }
                Err(e) => panic!("bad inputs: {e:?}"),
            }
        }
    }
    eprintln!("accepted {accepted} of {programs}");
    assert!(
        accepted * 100 >= programs * 30,
        "only {accepted} of {programs} accepted: the generator is too weak"
    );
}

/// Which reasons dominate rejections of generated programs (run with
/// `--nocapture --ignored` to tune the generator).
#[test]
#[ignore]
fn rejection_histogram() {
    let mut hist = std::collections::BTreeMap::new();
    let mut rng = Rng::new(0x5eed);
    for _ in 0..4000 {
        let spec = gen_spec(&mut rng);
        let insns = gen_program(&mut rng, &spec);
        if let Err(e) = verify(&insns, &spec) {
            let name = format!("{:?}", e.reason);
            let name = name.split([' ', '(', '{']).next().unwrap().to_string();
            *hist.entry(name).or_insert(0) += 1;
        }
    }
    eprintln!("{hist:#?}");
}

#[test]
#[ignore]
fn show_rejections() {
    let want = std::env::var("REASON").unwrap_or_default();
    let mut rng = Rng::new(0x5eed);
    let mut shown = 0;
    for _ in 0..4000 {
        let spec = gen_spec(&mut rng);
        let insns = gen_program(&mut rng, &spec);
        if let Err(e) = verify(&insns, &spec) {
            if format!("{:?}", e.reason).starts_with(&want) && shown < 2 {
                shown += 1;
                eprintln!("{e}\n{spec:?}");
                for (i, insn) in insns.iter().enumerate() {
                    eprintln!("{i:3}: {insn:?}");
                }
            }
        }
    }
}
