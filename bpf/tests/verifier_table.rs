//! Hand-written programs the verifier must reject (each with the exact
//! instruction index and reason) or accept.

use std::collections::HashSet;
use std::mem::discriminant;

use bpf::insn::*;
use bpf::{run, verify, verify_bytes, Asm, Insn, Memory, PacketFields, ProgramSpec, PtrKind};
use bpf::{Reason, Reason as R, Reject};

const CTX: u32 = 32;
const DATA: i16 = 24;
const DATA_END: i16 = 28;

/// Context of 32 bytes whose packet bounds are u32 fields at 24 and 28;
/// region 0 is 16 bytes, region 1 is 4096.
fn spec() -> ProgramSpec {
    ProgramSpec::new(CTX).with_regions(&[16, 4096]).with_packet(PacketFields {
        data_off: DATA as u32,
        data_end_off: DATA_END as u32,
        width: 4,
    })
}

fn raw(code: u8, dst: u8, src: u8, off: i16, imm: i32) -> Insn {
    Insn::new(code, dst, src, off, imm)
}

const EXIT: Insn = Insn::new(CLASS_JMP | JMP_EXIT, 0, 0, 0, 0);
const MOV0: Insn = Insn::new(CLASS_ALU64 | ALU_MOV, 0, 0, 0, 0);

fn prog(f: impl FnOnce(&mut Asm)) -> Vec<Insn> {
    let mut a = Asm::new();
    f(&mut a);
    a.finish().unwrap()
}

/// r2 = packet start, r3 = packet end.
fn packet_ptrs(a: &mut Asm) -> &mut Asm {
    a.ldx_w(2, 1, DATA).ldx_w(3, 1, DATA_END)
}

/// r2 = packet start proven to have 8 bytes; jumps to `out` otherwise.
fn proven_packet(a: &mut Asm, out: bpf::Label) -> &mut Asm {
    packet_ptrs(a).mov64_reg(4, 2).add64_imm(4, 8).jgt_reg(4, 3, out)
}

fn cases() -> Vec<(&'static str, ProgramSpec, Vec<Insn>, usize, Reason)> {
    let s = spec;
    vec![
        ("empty", s(), vec![], 0, R::EmptyProgram),
        (
            "too many",
            s().with_max_insns(2),
            vec![MOV0, MOV0, EXIT],
            2,
            R::TooManyInstructions { len: 3, max: 2 },
        ),
        (
            "too complex",
            s().with_max_steps(3),
            vec![MOV0, MOV0, MOV0, MOV0, EXIT],
            3,
            R::TooComplex { steps: 3 },
        ),
        ("unknown opcode", s(), vec![raw(0xff, 0, 0, 0, 0), EXIT], 0, R::UnknownOpcode(0xff)),
        ("unknown jump op", s(), vec![MOV0, raw(0xe5, 0, 0, 0, 0), EXIT], 1, R::UnknownOpcode(0xe5)),
        (
            "bad register",
            s(),
            prog(|a| {
                a.mov64_imm(11, 0).exit();
            }),
            0,
            R::BadRegister(11),
        ),
        (
            "bad src register",
            s(),
            prog(|a| {
                a.mov64_reg(0, 12).exit();
            }),
            0,
            R::BadRegister(12),
        ),
        (
            "write r10",
            s(),
            prog(|a| {
                a.mov64_imm(10, 0).exit();
            }),
            0,
            R::WriteToFramePointer,
        ),
        (
            "load into r10",
            s(),
            prog(|a| {
                a.ldx_w(10, 1, 0).exit();
            }),
            0,
            R::WriteToFramePointer,
        ),
        ("exit imm", s(), vec![MOV0, raw(0x95, 0, 0, 0, 1)], 1, R::ReservedField("imm")),
        ("alu off", s(), vec![raw(0xb7, 0, 0, 3, 0), EXIT], 0, R::ReservedField("off")),
        ("alu k with src", s(), vec![raw(0xb7, 0, 1, 0, 0), EXIT], 0, R::ReservedField("src")),
        (
            // x < x never holds: that edge is checked with x unrefined
            // (r2 in [0, 16]), not with [0, 15] as if the operands differed.
            "self comparison",
            s(),
            prog(|a| {
                let (out, l) = (a.label(), a.label());
                a.ldx_b(2, 1, 0).mov64_imm(0, 0).jgt_imm(2, 16, out).jlt_reg(2, 2, l);
                a.bind(out).exit().bind(l).ld_region(3, 0, 0).add64_reg(3, 2).ldx_b(0, 3, 0).exit();
            }),
            8,
            R::RegionOutOfBounds { region: 0, lo: 0, hi: 16, size: 1 },
        ),
        (
            "bswap",
            s(),
            vec![MOV0, raw(0xd7, 0, 0, 0, 16), EXIT],
            1,
            R::UnsupportedExtension("unconditional byte swap"),
        ),
        ("sdiv", s(), vec![MOV0, raw(0x37, 0, 0, 1, 3), EXIT], 1, R::UnsupportedExtension("signed division")),
        ("memsx", s(), vec![raw(0x91, 0, 1, 0, 0), EXIT], 0, R::UnsupportedExtension("sign-extending load")),
        ("incomplete ld_imm64", s(), vec![MOV0, raw(LD_IMM64, 0, 0, 0, 1)], 1, R::IncompleteLdImm64),
        (
            "malformed ld_imm64",
            s(),
            vec![raw(LD_IMM64, 0, 0, 0, 1), raw(0, 1, 0, 0, 0), EXIT],
            0,
            R::MalformedLdImm64,
        ),
        ("map fd", s(), vec![raw(LD_IMM64, 0, 1, 0, 1), raw(0, 0, 0, 0, 0), EXIT], 0, R::BadPseudoSource(1)),
        (
            "unknown region",
            s(),
            prog(|a| {
                a.ld_region(2, 5, 0).mov64_imm(0, 0).exit();
            }),
            0,
            R::UnknownRegion { region: 5, count: 2 },
        ),
        ("ld abs", s(), vec![raw(0x20, 0, 0, 0, 12), EXIT], 0, R::LegacyPacketLoad),
        ("ld ind", s(), vec![raw(0x40, 0, 1, 0, 12), EXIT], 0, R::LegacyPacketLoad),
        ("atomic add", s(), vec![MOV0, raw(0xdb, 10, 0, -8, 0), EXIT], 1, R::AtomicOperation),
        ("helper", s(), vec![raw(0x85, 0, 0, 0, 1), EXIT], 0, R::HelperCall(1)),
        ("tail call", s(), vec![raw(0x85, 0, 0, 0, 12), EXIT], 0, R::TailCall),
        ("local call", s(), vec![raw(0x85, 0, 1, 0, 1), EXIT], 0, R::LocalCall),
        ("kfunc", s(), vec![raw(0x85, 0, 2, 0, 1), EXIT], 0, R::KfuncCall),
        (
            "endian 8",
            s(),
            prog(|a| {
                a.mov64_imm(0, 1).le(0, 8).exit();
            }),
            1,
            R::BadEndianWidth(8),
        ),
        (
            "shift 64",
            s(),
            prog(|a| {
                a.mov64_imm(0, 1).lsh64_imm(0, 64).exit();
            }),
            1,
            R::ShiftOutOfRange(64),
        ),
        (
            "shift32 by 32",
            s(),
            prog(|a| {
                a.mov64_imm(0, 1).rsh32_imm(0, 32).exit();
            }),
            1,
            R::ShiftOutOfRange(32),
        ),
        (
            "shift negative",
            s(),
            prog(|a| {
                a.mov64_imm(0, 1).arsh64_imm(0, -1).exit();
            }),
            1,
            R::ShiftOutOfRange(-1),
        ),
        (
            "div by 0",
            s(),
            prog(|a| {
                a.mov64_imm(0, 1).div64_imm(0, 0).exit();
            }),
            1,
            R::DivisionByZero,
        ),
        (
            "mod32 by 0",
            s(),
            prog(|a| {
                a.mov64_imm(0, 1).mod32_imm(0, 0).exit();
            }),
            1,
            R::DivisionByZero,
        ),
        (
            "jump out of range",
            s(),
            vec![MOV0, raw(0x05, 0, 0, 5, 0), EXIT],
            1,
            R::JumpOutOfRange { target: 7 },
        ),
        ("jump to end", s(), vec![MOV0, raw(0x15, 0, 0, 1, 0), EXIT], 1, R::JumpOutOfRange { target: 3 }),
        ("backward jump", s(), vec![MOV0, raw(0x05, 0, 0, -2, 0), EXIT], 1, R::BackwardJump { target: 0 }),
        ("self loop", s(), vec![MOV0, raw(0x05, 0, 0, -1, 0), EXIT], 1, R::BackwardJump { target: 1 }),
        (
            "into ld_imm64",
            s(),
            vec![raw(0x05, 0, 0, 2, 0), MOV0, raw(LD_IMM64, 0, 0, 0, 0), raw(0, 0, 0, 0, 0), EXIT],
            0,
            R::JumpIntoLdImm64 { target: 3 },
        ),
        ("unreachable", s(), vec![MOV0, EXIT, MOV0, EXIT], 2, R::UnreachableInstruction),
        ("fall off", s(), vec![MOV0, MOV0], 1, R::FallOffEnd),
        (
            "fall off after ld_imm64",
            s(),
            vec![MOV0, raw(LD_IMM64, 0, 0, 0, 0), raw(0, 0, 0, 0, 0)],
            1,
            R::FallOffEnd,
        ),
        (
            "uninit reg",
            s(),
            prog(|a| {
                a.mov64_reg(0, 2).exit();
            }),
            0,
            R::UninitRegister(2),
        ),
        (
            "uninit base",
            s(),
            prog(|a| {
                a.ldx_w(0, 3, 0).exit();
            }),
            0,
            R::UninitRegister(3),
        ),
        ("no return value", s(), vec![EXIT], 0, R::ExitWithoutReturnValue),
        (
            "leak ctx",
            s(),
            prog(|a| {
                a.mov64_reg(0, 1).exit();
            }),
            1,
            R::PointerLeak(PtrKind::Ctx),
        ),
        (
            "leak region",
            s(),
            prog(|a| {
                a.ld_region(0, 1, 8).exit();
            }),
            2,
            R::PointerLeak(PtrKind::Region(1)),
        ),
        (
            "divisor maybe zero",
            s(),
            prog(|a| {
                a.ldx_w(2, 1, 0).mov64_imm(0, 10).div64_reg(0, 2).exit();
            }),
            2,
            R::DivisorMaybeZero(2),
        ),
        (
            "mod32 divisor low half zero",
            s(),
            prog(|a| {
                a.ldx_w(2, 1, 0).add64_imm(2, 1).mov64_imm(0, 10).mod32_reg(0, 2).exit();
            }),
            3,
            R::DivisorMaybeZero(2),
        ),
        (
            "mul pointer",
            s(),
            prog(|a| {
                a.mul64_imm(1, 2).mov64_imm(0, 0).exit();
            }),
            0,
            R::PointerArithmetic { op: ALU_MUL, kind: PtrKind::Ctx },
        ),
        (
            "xor pointer",
            s(),
            prog(|a| {
                a.mov64_reg(2, 10).xor64_reg(2, 1).mov64_imm(0, 0).exit();
            }),
            1,
            R::PointerArithmetic { op: ALU_XOR, kind: PtrKind::Stack },
        ),
        (
            "pointer add32",
            s(),
            prog(|a| {
                a.add32_imm(1, 4).mov64_imm(0, 0).exit();
            }),
            0,
            R::PointerArithmetic32(PtrKind::Ctx),
        ),
        (
            "pointer mov32",
            s(),
            prog(|a| {
                a.mov32_reg(0, 1).exit();
            }),
            0,
            R::PointerArithmetic32(PtrKind::Ctx),
        ),
        (
            "pointer plus pointer",
            s(),
            prog(|a| {
                a.mov64_reg(2, 1).add64_reg(2, 1).mov64_imm(0, 0).exit();
            }),
            1,
            R::PointerPlusPointer,
        ),
        (
            "scalar minus pointer",
            s(),
            prog(|a| {
                a.mov64_imm(2, 0).sub64_reg(2, 1).mov64_imm(0, 0).exit();
            }),
            1,
            R::ScalarMinusPointer,
        ),
        (
            "pointer difference",
            s(),
            prog(|a| {
                a.mov64_reg(2, 1).sub64_reg(2, 10).mov64_reg(0, 2).exit();
            }),
            1,
            R::PointerDifference { left: PtrKind::Ctx, right: PtrKind::Stack },
        ),
        (
            "unbounded offset",
            s(),
            prog(|a| {
                a.ldx_dw(2, 1, 0).add64_reg(1, 2).mov64_imm(0, 0).exit();
            }),
            1,
            R::UnboundedPointerOffset(PtrKind::Ctx),
        ),
        (
            "offset overflow",
            s(),
            prog(|a| {
                a.add64_imm(1, i32::MAX).add64_imm(1, 1).mov64_imm(0, 0).exit();
            }),
            1,
            R::PointerOffsetOverflow(PtrKind::Ctx),
        ),
        (
            "pointer vs scalar",
            s(),
            prog(|a| {
                let l = a.label();
                a.mov64_imm(0, 0).jeq_imm(1, 0, l).bind(l).exit();
            }),
            1,
            R::PointerScalarComparison(PtrKind::Ctx),
        ),
        (
            "ctx vs stack",
            s(),
            prog(|a| {
                let l = a.label();
                a.mov64_imm(0, 0).jgt_reg(1, 10, l).bind(l).exit();
            }),
            1,
            R::PointerKindComparison { left: PtrKind::Ctx, right: PtrKind::Stack },
        ),
        (
            "jmp32 on packet",
            s(),
            prog(|a| {
                let l = a.label();
                packet_ptrs(a).mov64_imm(0, 0).jmp32_reg(JMP_JGT, 2, 3, l).bind(l).exit();
            }),
            3,
            R::PointerComparisonOp(PtrKind::Packet),
        ),
        (
            "load through scalar",
            s(),
            prog(|a| {
                a.mov64_imm(2, 4096).ldx_w(0, 2, 0).exit();
            }),
            1,
            R::ScalarDereference,
        ),
        (
            "store through scalar",
            s(),
            prog(|a| {
                a.mov64_imm(2, 4096).st_w(2, 0, 1).mov64_imm(0, 0).exit();
            }),
            1,
            R::ScalarDereference,
        ),
        (
            "mixed kinds",
            s(),
            prog(|a| {
                let l = a.label();
                a.ldx_w(3, 1, 0)
                    .mov64_reg(2, 1)
                    .jeq_imm(3, 0, l)
                    .ld_region(2, 0, 0)
                    .bind(l)
                    .ldx_b(0, 2, 0)
                    .exit();
            }),
            5,
            R::MixedPointerKinds { first: PtrKind::Ctx, second: PtrKind::Region(0) },
        ),
        (
            "uninit stack",
            s(),
            prog(|a| {
                a.ldx_dw(0, 10, -8).exit();
            }),
            0,
            R::UninitStack { off: -8 },
        ),
        (
            "partly uninit stack",
            s(),
            prog(|a| {
                a.st_w(10, -8, 1).ldx_dw(0, 10, -8).exit();
            }),
            1,
            R::UninitStack { off: -4 },
        ),
        (
            "stack below",
            s(),
            prog(|a| {
                a.st_dw(10, -520, 0).mov64_imm(0, 0).exit();
            }),
            0,
            R::StackOutOfBounds { off: -520, size: 8 },
        ),
        (
            "stack above",
            s(),
            prog(|a| {
                a.ldx_w(0, 10, 0).exit();
            }),
            0,
            R::StackOutOfBounds { off: 0, size: 4 },
        ),
        (
            "stack misaligned",
            s(),
            prog(|a| {
                a.st_w(10, -6, 0).mov64_imm(0, 0).exit();
            }),
            0,
            R::MisalignedStack { off: -6, size: 4 },
        ),
        (
            "stack variable offset",
            s(),
            prog(|a| {
                a.ldx_b(2, 1, 0).mov64_reg(3, 10).add64_reg(3, 2).st_b(3, -256, 0).mov64_imm(0, 0).exit();
            }),
            3,
            R::StackVariableOffset,
        ),
        (
            "partial spill",
            s(),
            prog(|a| {
                a.stx_w(10, -8, 1).mov64_imm(0, 0).exit();
            }),
            0,
            R::PartialPointerSpill,
        ),
        (
            "partial fill",
            s(),
            prog(|a| {
                a.stx_dw(10, -8, 1).ldx_w(0, 10, -4).exit();
            }),
            1,
            R::PartialPointerFill { off: -4 },
        ),
        (
            "clobbered spill is uninit",
            s(),
            prog(|a| {
                a.stx_dw(10, -8, 1).st_b(10, -8, 0).ldx_dw(0, 10, -8).exit();
            }),
            2,
            R::UninitStack { off: -7 },
        ),
        (
            "ctx out of bounds",
            s(),
            prog(|a| {
                a.ldx_w(0, 1, 30).exit();
            }),
            0,
            R::CtxOutOfBounds { lo: 30, hi: 30, size: 4 },
        ),
        (
            "ctx negative",
            s(),
            prog(|a| {
                a.ldx_b(0, 1, -1).exit();
            }),
            0,
            R::CtxOutOfBounds { lo: -1, hi: -1, size: 1 },
        ),
        (
            "ctx variable out of bounds",
            s(),
            prog(|a| {
                let out = a.label();
                a.mov64_imm(0, 0)
                    .ldx_w(2, 1, 0)
                    .jgt_imm(2, 29, out)
                    .add64_reg(1, 2)
                    .ldx_w(0, 1, 0)
                    .bind(out)
                    .exit();
            }),
            4,
            R::CtxOutOfBounds { lo: 0, hi: 29, size: 4 },
        ),
        (
            "ctx write",
            s(),
            prog(|a| {
                a.st_w(1, 0, 1).mov64_imm(0, 0).exit();
            }),
            0,
            R::CtxWrite,
        ),
        (
            "packet field half",
            s(),
            prog(|a| {
                a.ldx_h(0, 1, DATA).exit();
            }),
            0,
            R::PacketFieldMisuse { lo: DATA as i64, size: 2 },
        ),
        (
            "packet field overlap",
            s(),
            prog(|a| {
                a.ldx_dw(0, 1, 20).exit();
            }),
            0,
            R::PacketFieldMisuse { lo: 20, size: 8 },
        ),
        (
            "region out of bounds",
            s(),
            prog(|a| {
                a.ld_region(2, 0, 0).ldx_dw(0, 2, 12).exit();
            }),
            2,
            R::RegionOutOfBounds { region: 0, lo: 12, hi: 12, size: 8 },
        ),
        (
            "region variable unchecked",
            s(),
            prog(|a| {
                a.ldx_h(3, 1, 0).ld_region(2, 1, 0).add64_reg(2, 3).ldx_b(0, 2, 0).exit();
            }),
            4,
            R::RegionOutOfBounds { region: 1, lo: 0, hi: 65535, size: 1 },
        ),
        (
            "region write",
            s(),
            prog(|a| {
                a.ld_region(2, 0, 0).st_b(2, 0, 0).mov64_imm(0, 0).exit();
            }),
            2,
            R::RegionWrite(0),
        ),
        (
            "packet unchecked",
            s(),
            prog(|a| {
                packet_ptrs(a).ldx_b(0, 2, 0).exit();
            }),
            2,
            R::PacketNotProven { lo: 0, size: 1 },
        ),
        (
            "packet past proof",
            s(),
            prog(|a| {
                let out = a.label();
                a.mov64_imm(0, 0);
                proven_packet(a, out).ldx_w(0, 2, 6).bind(out).exit();
            }),
            6,
            R::PacketNotProven { lo: 6, size: 4 },
        ),
        (
            "packet proof on wrong edge",
            s(),
            prog(|a| {
                let bad = a.label();
                let out = a.label();
                a.mov64_imm(0, 0);
                proven_packet(a, bad).ja(out).bind(bad).ldx_b(0, 2, 0).bind(out).exit();
            }),
            7,
            R::PacketNotProven { lo: 0, size: 1 },
        ),
        (
            "packet before start",
            s(),
            prog(|a| {
                let out = a.label();
                a.mov64_imm(0, 0);
                proven_packet(a, out).ldx_b(0, 2, -1).bind(out).exit();
            }),
            6,
            R::PacketBeforeStart { lo: -1 },
        ),
        (
            "packet write",
            s(),
            prog(|a| {
                let out = a.label();
                a.mov64_imm(0, 0);
                proven_packet(a, out).st_b(2, 0, 0).bind(out).exit();
            }),
            6,
            R::PacketWrite,
        ),
        (
            "packet end deref",
            s(),
            prog(|a| {
                packet_ptrs(a).ldx_b(0, 3, 0).exit();
            }),
            2,
            R::PacketEndAccess,
        ),
        (
            "packet end arithmetic",
            s(),
            prog(|a| {
                packet_ptrs(a).add64_imm(3, 1).mov64_imm(0, 0).exit();
            }),
            2,
            R::PointerArithmetic { op: ALU_ADD, kind: PtrKind::PacketEnd },
        ),
        (
            "store pointer to ctx",
            s(),
            prog(|a| {
                a.stx_dw(1, 0, 10).mov64_imm(0, 0).exit();
            }),
            0,
            R::PointerStoreOutsideStack(PtrKind::Stack),
        ),
    ]
}

#[test]
fn rejects_with_exact_reason_and_index() {
    let mut kinds = HashSet::new();
    for (name, spec, insns, index, reason) in cases() {
        let got = verify(&insns, &spec).map(|_| ());
        assert_eq!(got, Err(Reject { index, reason }), "case `{name}`");
        // Every reason renders to a non-empty message mentioning the index.
        let text = Reject { index, reason }.to_string();
        assert!(text.starts_with(&format!("instruction {index}: ")), "{text}");
        kinds.insert(discriminant(&reason));
    }
    // The cases that are not plain instruction lists.
    let truncated = verify_bytes(&[0u8; 12], &spec()).unwrap_err();
    assert_eq!(truncated, Reject::new(1, R::TruncatedInstruction { len: 12 }));
    kinds.insert(discriminant(&truncated.reason));
    let bad_spec = spec().with_packet(PacketFields { data_off: 0, data_end_off: 2, width: 4 });
    let err = verify(&[MOV0, EXIT], &bad_spec).unwrap_err();
    assert_eq!(err, Reject::new(0, R::InvalidSpec("packet fields overlap")));
    kinds.insert(discriminant(&err.reason));
    assert!(kinds.len() >= 58, "only {} distinct reasons covered", kinds.len());
}

fn accepts(name: &str, insns: &[Insn]) -> bpf::VerifiedProgram {
    match verify(insns, &spec()) {
        Ok(p) => p,
        Err(e) => panic!("case `{name}` rejected: {e}"),
    }
}

fn run_with(p: &bpf::VerifiedProgram, ctx: &[u8], packet: &[u8]) -> u64 {
    let r0 = [7u8; 16];
    let r1: Vec<u8> = (0..4096).map(|i| (i * 7) as u8).collect();
    let regions: [&[u8]; 2] = [&r0, &r1];
    let mem = Memory { ctx, regions: &regions, packet };
    run(p, &mem).unwrap()
}

#[test]
fn accepts_and_runs_safe_programs() {
    let mut ctx = [0u8; CTX as usize];
    ctx[0] = 100;

    // Region read at a checked variable offset.
    let p = accepts(
        "region index",
        &prog(|a| {
            let out = a.label();
            a.mov64_imm(0, 0)
                .ldx_w(2, 1, 0)
                .jgt_imm(2, 4095, out)
                .ld_region(3, 1, 0)
                .add64_reg(3, 2)
                .ldx_b(0, 3, 0)
                .bind(out)
                .exit();
        }),
    );
    assert_eq!(run_with(&p, &ctx, &[]), 700 % 256);

    // Spill and fill a pointer, then use it.
    let p = accepts(
        "spill",
        &prog(|a| {
            a.stx_dw(10, -16, 1).mov64_imm(1, 0).ldx_dw(4, 10, -16).ldx_b(0, 4, 0).exit();
        }),
    );
    assert_eq!(run_with(&p, &ctx, &[]), 100);

    // Division by a register proven non-zero; JMP32 on scalars.
    let p = accepts(
        "division",
        &prog(|a| {
            let out = a.label();
            a.mov64_imm(0, 0)
                .ldx_w(2, 1, 0)
                .jeq_imm(2, 0, out)
                .mov64_imm(0, 1000)
                .div64_reg(0, 2)
                .jmp32_imm(JMP_JSGT, 0, 5, out)
                .mov64_imm(0, 99)
                .bind(out)
                .exit();
        }),
    );
    assert_eq!(run_with(&p, &ctx, &[]), 10);

    // XDP-style filter with a variable header length.
    let p = accepts(
        "packet variable header",
        &prog(|a| {
            let out = a.label();
            a.mov64_imm(0, 0);
            proven_packet(a, out)
                .ldx_b(5, 2, 0)
                .and64_imm(5, 0x0f)
                .lsh64_imm(5, 2)
                .add64_reg(2, 5)
                .mov64_reg(4, 2)
                .add64_imm(4, 4)
                .jgt_reg(4, 3, out)
                .ldx_h(0, 2, 2)
                .be(0, 16)
                .bind(out)
                .exit();
        }),
    );
    let mut pkt = vec![0u8; 64];
    pkt[0] = 3; // header of 12 bytes
    pkt[14] = 0x12;
    pkt[15] = 0x34;
    assert_eq!(run_with(&p, &ctx, &pkt), 0x1234);
    assert_eq!(run_with(&p, &ctx, &pkt[..15]), 0);
    assert_eq!(run_with(&p, &ctx, &pkt[..4]), 0);

    // Packet length as a scalar.
    let p = accepts(
        "packet length",
        &prog(|a| {
            packet_ptrs(a).mov64_reg(0, 3).sub64_reg(0, 2).exit();
        }),
    );
    assert_eq!(run_with(&p, &ctx, &pkt), 64);

    // Pointers of the same kind flow into one instruction from two paths.
    let p = accepts(
        "join",
        &prog(|a| {
            let l = a.label();
            a.ldx_w(3, 1, 0).mov64_reg(2, 1).jeq_imm(3, 0, l).add64_imm(2, 4).bind(l).ldx_b(0, 2, 0).exit();
        }),
    );
    assert_eq!(run_with(&p, &ctx, &[]), 0);
}

#[test]
fn many_sequential_branches_stay_cheap() {
    // 2^200 paths without pruning; inclusion at join points keeps it linear.
    let insns = prog(|a| {
        a.mov64_imm(0, 0).ldx_w(2, 1, 0);
        for _ in 0..200 {
            let l = a.label();
            a.jeq_imm(2, 3, l).add64_imm(0, 1).bind(l);
        }
        a.and64_imm(0, 1).exit();
    });
    let spec = spec().with_max_steps(100_000);
    verify(&insns, &spec).unwrap();
}
