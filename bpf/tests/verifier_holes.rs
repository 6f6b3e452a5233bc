//! Attacks on the verifier's joins. More paths reach one instruction than
//! the verifier keeps states for (8), so two of them are merged; each
//! program below makes the merged states disagree on where a stack (or
//! context) pointer points and then uses the pointer. Every access through
//! such a pointer must be checked over its whole offset range; each
//! program must be rejected at the access with the given reason. If one is
//! accepted, the test runs it in the guarded interpreter on the input that
//! takes the other path and reports what the oracle saw.

use bpf::insn::*;
use bpf::{run, verify, Asm, Insn, Memory, PacketFields, ProgramSpec, Reason, Reject};

/// 32-byte context with packet bound fields at 24 and 28.
fn spec() -> ProgramSpec {
    ProgramSpec::new(32).with_regions(&[16]).with_packet(PacketFields {
        data_off: 24,
        data_end_off: 28,
        width: 4,
    })
}

/// Blocks fanned out from one selector; the last two are merged.
const BLOCKS: usize = 9;

/// `r2 = ctx[0]` selects one of `BLOCKS` blocks (other values exit), block
/// `i` runs `body(i)`, and all of them meet at one join point. The states
/// arrive there in block order: those of blocks 0..=7 are kept apart,
/// block 8's is merged into block 7's.
fn fan_in(a: &mut Asm, body: impl Fn(&mut Asm, usize)) {
    let blocks: Vec<_> = (0..BLOCKS).map(|_| a.label()).collect();
    let join = a.label();
    a.ldx_b(2, 1, 0);
    for (i, &b) in blocks.iter().enumerate() {
        a.jeq_imm(2, i as i32, b);
    }
    a.mov64_imm(0, 0).exit();
    for (i, &b) in blocks.iter().enumerate() {
        a.bind(b);
        body(a, i);
        a.ja(join);
    }
    a.bind(join);
}

/// Offsets from r10 for blocks 0..=6, all distinct and initialised below.
fn other_offset(i: usize) -> i32 {
    -200 - 8 * i as i32
}

/// `r3 = r10 + off` with `off` = `low` in block 7, `high` in block 8.
fn stack_pointer_fan(a: &mut Asm, low: i32, high: i32) {
    fan_in(a, |a, i| {
        let off = match i {
            7 => low,
            8 => high,
            _ => other_offset(i),
        };
        a.mov64_reg(3, 10).add64_imm(3, off);
    });
}

/// A program whose other blocks' slots hold the scalar 1.
fn assemble(f: impl FnOnce(&mut Asm)) -> Vec<Insn> {
    assemble_with(
        |a, off| {
            a.st_dw(10, off, 1);
        },
        f,
    )
}

/// `init` fills each slot the other blocks point at, then `f` follows.
fn assemble_with(init: impl Fn(&mut Asm, i16), f: impl FnOnce(&mut Asm)) -> Vec<Insn> {
    let mut a = Asm::new();
    for i in 0..7 {
        init(&mut a, other_offset(i) as i16);
    }
    f(&mut a);
    a.finish().unwrap()
}

/// Asserts the rejection; if the program is accepted, runs it on the
/// input that selects block 8 and says what the oracle reported.
fn assert_rejected(name: &str, insns: &[Insn], want: Reject) {
    match verify(insns, &spec()) {
        Err(got) => assert_eq!(got, want, "{name}: wrong rejection ({got})"),
        Ok(prog) => {
            let mut ctx = [0u8; 32];
            ctx[0] = 8;
            ctx[8..16].copy_from_slice(&0x4141_4141_4141u64.to_le_bytes());
            let region = [0u8; 16];
            let regions: [&[u8]; 1] = [&region];
            let outcome = run(&prog, &Memory { ctx: &ctx, regions: &regions, packet: &[0; 16] });
            panic!("{name}: accepted; selecting the merged path gives {outcome:?}");
        }
    }
}

fn fan_end(insns: &[Insn]) -> usize {
    // The join point is right after the last block's `ja`.
    insns.iter().rposition(|i| i.code == CLASS_JMP | JMP_JA).unwrap() + 1
}

#[test]
fn merged_stack_pointer_read_of_uninitialised_slot() {
    // Only r10-64 is written; r3 is r10-64 or r10-8.
    let insns = assemble(|a| {
        a.st_dw(10, -64, 7);
        stack_pointer_fan(a, -64, -8);
        a.ldx_dw(0, 3, 0).exit();
    });
    let at = fan_end(&insns);
    assert_rejected("uninitialised slot", &insns, Reject::new(at, Reason::StackVariableOffset));
}

#[test]
fn merged_stack_pointer_reads_host_memory() {
    // r3 is r10-8 or r10+48: the JIT frame's saved registers and the
    // return address lie above r10.
    let insns = assemble(|a| {
        a.st_dw(10, -8, 0);
        stack_pointer_fan(a, -8, 48);
        a.ldx_dw(0, 3, 0).exit();
    });
    let at = fan_end(&insns);
    assert_rejected("read above the stack", &insns, Reject::new(at, Reason::StackVariableOffset));
}

#[test]
fn merged_stack_pointer_overwrites_return_address() {
    let insns = assemble(|a| {
        a.ldx_dw(4, 1, 8);
        stack_pointer_fan(a, -8, 48);
        a.stx_dw(3, 0, 4).mov64_imm(0, 0).exit();
    });
    let at = fan_end(&insns);
    assert_rejected("store above the stack", &insns, Reject::new(at, Reason::StackVariableOffset));
}

#[test]
fn merged_stack_pointer_divides_by_zero() {
    // The verifier reads the spilled 5 at r10-16; the run reads 0 at r10-8.
    let insns = assemble(|a| {
        a.st_dw(10, -16, 5).st_dw(10, -8, 0);
        stack_pointer_fan(a, -16, -8);
        a.ldx_dw(4, 3, 0).mov64_imm(0, 100).div64_reg(0, 4).exit();
    });
    let at = fan_end(&insns);
    assert_rejected("division", &insns, Reject::new(at, Reason::StackVariableOffset));
}

#[test]
fn merged_stack_pointer_leaks_pointer() {
    // Scalar at r10-16, the context pointer spilled at r10-8.
    let insns = assemble(|a| {
        a.st_dw(10, -16, 0).stx_dw(10, -8, 1);
        stack_pointer_fan(a, -16, -8);
        a.ldx_dw(0, 3, 0).exit();
    });
    let at = fan_end(&insns);
    assert_rejected("pointer leak", &insns, Reject::new(at, Reason::StackVariableOffset));
}

#[test]
fn merged_stack_pointer_forges_pointer() {
    // The context pointer spilled at r10-16, an attacker's number at
    // r10-8: the fill is believed to be the context pointer.
    let spill_ctx = |a: &mut Asm, off| {
        a.stx_dw(10, off, 1);
    };
    let insns = assemble_with(spill_ctx, |a| {
        a.stx_dw(10, -16, 1).ldx_dw(4, 1, 8).stx_dw(10, -8, 4);
        stack_pointer_fan(a, -16, -8);
        a.ldx_dw(5, 3, 0).ldx_dw(0, 5, 0).exit();
    });
    let at = fan_end(&insns);
    assert_rejected("forged pointer", &insns, Reject::new(at, Reason::StackVariableOffset));
}

#[test]
fn merged_spilled_stack_pointer() {
    // Each block spills a different stack pointer into r10-8; the fill
    // after the join is a pointer with an offset range.
    let insns = assemble(|a| {
        a.st_dw(10, -64, 7);
        fan_in(a, |a, i| {
            let off = match i {
                7 => -64,
                8 => 40,
                _ => other_offset(i),
            };
            a.mov64_reg(3, 10).add64_imm(3, off).stx_dw(10, -8, 3);
        });
        a.ldx_dw(3, 10, -8).ldx_dw(0, 3, 0).exit();
    });
    let at = fan_end(&insns) + 1;
    assert_rejected("spilled pointer", &insns, Reject::new(at, Reason::StackVariableOffset));
}

#[test]
fn merged_context_pointer_at_packet_field() {
    // r3 is ctx+24 (the packet start field) in blocks 0..=7 and ctx+28
    // (packet end) in block 8; r6 keeps the blocks' states apart. A load
    // "of the start field" must not be trusted when it may be the end.
    let insns = assemble(|a| {
        fan_in(a, |a, i| {
            let off = if i == 8 { 28 } else { 24 };
            a.mov64_reg(3, 1).add64_imm(3, off).mov64_imm(6, i as i32);
        });
        a.ldx_w(4, 3, 0).mov64_reg(0, 6).exit();
    });
    let at = fan_end(&insns);
    assert_rejected("packet field", &insns, Reject::new(at, Reason::PacketFieldMisuse { lo: 24, size: 4 }));
}

/// The rest of the audit: merged pointers into other objects and merged
/// spills stay safe (checked over the whole range, or unusable).
#[test]
fn other_merges_are_checked_over_the_whole_range() {
    // Region pointers at offsets 0..=7 and, merged with 7, `last`; an
    // 8-byte load from the 16-byte region fits only up to offset 8.
    let region = |last: i32| {
        assemble(|a| {
            fan_in(a, |a, i| {
                a.ld_region(3, 0, if i == 8 { last } else { i as i32 });
            });
            a.ldx_dw(0, 3, 0).exit();
        })
    };
    let insns = region(12);
    let at = fan_end(&insns);
    let want = Reason::RegionOutOfBounds { region: 0, lo: 7, hi: 12, size: 8 };
    assert_rejected("region range", &insns, Reject::new(at, want));
    let prog = verify(&region(8), &spec()).expect("the whole range is inside the region");
    let bytes: Vec<u8> = (0..16).collect();
    let regions: [&[u8]; 1] = [&bytes];
    for sel in 0..10u8 {
        let mut ctx = [0u8; 32];
        ctx[0] = sel;
        let want =
            if sel > 8 { 0 } else { u64::from_le_bytes(bytes[sel as usize..][..8].try_into().unwrap()) };
        assert_eq!(run(&prog, &Memory { ctx: &ctx, regions: &regions, packet: &[] }), Ok(want), "sel {sel}");
    }

    // Packet pointers with different offsets do not merge into a pointer.
    let insns = assemble(|a| {
        a.ldx_w(8, 1, 24);
        fan_in(a, |a, i| {
            a.mov64_reg(3, 8).add64_imm(3, i as i32);
        });
        a.mov64_reg(0, 3).sub64_reg(0, 8).exit();
    });
    let at = fan_end(&insns);
    assert_rejected("packet merge", &insns, Reject::new(at, Reason::UninitRegister(3)));

    // A slot holding a scalar on some paths and a pointer on another
    // cannot be filled.
    let insns = assemble(|a| {
        fan_in(a, |a, i| {
            if i == 8 {
                a.stx_dw(10, -8, 1);
            } else {
                a.st_dw(10, -8, i as i32);
            }
        });
        a.ldx_dw(0, 10, -8).exit();
    });
    let at = fan_end(&insns);
    assert_rejected("slot merge", &insns, Reject::new(at, Reason::UninitStack { off: -8 }));

    // The same with plain data (two narrow stores) instead of spilled
    // scalars: the pointer's bytes must not come back as data.
    let insns = assemble(|a| {
        fan_in(a, |a, i| {
            if i == 8 {
                a.stx_dw(10, -8, 1);
            } else {
                a.st_w(10, -8, i as i32).st_w(10, -4, 0);
            }
            // Data carries no value: r6 keeps the blocks' states apart.
            a.mov64_imm(6, i as i32);
        });
        a.ldx_dw(0, 10, -8).add64_reg(0, 6).exit();
    });
    let at = fan_end(&insns);
    assert_rejected("data/pointer slot merge", &insns, Reject::new(at, Reason::UninitStack { off: -8 }));
}
