//! The differential verifier campaign (`cargo xtask fuzz verifier`):
//! random, join-stressing and mutated programs go through the verifier;
//! every accepted one runs on random inputs in the oracle interpreter,
//! which must report nothing (no out-of-object access, division by zero,
//! uninitialised read, pointer misuse or leak), and the inputs it ran
//! cleanly on then run in JIT-compiled code, which must return the same
//! r0. Program `n` of seed `s` is a pure function of `(s, n)`, so every
//! finding can be regenerated; findings are also written out as
//! regression cases in a small text format (`Case`) that a host test
//! replays.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::Write;

use crate::gen::{gen_program, gen_spec, Inputs, Rng};
use crate::insn::Insn;
use crate::interp::{run_checked, Memory, RunError};
use crate::stress::{gen_stress_program, mutate};
use crate::verifier::Beliefs;
use crate::{compile, verify, verify_with_beliefs, PacketFields, ProgramSpec, VerifiedProgram};

/// Random inputs each accepted program runs on.
pub const INPUTS_PER_PROGRAM: usize = 6;

/// Runs JIT output natively: `code` from `compile`, one r0 per input.
pub type Native<'a> = &'a mut dyn FnMut(&[u8], &[&Inputs]) -> Vec<u64>;

/// What went wrong with an accepted program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Broken {
    /// The oracle reported a broken guarantee.
    Oracle(RunError),
    /// The JIT returned another r0 than the interpreter.
    Disagreement { interp: u64, jit: u64 },
}

/// One accepted program that broke a rule, with the input that showed it.
pub struct Case {
    pub spec: ProgramSpec,
    pub insns: Vec<Insn>,
    pub inputs: Inputs,
    pub note: String,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub programs: u64,
    pub accepted: u64,
    /// Interpreter runs and JIT runs of accepted programs.
    pub runs: u64,
    pub jit_runs: u64,
    pub violations: u64,
    pub disagreements: u64,
}

impl Stats {
    pub fn add(&mut self, o: &Stats) {
        self.programs += o.programs;
        self.accepted += o.accepted;
        self.runs += o.runs;
        self.jit_runs += o.jit_runs;
        self.violations += o.violations;
        self.disagreements += o.disagreements;
    }
}

/// Program `n` of the campaign with seed `seed`: a spec and instructions.
/// A third are the general generator's, half join-stressing ones, the rest
/// mutants of either (mutated after acceptance when possible).
pub fn program(seed: u64, n: u64) -> (ProgramSpec, Vec<Insn>, Rng) {
    let mut rng = Rng::new(seed.wrapping_mul(0x2545_f491_4f6c_dd1d) ^ n.wrapping_mul(0x9e37_79b9));
    let spec = gen_spec(&mut rng);
    let kind = rng.below(6);
    let mut insns = if kind < 2 || (kind == 5 && rng.chance(50)) {
        gen_program(&mut rng, &spec)
    } else {
        gen_stress_program(&mut rng, &spec)
    };
    if kind == 5 {
        for _ in 0..4 {
            if verify(&insns, &spec).is_ok() {
                break;
            }
            insns = gen_stress_program(&mut rng, &spec);
        }
        mutate(&mut rng, &mut insns);
    }
    (spec, insns, rng)
}

/// Runs programs `first..first + count` of seed `seed`; calls `found` for
/// every broken rule.
pub fn run_campaign(
    seed: u64,
    first: u64,
    count: u64,
    native: Native,
    found: &mut dyn FnMut(u64, &Broken, Case),
) -> Stats {
    let mut st = Stats::default();
    for n in first..first + count {
        st.programs += 1;
        let (spec, insns, mut rng) = program(seed, n);
        let Ok((prog, beliefs)) = verify_with_beliefs(&insns, &spec) else { continue };
        st.accepted += 1;
        let inputs: Vec<Inputs> = (0..INPUTS_PER_PROGRAM).map(|_| Inputs::new(&mut rng, &spec)).collect();
        let mut clean = Vec::new();
        for i in inputs {
            st.runs += 1;
            match oracle(&prog, &beliefs, &i) {
                Ok(r0) => clean.push((i, r0)),
                Err(e) => {
                    st.violations += 1;
                    let note = format!("seed {seed:#x} program {n}: {e:?}");
                    found(
                        n,
                        &Broken::Oracle(e),
                        Case { spec: spec.clone(), insns: insns.clone(), inputs: i, note },
                    );
                }
            }
        }
        if clean.is_empty() {
            continue;
        }
        let refs: Vec<&Inputs> = clean.iter().map(|(i, _)| i).collect();
        let got = native(&compile(&prog), &refs);
        for ((i, want), jit) in clean.into_iter().zip(got) {
            st.jit_runs += 1;
            if jit != want {
                st.disagreements += 1;
                let b = Broken::Disagreement { interp: want, jit };
                let note = format!("seed {seed:#x} program {n}: {b:?}");
                found(n, &b, Case { spec: spec.clone(), insns: insns.clone(), inputs: i, note });
            }
        }
    }
    st
}

/// The oracle interpreter on one input, checking every register against
/// what the verifier believed.
pub fn oracle(prog: &VerifiedProgram, beliefs: &Beliefs, i: &Inputs) -> Result<u64, RunError> {
    let regions = i.region_slices();
    run_checked(prog, &Memory { ctx: &i.ctx, regions: &regions, packet: &i.packet }, beliefs)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

fn unhex(s: &str) -> Result<Vec<u8>, &'static str> {
    let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    if !s.len().is_multiple_of(2) {
        return Err("odd number of hex digits");
    }
    (0..s.len() / 2).map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).map_err(|_| "bad hex")).collect()
}

impl Case {
    /// The text form: `#` comment lines, then `spec`, `insn`, `ctx`,
    /// `region` and `packet` lines (byte strings in hex).
    pub fn to_text(&self) -> String {
        let mut s = format!("# {}\nspec ctx={}", self.note, self.spec.ctx_size);
        let regions: Vec<String> = self.spec.regions.iter().map(|r| format!("{r}")).collect();
        let _ = write!(s, " regions={}", regions.join(","));
        if let Some(p) = self.spec.packet {
            let _ = write!(s, " packet={},{},{}", p.data_off, p.data_end_off, p.width);
        }
        s.push('\n');
        for i in &self.insns {
            let _ = writeln!(s, "insn {}", hex(&i.to_bytes()));
        }
        let _ = writeln!(s, "ctx {}", hex(&self.inputs.ctx));
        for r in &self.inputs.regions {
            let _ = writeln!(s, "region {}", hex(r));
        }
        let _ = writeln!(s, "packet {}", hex(&self.inputs.packet));
        s
    }

    pub fn parse(text: &str) -> Result<Case, &'static str> {
        let mut spec = None;
        let (mut insns, mut ctx, mut regions, mut packet) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut note = String::new();
        for line in text.lines() {
            let (key, rest) = line.split_once(' ').unwrap_or((line, ""));
            match key {
                "#" => note = String::from(rest),
                "spec" => spec = Some(parse_spec(rest)?),
                "insn" => {
                    let b: [u8; 8] = unhex(rest)?.try_into().map_err(|_| "instruction is not 8 bytes")?;
                    insns.push(Insn::from_bytes(b));
                }
                "ctx" => ctx = unhex(rest)?,
                "region" => regions.push(unhex(rest)?),
                "packet" => packet = unhex(rest)?,
                "" => {}
                _ => return Err("unknown line"),
            }
        }
        let spec = spec.ok_or("no spec line")?;
        Ok(Case { spec, insns, inputs: Inputs { ctx, regions, packet }, note })
    }
}

fn parse_spec(s: &str) -> Result<ProgramSpec, &'static str> {
    let mut spec = ProgramSpec::new(0);
    for field in s.split_whitespace() {
        let (k, v) = field.split_once('=').ok_or("spec field without =")?;
        let nums: Vec<u32> = v
            .split(',')
            .filter(|x| !x.is_empty())
            .map(|x| x.parse().map_err(|_| "bad number"))
            .collect::<Result<_, _>>()?;
        match (k, nums.as_slice()) {
            ("ctx", [n]) => spec.ctx_size = *n,
            ("regions", r) => spec.regions = r.to_vec(),
            ("packet", [d, e, w]) => {
                spec.packet = Some(PacketFields { data_off: *d, data_end_off: *e, width: *w })
            }
            _ => return Err("bad spec field"),
        }
    }
    Ok(spec)
}
