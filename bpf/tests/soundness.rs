//! Property test: random programs the verifier accepts never break one of
//! its guarantees in the oracle interpreter (out-of-object access, division
//! by zero, uninitialised read, pointer misuse or leak), and enough
//! programs are accepted for this to mean something.

mod common;

use bpf::{run, verify, Memory};
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
            let mem = Memory { ctx: &inputs.ctx, regions: &regions, packet: &inputs.packet };
            match run(&prog, &mem) {
                Ok(_) => {}
                Err(e) if e.is_verifier_bug() => {
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
