//! Re-lays a loop-free program so that every jump goes forward. Compilers
//! place shared tails (a common `return 0`) wherever they like, often
//! before the branches that reach them; the verifier accepts forward jumps
//! only. A loop-free program's blocks form a DAG, so emitting them in a
//! topological order, with a `ja` where a block's fall-through successor
//! is not next, gives the same program with forward jumps only. A real
//! loop is refused, as the verifier would refuse it.

use alloc::vec;
use alloc::vec::Vec;

use crate::insn::{Insn, CLASS_JMP, CLASS_JMP32, JMP_CALL, JMP_EXIT, JMP_JA, LD_IMM64};

/// Why a program cannot be re-laid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RelayoutError {
    /// A jump lands outside the program or inside an `ld_imm64`.
    BadTarget { index: usize },
    /// The last instruction falls off the end.
    FallOffEnd,
    /// The blocks form a cycle through this instruction.
    Loop { index: usize },
    /// A jump distance does not fit the 16-bit offset.
    TooFar,
}

fn width(i: &Insn) -> usize {
    if i.code == LD_IMM64 {
        2
    } else {
        1
    }
}

/// (is a jump with a target, ends the block with no fall-through)
fn kind(i: &Insn) -> (bool, bool) {
    let class = i.class();
    if class != CLASS_JMP && class != CLASS_JMP32 {
        return (false, false);
    }
    match i.op() {
        JMP_EXIT if class == CLASS_JMP => (false, true),
        JMP_CALL if class == CLASS_JMP => (false, false),
        JMP_JA if class == CLASS_JMP => (true, true),
        _ => (true, false),
    }
}

/// The same program with its blocks in a topological order.
pub fn forward_only(insns: &[Insn]) -> Result<Vec<Insn>, RelayoutError> {
    let n = insns.len();
    // Instruction starts and block leaders.
    let mut start = vec![false; n + 1];
    let mut leader = vec![false; n + 1];
    let mut i = 0;
    while i < n {
        start[i] = true;
        i += width(&insns[i]);
    }
    leader[0] = true;
    let target = |i: usize| -> Result<usize, RelayoutError> {
        let t = i as i64 + 1 + i64::from(insns[i].off);
        if t < 0 || t as usize >= n || !start[t as usize] {
            return Err(RelayoutError::BadTarget { index: i });
        }
        Ok(t as usize)
    };
    let mut i = 0;
    while i < n {
        let (jumps, ends) = kind(&insns[i]);
        let next = i + width(&insns[i]);
        if jumps {
            leader[target(i)?] = true;
        }
        if jumps || ends {
            leader[next.min(n)] = true;
        }
        i = next;
    }
    let blocks: Vec<usize> = (0..n).filter(|&i| leader[i] && start[i]).collect();
    let block_of = |at: usize| blocks.binary_search(&at).ok();
    // Each block: its instruction range, conditional target, fall-through.
    struct B {
        from: usize,
        to: usize,
        jump: Option<usize>,
        fall: Option<usize>,
    }
    let mut bs = Vec::new();
    for (k, &from) in blocks.iter().enumerate() {
        let to = blocks.get(k + 1).copied().unwrap_or(n);
        let mut last = from;
        while last + width(&insns[last]) < to {
            last += width(&insns[last]);
        }
        let (jumps, ends) = kind(&insns[last]);
        let jump = if jumps { block_of(target(last)?) } else { None };
        let fall = if ends {
            None
        } else if to >= n {
            return Err(RelayoutError::FallOffEnd);
        } else {
            block_of(to)
        };
        bs.push(B { from, to, jump, fall });
    }
    // Depth-first post-order from block 0, refusing back edges.
    let mut state = vec![0u8; bs.len()]; // 0 new, 1 on the path, 2 done
    let mut order = Vec::new();
    let mut stack = vec![(0usize, 0u8)];
    state[0] = 1;
    while let Some(&mut (b, ref mut step)) = stack.last_mut() {
        let succ = match *step {
            0 => bs[b].fall,
            1 => bs[b].jump,
            _ => {
                state[b] = 2;
                order.push(b);
                stack.pop();
                continue;
            }
        };
        *step += 1;
        if let Some(s) = succ {
            match state[s] {
                0 => {
                    state[s] = 1;
                    stack.push((s, 0));
                }
                1 => return Err(RelayoutError::Loop { index: bs[s].from }),
                _ => {}
            }
        }
    }
    order.reverse();
    // Emit, remembering where each block lands and which jumps to fix.
    let mut out: Vec<Insn> = Vec::with_capacity(n + order.len());
    let mut at = vec![usize::MAX; bs.len()];
    let mut fix: Vec<(usize, usize)> = Vec::new();
    for (pos, &b) in order.iter().enumerate() {
        at[b] = out.len();
        let B { from, to, jump, fall } = bs[b];
        out.extend_from_slice(&insns[from..to]);
        if let Some(t) = jump {
            // A block with a target ends with its (one-slot) jump.
            fix.push((out.len() - 1, t));
        }
        if let Some(f) = fall {
            if order.get(pos + 1) != Some(&f) {
                fix.push((out.len(), f));
                out.push(Insn::new(CLASS_JMP | JMP_JA, 0, 0, 0, 0));
            }
        }
    }
    for (j, t) in fix {
        let off = at[t] as i64 - j as i64 - 1;
        out[j].off = i16::try_from(off).map_err(|_| RelayoutError::TooFar)?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::Asm;
    use crate::{run, verify, Memory, ProgramSpec};

    /// `r0 = ctx[0] == 1 ? 10 : 0` with the shared `exit` placed first
    /// and reached backwards, as clang lays it out.
    fn backwards() -> Vec<Insn> {
        vec![
            Insn::new(0x61, 2, 1, 0, 0),                // r2 = *(u32*)(r1+0)
            Insn::new(0xb7, 0, 0, 0, 0),                // r0 = 0
            Insn::new(CLASS_JMP | JMP_JA, 0, 0, 1, 0),  // goto +1
            Insn::new(0x95, 0, 0, 0, 0),                // out: exit
            Insn::new(0x55, 2, 0, -2, 1),               // if r2 != 1 goto out
            Insn::new(0xb7, 0, 0, 0, 10),               // r0 = 10
            Insn::new(CLASS_JMP | JMP_JA, 0, 0, -4, 0), // goto out
        ]
    }

    #[test]
    fn a_backward_tail_becomes_forward_and_means_the_same() {
        let spec = ProgramSpec::new(4);
        assert!(verify(&backwards(), &spec).is_err());
        let fwd = forward_only(&backwards()).unwrap();
        let prog = verify(&fwd, &spec).unwrap();
        for (v, want) in [(1u32, 10), (2, 0), (0, 0)] {
            let ctx = v.to_le_bytes();
            assert_eq!(run(&prog, &Memory { ctx: &ctx, regions: &[], packet: &[] }).unwrap(), want);
        }
    }

    #[test]
    fn a_loop_is_refused_and_forward_programs_keep_their_meaning() {
        let mut a = Asm::new();
        let top = a.label();
        a.mov64_imm(0, 0).bind(top).add64_imm(0, 1).jlt_imm(0, 5, top).exit();
        assert_eq!(forward_only(&a.finish().unwrap()), Err(RelayoutError::Loop { index: 1 }));
        let mut a = Asm::new();
        let skip = a.label();
        a.ld_imm64(0, 1 << 40).jeq_imm(0, 0, skip).mov64_imm(0, 3).bind(skip).exit();
        let p = a.finish().unwrap();
        let q = forward_only(&p).unwrap();
        let spec = ProgramSpec::new(0);
        let mem = Memory { ctx: &[], regions: &[], packet: &[] };
        assert_eq!(run(&verify(&q, &spec).unwrap(), &mem), run(&verify(&p, &spec).unwrap(), &mem));
        assert_eq!(forward_only(&[Insn::new(0xb7, 0, 0, 0, 0)]), Err(RelayoutError::FallOffEnd));
    }
}
