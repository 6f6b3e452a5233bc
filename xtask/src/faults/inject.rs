//! The fault injector (paper 004 §4.1.1, Table II, after Rio's injector):
//! changes single instructions of a driver's compiled image, chosen among
//! the instructions the driver actually executes (`executed.rs`).
//! Instructions are decoded and re-encoded with `iced-x86`; a changed
//! instruction never grows (a shorter one is padded with NOPs), so every
//! other instruction stays where it was.

use iced_x86::{
    ConditionCode, Decoder, DecoderOptions, Encoder, FlowControl, Formatter, Instruction,
    InstructionInfoFactory, IntelFormatter, OpAccess, OpKind, Register,
};

/// The eight fault types of Table II.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Change the source register.
    Source,
    /// Change the destination register.
    Destination,
    /// Change the address calculation of a memory instruction.
    Pointer,
    /// Use the value already in a register instead of the parameter
    /// passed: the instruction that loads an argument register before a
    /// call is elided.
    Interface,
    /// Delete a branch instruction.
    Branch,
    /// Invert the termination condition of a loop (a backward
    /// conditional branch).
    Loop,
    /// Flip a bit in an instruction.
    Text,
    /// Elide an instruction.
    Nop,
}

pub const KINDS: [Kind; 8] = [
    Kind::Source,
    Kind::Destination,
    Kind::Pointer,
    Kind::Interface,
    Kind::Branch,
    Kind::Loop,
    Kind::Text,
    Kind::Nop,
];

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Source => "source",
            Kind::Destination => "destination",
            Kind::Pointer => "pointer",
            Kind::Interface => "interface",
            Kind::Branch => "branch",
            Kind::Loop => "loop",
            Kind::Text => "text",
            Kind::Nop => "nop",
        }
    }
}

/// SplitMix64: the campaign's seeded, replayable random numbers.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number below `n` (> 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// The driver's text as loaded: its bytes and the address of the first.
pub struct Text<'a> {
    pub base: u64,
    pub bytes: &'a mut [u8],
}

/// One injected fault: where, what it was and what it became.
#[derive(Clone, Debug)]
pub struct Fault {
    pub ip: u64,
    pub kind: Kind,
    pub before: String,
    pub after: String,
}

impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "{:#x} {}: {} => {}", self.ip, self.kind.name(), self.before, self.after)
    }
}

impl Text<'_> {
    fn decode(&self, ip: u64) -> Option<Instruction> {
        let off = usize::try_from(ip.checked_sub(self.base)?).ok()?;
        let bytes = self.bytes.get(off..)?;
        let i = Decoder::with_ip(64, &bytes[..bytes.len().min(15)], ip, DecoderOptions::NONE).decode();
        (!i.is_invalid()).then_some(i)
    }

    fn range(&mut self, i: &Instruction) -> &mut [u8] {
        let off = (i.ip() - self.base) as usize;
        &mut self.bytes[off..off + i.len()]
    }

    /// Replaces `old` by `new` if `new` encodes no longer; pads with NOPs.
    fn put(&mut self, old: &Instruction, new: &Instruction) -> bool {
        let mut enc = Encoder::new(64);
        match enc.encode(new, old.ip()) {
            Ok(n) if n <= old.len() => {
                let code = enc.take_buffer();
                let r = self.range(old);
                r[..n].copy_from_slice(&code);
                r[n..].fill(NOP);
                true
            }
            _ => false,
        }
    }
}

const NOP: u8 = 0x90;

fn show(i: &Instruction) -> String {
    let mut out = String::new();
    IntelFormatter::new().format(i, &mut out);
    out
}

fn show_bytes(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect::<Vec<_>>().join(" ")
}

/// General-purpose registers of `r`'s size (without the legacy high-byte
/// registers, which cannot be encoded beside REX prefixes).
fn siblings(r: Register) -> Vec<Register> {
    let all: &[Register] = match r.size() {
        8 => &[
            Register::RAX,
            Register::RCX,
            Register::RDX,
            Register::RBX,
            Register::RSP,
            Register::RBP,
            Register::RSI,
            Register::RDI,
            Register::R8,
            Register::R9,
            Register::R10,
            Register::R11,
            Register::R12,
            Register::R13,
            Register::R14,
            Register::R15,
        ],
        4 => &[
            Register::EAX,
            Register::ECX,
            Register::EDX,
            Register::EBX,
            Register::ESP,
            Register::EBP,
            Register::ESI,
            Register::EDI,
            Register::R8D,
            Register::R9D,
            Register::R10D,
            Register::R11D,
            Register::R12D,
            Register::R13D,
            Register::R14D,
            Register::R15D,
        ],
        2 => &[
            Register::AX,
            Register::CX,
            Register::DX,
            Register::BX,
            Register::SP,
            Register::BP,
            Register::SI,
            Register::DI,
            Register::R8W,
            Register::R9W,
            Register::R10W,
            Register::R11W,
            Register::R12W,
            Register::R13W,
            Register::R14W,
            Register::R15W,
        ],
        _ => &[
            Register::AL,
            Register::CL,
            Register::DL,
            Register::BL,
            Register::SPL,
            Register::BPL,
            Register::SIL,
            Register::DIL,
            Register::R8L,
            Register::R9L,
            Register::R10L,
            Register::R11L,
            Register::R12L,
            Register::R13L,
            Register::R14L,
            Register::R15L,
        ],
    };
    all.iter().copied().filter(|&x| x != r).collect()
}

fn is_gpr(r: Register) -> bool {
    r.is_gpr() && !matches!(r, Register::AH | Register::CH | Register::DH | Register::BH)
}

/// Operands of `i` that are general-purpose registers the instruction
/// writes (`write`) or only reads.
fn register_operands(i: &Instruction, write: bool) -> Vec<u32> {
    let mut factory = InstructionInfoFactory::new();
    let info = factory.info(i);
    (0..i.op_count())
        .filter(|&n| i.op_kind(n) == OpKind::Register && is_gpr(i.op_register(n)))
        .filter(|&n| {
            let w = matches!(info.op_access(n), OpAccess::Write | OpAccess::ReadWrite | OpAccess::CondWrite);
            let r = matches!(info.op_access(n), OpAccess::Read | OpAccess::CondRead);
            if write {
                w
            } else {
                r
            }
        })
        .collect()
}

/// The System V argument registers (any size).
fn is_argument(r: Register) -> bool {
    matches!(
        r.full_register(),
        Register::RDI | Register::RSI | Register::RDX | Register::RCX | Register::R8 | Register::R9
    )
}

/// Tries one fault of `kind` on the instruction at `ip`; `prev` are the
/// instructions just before it (same straight-line run), for interface
/// faults. `None` if this instruction does not fit the kind.
fn try_fault(text: &mut Text, kind: Kind, ip: u64, prev: &[u64], rng: &mut Rng) -> Option<Fault> {
    let i = text.decode(ip)?;
    let before = show(&i);
    let mut new = i;
    match kind {
        Kind::Source | Kind::Destination => {
            let ops = register_operands(&i, kind == Kind::Destination);
            let n = *ops.get(rng.below(ops.len().max(1)))?;
            let choices = siblings(i.op_register(n));
            let start = rng.below(choices.len());
            // The first replacement (from a random start) that encodes.
            let done = (0..choices.len()).any(|k| {
                new = i;
                new.set_op_register(n, choices[(start + k) % choices.len()]);
                text.put(&i, &new)
            });
            done.then_some(())?;
        }
        Kind::Pointer => {
            let mem = (0..i.op_count()).any(|n| i.op_kind(n) == OpKind::Memory);
            if !mem || i.memory_base() == Register::None && i.memory_index() == Register::None {
                return None;
            }
            let change_base = i.memory_base().is_gpr() && rng.below(2) == 0;
            let done = if change_base {
                let choices = siblings(i.memory_base());
                let start = rng.below(choices.len());
                (0..choices.len()).any(|k| {
                    new = i;
                    new.set_memory_base(choices[(start + k) % choices.len()]);
                    text.put(&i, &new)
                })
            } else {
                // A displacement off by a few words either way.
                let delta = (1 + rng.below(32) as u64) * 8;
                let d = i.memory_displacement64();
                new.set_memory_displacement64(if rng.below(2) == 0 {
                    d.wrapping_add(delta)
                } else {
                    d.wrapping_sub(delta)
                });
                text.put(&i, &new)
            };
            done.then_some(())?;
        }
        Kind::Interface => {
            if i.flow_control() != FlowControl::Call {
                return None;
            }
            // The nearest instruction before the call that loads an
            // argument register is elided.
            let victim = prev.iter().rev().find_map(|&p| {
                let v = text.decode(p)?;
                register_operands(&v, true).iter().any(|&n| is_argument(v.op_register(n))).then_some(v)
            })?;
            let before = format!("{} (before {})", show(&victim), before);
            text.range(&victim).fill(NOP);
            return Some(Fault { ip: victim.ip(), kind, before, after: "nop".into() });
        }
        Kind::Branch => {
            if !matches!(i.flow_control(), FlowControl::ConditionalBranch | FlowControl::UnconditionalBranch)
                || i.is_jmp_far()
            {
                return None;
            }
            text.range(&i).fill(NOP);
            return Some(Fault { ip, kind, before, after: "nop".into() });
        }
        Kind::Loop => {
            let backward = i.flow_control() == FlowControl::ConditionalBranch && i.near_branch_target() <= ip;
            if !backward || i.condition_code() == ConditionCode::None {
                return None;
            }
            new.negate_condition_code();
            text.put(&i, &new).then_some(())?;
        }
        Kind::Text => {
            let bit = rng.below(i.len() * 8);
            text.range(&i)[bit / 8] ^= 1 << (bit % 8);
            let after = text.decode(ip).map_or("(invalid)".into(), |n| show(&n));
            let bytes = show_bytes(text.range(&i));
            return Some(Fault { ip, kind, before, after: format!("{after} [{bytes}]") });
        }
        Kind::Nop => {
            text.range(&i).fill(NOP);
            return Some(Fault { ip, kind, before, after: "nop".into() });
        }
    }
    Some(Fault { ip, kind, before, after: show(&new) })
}

/// Injects `count` faults of `kind` at distinct instructions among
/// `executed` (sorted addresses of instruction starts).
pub fn inject(text: &mut Text, executed: &[u64], kind: Kind, count: usize, rng: &mut Rng) -> Vec<Fault> {
    let mut faults: Vec<Fault> = Vec::new();
    let mut used: Vec<u64> = Vec::new();
    // Random starting points, then the next instruction that fits.
    for _ in 0..count * 200 {
        if faults.len() == count || executed.is_empty() {
            break;
        }
        let at = rng.below(executed.len());
        let ip = executed[at];
        if used.contains(&ip) {
            continue;
        }
        let prev = straight_run_before(text, executed, at);
        let original = text.bytes.to_vec();
        match try_fault(text, kind, ip, &prev, rng) {
            Some(f) if !used.contains(&f.ip) => {
                used.extend([ip, f.ip]);
                faults.push(f);
            }
            Some(_) => text.bytes.copy_from_slice(&original),
            None => {}
        }
    }
    faults
}

/// Up to six instructions that run straight into `executed[at]`.
fn straight_run_before(text: &Text, executed: &[u64], at: usize) -> Vec<u64> {
    let mut out = Vec::new();
    let mut next = executed[at];
    for &p in executed[..at].iter().rev().take(6) {
        match text.decode(p) {
            Some(i) if i.next_ip() == next && i.flow_control() == FlowControl::Next => {
                out.push(p);
                next = p;
            }
            _ => break,
        }
    }
    out.reverse();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A little function: mov rax, rdi / add rax, [rsi+8] / cmp rax, 10 /
    /// jl back to the add / mov edi, 1 / call +0 / ret.
    fn code() -> Vec<u8> {
        vec![
            0x48, 0x89, 0xF8, // mov rax, rdi
            0x48, 0x03, 0x46, 0x08, // add rax, [rsi+8]
            0x48, 0x83, 0xF8, 0x0A, // cmp rax, 10
            0x7C, 0xF6, // jl -10 (to the add)
            0xBF, 0x01, 0x00, 0x00, 0x00, // mov edi, 1
            0xE8, 0x00, 0x00, 0x00, 0x00, // call next
            0xC3, // ret
        ]
    }

    const BASE: u64 = 0xFFFF_FFFF_C000_1000;
    const STARTS: [u64; 7] = [BASE, BASE + 3, BASE + 7, BASE + 11, BASE + 13, BASE + 18, BASE + 23];

    fn one(kind: Kind, seed: u64) -> (Vec<u8>, Vec<Fault>) {
        let mut bytes = code();
        let mut text = Text { base: BASE, bytes: &mut bytes };
        let faults = inject(&mut text, &STARTS, kind, 1, &mut Rng::new(seed));
        (bytes, faults)
    }

    #[test]
    fn every_kind_changes_one_executed_instruction_in_place() {
        for kind in KINDS {
            let (bytes, faults) = one(kind, 7);
            assert_eq!(faults.len(), 1, "{kind:?}");
            assert_eq!(bytes.len(), code().len());
            assert_ne!(bytes, code(), "{kind:?} changed nothing");
            let ip = faults[0].ip;
            assert!(STARTS.contains(&ip), "{kind:?} at {ip:#x}");
            // Every other instruction is untouched.
            let at = (ip - BASE) as usize;
            let len = STARTS.iter().find(|&&s| s > ip).map_or(code().len() - at, |&s| (s - ip) as usize);
            let outside = |b: &[u8]| [b[..at].to_vec(), b[at + len..].to_vec()].concat();
            assert_eq!(outside(&bytes), outside(&code()), "{kind:?} touched a neighbour");
        }
    }

    #[test]
    fn each_kind_makes_its_own_transformation() {
        assert_eq!(one(Kind::Loop, 1).0[11], 0x7D, "jl became jge");
        assert_eq!(&one(Kind::Branch, 1).0[11..13], &[NOP, NOP]);
        assert_eq!(one(Kind::Interface, 1).1[0].ip, BASE + 13, "the mov edi before the call");
        let d = one(Kind::Destination, 3).1[0].clone();
        assert!(d.after.split(',').nth(1) == d.before.split(',').nth(1), "same source: {d}");
        let p = one(Kind::Pointer, 5).1[0].clone();
        assert_eq!(p.ip, BASE + 3, "{p}");
        assert_eq!(
            one(Kind::Text, 9).0.iter().zip(code()).map(|(a, b)| (a ^ b).count_ones()).sum::<u32>(),
            1
        );
    }

    #[test]
    fn the_same_seed_gives_the_same_faults_and_another_seed_others() {
        let mut a = code();
        let mut b = code();
        let fa = inject(&mut Text { base: BASE, bytes: &mut a }, &STARTS, Kind::Text, 3, &mut Rng::new(42));
        let fb = inject(&mut Text { base: BASE, bytes: &mut b }, &STARTS, Kind::Text, 3, &mut Rng::new(42));
        assert_eq!(a, b);
        assert_eq!(fa.len(), 3);
        assert_eq!(fa.iter().map(|f| f.ip).collect::<Vec<_>>(), fb.iter().map(|f| f.ip).collect::<Vec<_>>());
        let mut c = code();
        inject(&mut Text { base: BASE, bytes: &mut c }, &STARTS, Kind::Text, 3, &mut Rng::new(43));
        assert_ne!(a, c);
    }
}
