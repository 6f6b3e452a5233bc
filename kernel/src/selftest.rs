//! Boot-time self-test of the in-kernel JIT, run when the command line
//! holds `selftest=jit`: random programs the verifier accepts are compiled,
//! installed in executable kernel pages and run there, and every result
//! must equal the reference interpreter's. (The host tests do the same with
//! the code in a host mapping; this checks the kernel's own path.)

use crate::state::Kernel;
use alloc::vec::Vec;
use bpf::gen::{gen_program, gen_spec, Inputs, Rng};

/// Runs `programs` random programs, `runs` inputs each; panics (failing
/// the boot) on the first disagreement. Returns how many were accepted.
pub fn jit(k: &mut Kernel, programs: usize, runs: usize, seed: u64) -> usize {
    let mut rng = Rng::new(seed);
    let mut accepted = 0;
    for n in 0..programs {
        let spec = gen_spec(&mut rng);
        let insns = gen_program(&mut rng, &spec);
        let Ok(prog) = bpf::verify(&insns, &spec) else { continue };
        accepted += 1;
        let code = bpf::compile(&prog);
        let addr = k.mem.code_install(&code).expect("room for compiled code");
        for _ in 0..runs {
            let inputs = Inputs::new(&mut rng, prog.spec());
            let regions = inputs.region_slices();
            let mem = bpf::Memory { ctx: &inputs.ctx, regions: &regions, packet: &inputs.packet };
            let want = bpf::run(&prog, &mem).expect("verified programs run");
            // The JIT's clamped packet loads may touch up to 7 bytes past
            // the end: give the packet that slack.
            let mut packet = inputs.packet.clone();
            packet.resize(packet.len() + 8, 0);
            let table: Vec<*const u8> = regions.iter().map(|r| r.as_ptr()).collect();
            // SAFETY: `addr` holds code compiled from a verified program for
            // exactly this spec; every object passed matches it.
            let got = unsafe {
                let f: bpf::JitFn = core::mem::transmute(addr);
                f(inputs.ctx.as_ptr(), table.as_ptr(), packet.as_ptr(), inputs.packet.len())
            };
            assert_eq!(
                got, want,
                "JIT self-test: program {n} (seed {seed}): JIT {got:#x}, interpreter {want:#x}"
            );
        }
        k.mem.code_remove(addr, (code.len() as u64).div_ceil(4096));
    }
    accepted
}
