//! Compiles the restricted-C examples in `examples/` with
//! `clang -target bpf -O2 -c`, loads them with the object loader, verifies
//! them and checks the interpreter and the JIT give the expected answers.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use bpf::object::load;
use bpf::{compile, run, verify, Memory, PacketFields, ProgramSpec, VerifiedProgram};
use common::Executable;

fn compile_c(name: &str) -> Vec<u8> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out: PathBuf = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}.o"));
    let status = Command::new("clang")
        .args(["-target", "bpf", "-O2", "-g0", "-c"])
        .arg("-I")
        .arg(dir.join("include"))
        .arg(dir.join("examples").join(format!("{name}.c")))
        .arg("-o")
        .arg(&out)
        .status();
    match status {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            panic!("clang not found: run `cargo xtask test`, which installs it")
        }
        Err(e) => panic!("running clang: {e}"),
        Ok(s) => assert!(s.success(), "clang failed on {name}.c"),
    }
    std::fs::read(out).unwrap()
}

fn build(name: &str, section: &str, regions: &[&str], spec: &ProgramSpec) -> VerifiedProgram {
    let obj = compile_c(name);
    let insns = load(&obj, section, regions).unwrap_or_else(|e| panic!("{name}: {e}"));
    verify(&insns, spec).unwrap_or_else(|e| panic!("{name}: {e}\n{insns:#?}"))
}

/// Runs both back ends and insists they agree.
fn both(prog: &VerifiedProgram, ctx: &[u8], regions: &[&[u8]], packet: &[u8]) -> u64 {
    let mem = Memory { ctx, regions, packet };
    let want = run(prog, &mem).unwrap();
    let exe = Executable::new(&compile(prog));
    assert_eq!(exe.call(ctx, regions, packet), want, "JIT disagrees");
    want
}

fn u64s(vals: &[u64]) -> Vec<u8> {
    vals.iter().flat_map(|v| v.to_le_bytes()).collect()
}

#[test]
fn deadline_predicate() {
    let spec = ProgramSpec::new(16).with_regions(&[16]);
    let prog = build("deadline", "predicate", &["clock"], &spec);
    let clock = u64s(&[1000, 7]);
    assert_eq!(both(&prog, &u64s(&[999, 0]), &[&clock], &[]), 1);
    assert_eq!(both(&prog, &u64s(&[1000, 0]), &[&clock], &[]), 1);
    assert_eq!(both(&prog, &u64s(&[1001, 0]), &[&clock], &[]), 0);
}

#[test]
fn predicate_over_two_regions() {
    let spec = ProgramSpec::new(16).with_regions(&[16, 264]);
    let prog = build("two_regions", "predicate", &["clock", "pipe"], &spec);
    let clock = u64s(&[500, 0]);
    let mut pipe = vec![0u8; 264];
    pipe[8 + 4 * 10] = 40; // fill[10] = 40
    let ctx = |timeout: u64, slot: u32, min: u32| {
        let mut c = timeout.to_le_bytes().to_vec();
        c.extend(slot.to_le_bytes());
        c.extend(min.to_le_bytes());
        c
    };
    assert_eq!(both(&prog, &ctx(1000, 10, 32), &[&clock, &pipe], &[]), 1);
    assert_eq!(both(&prog, &ctx(1000, 10, 41), &[&clock, &pipe], &[]), 0);
    assert_eq!(both(&prog, &ctx(400, 10, 41), &[&clock, &pipe], &[]), 3);
    assert_eq!(both(&prog, &ctx(1000, 9999, 0), &[&clock, &pipe], &[]), 0);
    pipe[0] = 1; // closed
    assert_eq!(both(&prog, &ctx(1000, 10, 41), &[&clock, &pipe], &[]), 2);
}

fn udp_packet(ihl: u8, proto: u8, dport: u16) -> Vec<u8> {
    let mut p = vec![0u8; 12];
    p.extend([0x08, 0x00]); // IPv4
    let ip_len = ihl as usize * 4;
    let mut ip = vec![0u8; ip_len];
    ip[0] = 0x40 | ihl;
    ip[9] = proto;
    p.extend(ip);
    p.extend(1234u16.to_be_bytes());
    p.extend(dport.to_be_bytes());
    p.extend([0, 8, 0, 0]);
    p
}

#[test]
fn udp_port_filter() {
    let spec = ProgramSpec::new(16).with_packet(PacketFields { data_off: 0, data_end_off: 4, width: 4 });
    let prog = build("udp_filter", "filter", &[], &spec);
    let ctx = [0u8; 16];
    assert_eq!(both(&prog, &ctx, &[], &udp_packet(5, 17, 53)), 1);
    assert_eq!(both(&prog, &ctx, &[], &udp_packet(7, 17, 53)), 1);
    assert_eq!(both(&prog, &ctx, &[], &udp_packet(5, 17, 54)), 0);
    assert_eq!(both(&prog, &ctx, &[], &udp_packet(5, 6, 53)), 0);
    let full = udp_packet(6, 17, 53);
    assert_eq!(both(&prog, &ctx, &[], &full[..full.len() - 5]), 0);
    assert_eq!(both(&prog, &ctx, &[], &full[..20]), 0);
    assert_eq!(both(&prog, &ctx, &[], &[]), 0);
}

#[test]
fn loader_reports_missing_bindings() {
    let obj = compile_c("two_regions");
    let err = load(&obj, "predicate", &["clock"]).unwrap_err();
    assert_eq!(err, bpf::object::ObjectError::UnknownSymbol("pipe".into()));
    let err = load(&obj, "nope", &["clock", "pipe"]).unwrap_err();
    assert_eq!(err, bpf::object::ObjectError::NoSuchSection("nope".into()));
    // Regions bound in the other order still verify with sizes swapped.
    let insns = load(&obj, "predicate", &["pipe", "clock"]).unwrap();
    verify(&insns, &ProgramSpec::new(16).with_regions(&[264, 16])).unwrap();
    // A pipe region too small for the checked index is rejected.
    let insns = load(&obj, "predicate", &["clock", "pipe"]).unwrap();
    let err = verify(&insns, &ProgramSpec::new(16).with_regions(&[16, 200])).unwrap_err();
    assert!(matches!(err.reason, bpf::Reason::RegionOutOfBounds { region: 1, .. }), "{err}");
}

/// Truncated and corrupted objects produce errors, never panics.
#[test]
fn corrupted_objects_are_rejected_cleanly() {
    let obj = compile_c("two_regions");
    for len in 0..obj.len() {
        let _ = load(&obj[..len], "predicate", &["clock", "pipe"]);
    }
    let mut rng = common::Rng::new(77);
    for _ in 0..3000 {
        let mut bad = obj.clone();
        for _ in 0..rng.range(1, 8) {
            let i = rng.below(bad.len() as u64) as usize;
            bad[i] = rng.next_u64() as u8;
        }
        if let Ok(insns) = load(&bad, "predicate", &["clock", "pipe"]) {
            let _ = verify(&insns, &ProgramSpec::new(16).with_regions(&[16, 264]));
        }
    }
    assert_eq!(load(b"\x7fELF", "x", &[]), Err(bpf::object::ObjectError::Truncated("ELF header")));
    assert_eq!(load(b"MZ\0\0\0\0", "x", &[]), Err(bpf::object::ObjectError::BadMagic));
}
