//! The shape analysis: canonical filters are recognised exactly (built by
//! `Pattern` or compiled from C by clang), and for every filter, canonical
//! or not, the claim contains every frame the program accepts (checked
//! against the interpreter on random filter-like programs and frames).

mod common;

use std::path::Path;
use std::process::Command;

use bpf::gen::Rng;
use bpf::insn::{Insn, JMP_JEQ, JMP_JGT, JMP_JLT, JMP_JNE, JMP_JSET};
use bpf::{Asm, Memory, VerifiedProgram};
use common::*;
use dpf::pattern::{Pattern, IPPROTO_TCP};
use dpf::{filter_spec, shape, Cube, Shape};

fn verified(insns: &[Insn]) -> VerifiedProgram {
    bpf::verify(insns, &filter_spec()).unwrap_or_else(|e| panic!("{e}\n{insns:?}"))
}

fn accepts(p: &VerifiedProgram, frame: &[u8]) -> bool {
    let ctx = [0u8; 16];
    bpf::run(p, &Memory { ctx: &ctx, regions: &[], packet: frame }).unwrap() != 0
}

fn cube(tests: &[(u16, u8, u8)], min_len: u16) -> Cube {
    let mut c = Cube::universal();
    for &(o, m, v) in tests {
        assert!(c.constrain(o, m, v));
    }
    c.min_len = min_len;
    c
}

fn tcp80_cube() -> Cube {
    cube(
        &[(12, 0xff, 8), (13, 0xff, 0), (14, 0xff, 0x45), (23, 0xff, 6)]
            .into_iter()
            .chain(HOST.iter().enumerate().map(|(i, &b)| (30 + i as u16, 0xff, b)))
            .chain([(36, 0xff, 0), (37, 0xff, 80)])
            .collect::<Vec<_>>(),
        38,
    )
}

#[test]
fn patterns_are_canonical_with_their_exact_cube() {
    let p = verified(&tcp_port(HOST, 80));
    assert_eq!(shape(&p), Shape::Canonical(tcp80_cube()));
    // A masked atom: IPv4 of any header length.
    let p = verified(&Pattern::new().ethertype(0x0800).atom(14, 1, 0xf0, 0x40).program());
    assert_eq!(shape(&p), Shape::Canonical(cube(&[(12, 0xff, 8), (13, 0xff, 0), (14, 0xf0, 0x40)], 15)));
}

fn clang(src: &Path, section: &str) -> Vec<Insn> {
    let stem = src.file_stem().unwrap().to_str().unwrap();
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("dpf_{stem}.o"));
    let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("../bpf/include");
    let status = Command::new("clang")
        .args(["-target", "bpf", "-O2", "-g0", "-c", "-I"])
        .arg(include)
        .arg(src)
        .arg("-o")
        .arg(&out)
        .status();
    match status {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            panic!("clang not found: run `cargo xtask test`, which installs it")
        }
        Err(e) => panic!("running clang: {e}"),
        Ok(s) => assert!(s.success(), "clang failed on {}", src.display()),
    }
    bpf::object::load(&std::fs::read(out).unwrap(), section, &[]).unwrap()
}

#[test]
fn a_c_filter_compiled_by_clang_is_canonical() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("filters/tcp_port.c");
    let p = verified(&clang(&src, "filter"));
    assert_eq!(shape(&p), Shape::Canonical(tcp80_cube()));
}

#[test]
fn a_variable_header_length_filter_is_opaque_and_claims_a_superset() {
    // bpf/examples/udp_filter.c: UDP port 53 behind a variable IP header.
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../bpf/examples/udp_filter.c");
    let p = verified(&clang(&src, "filter"));
    let Shape::Opaque(claim) = shape(&p) else { panic!("canonical?") };
    // Everything IPv4 version 4 UDP: the port is behind an unknown offset.
    assert_eq!(claim, [cube(&[(12, 0xff, 8), (13, 0xff, 0), (14, 0xf0, 0x40), (23, 0xff, 17)], 0)]);
}

/// A value computed from packet bytes the way filters do, with its
/// concrete value on a reference frame.
struct Gen<'a> {
    rng: &'a mut Rng,
    a: Asm,
    frame: &'a [u8],
    n: usize,
}

impl Gen<'_> {
    fn load(&mut self, reg: u8) -> u64 {
        let w = self.rng.pick(&[1usize, 2, 4, 8]);
        let off = self.rng.below((self.n - w + 1) as u64) as usize;
        let b = &self.frame[off..off + w];
        let v = b.iter().rev().fold(0u64, |acc, &x| acc << 8 | u64::from(x)); // little-endian
        match w {
            1 => self.a.ldx_b(reg, 2, off as i16),
            2 => self.a.ldx_h(reg, 2, off as i16),
            4 => self.a.ldx_w(reg, 2, off as i16),
            _ => self.a.ldx_dw(reg, 2, off as i16),
        };
        v
    }

    /// Transforms r5 (value `v`), returns the new value.
    fn transform(&mut self, mut v: u64) -> u64 {
        for _ in 0..self.rng.below(3) {
            match self.rng.below(10) {
                9 => {
                    // The value with itself: doubling carries, or/and keep it, xor clears it.
                    match self.rng.below(4) {
                        0 => {
                            self.a.add64_reg(5, 5);
                            v = v.wrapping_add(v);
                        }
                        1 => _ = self.a.or64_reg(5, 5),
                        2 => _ = self.a.and64_reg(5, 5),
                        _ => {
                            self.a.xor64_reg(5, 5);
                            v = 0;
                        }
                    }
                }
                0 => {
                    let w = self.rng.pick(&[16, 32, 64]);
                    self.a.be(5, w);
                    v = bpf::insn::endian(v, w, true);
                }
                1 => {
                    let m = self.rng.imm();
                    self.a.and64_imm(5, m);
                    v &= m as i64 as u64;
                }
                2 => {
                    let k = self.rng.below(40) as i32;
                    self.a.rsh64_imm(5, k);
                    v >>= k;
                }
                3 => {
                    let k = self.rng.below(40) as i32;
                    self.a.lsh64_imm(5, k);
                    v <<= k;
                }
                4 => {
                    let x = self.rng.imm();
                    self.a.xor64_imm(5, x);
                    v ^= x as i64 as u64;
                }
                5 => {
                    // Combine with another byte: (v << 8) | byte, or + byte.
                    let w = self.load(6);
                    let w = w & 0xff;
                    self.a.and64_imm(6, 0xff).lsh64_imm(5, 8);
                    v <<= 8;
                    if self.rng.chance(50) {
                        self.a.or64_reg(5, 6);
                        v |= w;
                    } else {
                        self.a.add64_reg(5, 6);
                        v = v.wrapping_add(w);
                    }
                }
                6 => {
                    self.a.mul64_imm(5, 3);
                    v = v.wrapping_mul(3);
                }
                7 => {
                    self.a.mov32_reg(5, 5);
                    v &= 0xffff_ffff;
                }
                _ => {
                    let k = self.rng.below(20) as i32;
                    self.a.arsh32_imm(5, k);
                    v = ((v as u32 as i32) >> k) as u32 as u64;
                }
            }
        }
        v
    }
}

/// A random filter-like program whose comparisons often hold on `frame`.
fn filter_like(rng: &mut Rng, frame: &[u8]) -> Vec<Insn> {
    let n = 14 + rng.below(50.min(frame.len() as u64 - 13)) as usize;
    let mut g = Gen { rng, a: Asm::new(), frame, n };
    let (fail, accept) = (g.a.label(), g.a.label());
    g.a.mov64_imm(0, 0).ldx_w(2, 1, 0).ldx_w(3, 1, 4).mov64_reg(4, 2).add64_imm(4, n as i32);
    let op = g.rng.pick(&[JMP_JGT, JMP_JGT, JMP_JLT]);
    if op == JMP_JGT {
        g.a.jmp_reg(JMP_JGT, 4, 3, fail);
    } else {
        // "if end < p" is the same bound written the other way round.
        g.a.jmp_reg(JMP_JLT, 3, 4, fail);
    }
    for _ in 0..1 + g.rng.below(6) {
        let v = g.load(5);
        let v = g.transform(v);
        let is32 = g.rng.chance(30);
        let c = if g.rng.chance(75) { v } else { g.rng.next_u64() };
        let c = if is32 { c as u32 as i32 } else { c as i32 };
        let op = g.rng.pick(&[JMP_JEQ, JMP_JNE, JMP_JNE, JMP_JNE, JMP_JSET, JMP_JGT]);
        let target = match (op, g.rng.below(4)) {
            (JMP_JNE, 0..=2) => fail,
            (_, 0) => accept,
            _ => fail,
        };
        if is32 {
            g.a.jmp32_imm(op, 5, c, target);
        } else {
            g.a.jmp_imm(op, 5, c, target);
        }
    }
    if g.rng.chance(80) {
        g.a.bind(accept).mov64_imm(0, 1);
    } else {
        g.a.mov64_reg(0, 5).bind(accept);
    }
    g.a.bind(fail).exit();
    g.a.finish().unwrap()
}

#[test]
fn claims_contain_every_accepted_frame() {
    let mut rng = Rng::new(0xd1ff);
    let (mut programs, mut canonical, mut runs, mut accepted) = (0, 0, 0, 0);
    for _ in 0..3000 {
        let len = 14 + rng.below(70) as usize;
        let reference: Vec<u8> = (0..len).map(|_| rng.below(256) as u8).collect();
        let insns = filter_like(&mut rng, &reference);
        let Ok(p) = bpf::verify(&insns, &filter_spec()) else { continue };
        programs += 1;
        let s = shape(&p);
        canonical += matches!(s, Shape::Canonical(_)) as u32;
        for i in 0..40 {
            let mut f = reference.clone();
            for _ in 0..rng.below(3) * (i % 2) {
                let at = rng.below(f.len() as u64) as usize;
                f[at] ^= 1 << rng.below(8);
            }
            if rng.chance(10) {
                f.truncate(rng.below(f.len() as u64 + 1) as usize);
            }
            let ok = accepts(&p, &f);
            runs += 1;
            accepted += ok as u32;
            match &s {
                Shape::Canonical(c) => assert_eq!(ok, c.contains(&f), "{insns:?}\nframe {f:?}\ncube {c:?}"),
                Shape::Opaque(claim) => {
                    assert!(
                        !ok || claim.iter().any(|c| c.contains(&f)),
                        "{insns:?}\nframe {f:?}\nclaim {claim:?}"
                    )
                }
            }
        }
    }
    // The test means something only if it covered both kinds and both answers.
    assert!(programs > 2500 && canonical > 300 && programs - canonical > 300, "{programs} {canonical}");
    assert!(accepted > runs / 10 && accepted < runs * 9 / 10, "{accepted} of {runs}");
}

#[test]
fn budget_exhaustion_claims_everything() {
    // 12 independent two-way branches that both continue: 4096 paths.
    let mut a = Asm::new();
    let fail = a.label();
    a.mov64_imm(0, 0).ldx_w(2, 1, 0).ldx_w(3, 1, 4).mov64_reg(4, 2).add64_imm(4, 20);
    a.jmp_reg(JMP_JGT, 4, 3, fail);
    for i in 0..12 {
        let skip = a.label();
        a.ldx_b(5, 2, i).jmp_imm(JMP_JEQ, 5, 7, skip).add64_imm(0, 1).bind(skip);
    }
    a.ldx_b(5, 2, 12).jmp_imm(JMP_JNE, 5, 1, fail).mov64_imm(0, 1);
    a.bind(fail).exit();
    let p = verified(&a.finish().unwrap());
    assert_eq!(shape(&p), Shape::Opaque(vec![Cube::universal()]));
    let _ = IPPROTO_TCP;
}
