//! Why the verifier refused a program, and where.

use core::fmt;

/// A rejected program: the instruction slot at fault and the reason.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reject {
    pub index: usize,
    pub reason: Reason,
}

impl Reject {
    pub fn new(index: usize, reason: Reason) -> Reject {
        Reject { index, reason }
    }
}

/// Kind of memory a pointer refers to, as named in reject messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PtrKind {
    Ctx,
    Stack,
    Region(u32),
    Packet,
    PacketEnd,
}

impl fmt::Display for PtrKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PtrKind::Ctx => write!(f, "context pointer"),
            PtrKind::Stack => write!(f, "stack pointer"),
            PtrKind::Region(i) => write!(f, "pointer to region {i}"),
            PtrKind::Packet => write!(f, "packet pointer"),
            PtrKind::PacketEnd => write!(f, "packet-end pointer"),
        }
    }
}

/// Every distinct cause of rejection. Offsets are signed byte offsets from
/// the start of the object (or from r10 for the stack).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    // --- whole-program and spec problems ---
    /// The program has no instructions.
    EmptyProgram,
    /// More instruction slots than the spec allows.
    TooManyInstructions {
        len: usize,
        max: usize,
    },
    /// The byte image is not a multiple of 8 bytes.
    TruncatedInstruction {
        len: usize,
    },
    /// The load-time description itself is inconsistent.
    InvalidSpec(&'static str),
    /// Path exploration exceeded the spec's work bound.
    TooComplex {
        steps: usize,
    },

    // --- decoding ---
    UnknownOpcode(u8),
    BadRegister(u8),
    /// r10 is the read-only frame pointer.
    WriteToFramePointer,
    /// A field that must be zero for this opcode is not.
    ReservedField(&'static str),
    /// A newer eBPF extension (sign-extending ops, bswap, gotol...).
    UnsupportedExtension(&'static str),
    /// ld_imm64 is the last slot, so its second half is missing.
    IncompleteLdImm64,
    /// The second slot of ld_imm64 is not an all-zero placeholder.
    MalformedLdImm64,
    /// ld_imm64 with a `src_reg` other than 0 (constant) or 2 (region).
    BadPseudoSource(u8),
    /// A region index beyond those declared in the spec.
    UnknownRegion {
        region: i64,
        count: usize,
    },
    /// Legacy `BPF_ABS`/`BPF_IND` packet loads.
    LegacyPacketLoad,
    /// Atomic read-modify-write instructions.
    AtomicOperation,
    /// Helper calls are not offered (yet).
    HelperCall(i32),
    /// `bpf_tail_call`.
    TailCall,
    /// BPF-to-BPF function calls.
    LocalCall,
    /// Kernel function calls.
    KfuncCall,
    /// Byte-swap width other than 16, 32 or 64.
    BadEndianWidth(i32),
    /// Shift by an immediate not below the operand width.
    ShiftOutOfRange(i32),
    /// Division or modulo by the immediate zero.
    DivisionByZero,

    // --- control flow ---
    JumpOutOfRange {
        target: i64,
    },
    /// Jumps must go forward; anything else could loop.
    BackwardJump {
        target: i64,
    },
    JumpIntoLdImm64 {
        target: usize,
    },
    UnreachableInstruction,
    /// Execution can run past the last instruction without `exit`.
    FallOffEnd,

    // --- registers and values ---
    UninitRegister(u8),
    /// `exit` with r0 never written.
    ExitWithoutReturnValue,
    /// `exit` with a pointer in r0 would leak a kernel address.
    PointerLeak(PtrKind),
    /// The divisor register may be zero.
    DivisorMaybeZero(u8),

    // --- pointer arithmetic and comparison ---
    /// An ALU operation other than add/sub (or mov) on a pointer.
    PointerArithmetic {
        op: u8,
        kind: PtrKind,
    },
    /// Any 32-bit ALU operation involving a pointer (it would truncate it).
    PointerArithmetic32(PtrKind),
    /// Adding two pointers.
    PointerPlusPointer,
    /// Subtracting a pointer from a scalar.
    ScalarMinusPointer,
    /// Subtracting pointers other than packet-end minus packet.
    PointerDifference {
        left: PtrKind,
        right: PtrKind,
    },
    /// Adding a scalar whose range is not bounded enough.
    UnboundedPointerOffset(PtrKind),
    /// A pointer's offset left the representable range.
    PointerOffsetOverflow(PtrKind),
    /// Comparing a pointer with a scalar (no null pointers exist here).
    PointerScalarComparison(PtrKind),
    /// Comparing pointers that are not both packet pointers.
    PointerKindComparison {
        left: PtrKind,
        right: PtrKind,
    },
    /// JMP32 (or JSET) on pointers.
    PointerComparisonOp(PtrKind),

    // --- memory access ---
    /// Dereferencing something that is not a pointer.
    ScalarDereference,
    /// A load/store instruction used with different pointer kinds on
    /// different paths (it must be compiled for one kind).
    MixedPointerKinds {
        first: PtrKind,
        second: PtrKind,
    },
    UninitStack {
        off: i64,
    },
    StackOutOfBounds {
        off: i64,
        size: u32,
    },
    MisalignedStack {
        off: i64,
        size: u32,
    },
    /// Stack accesses must use a constant offset.
    StackVariableOffset,
    /// A pointer spilled with less than 8 bytes.
    PartialPointerSpill,
    /// Reading part of a spilled pointer.
    PartialPointerFill {
        off: i64,
    },
    CtxOutOfBounds {
        lo: i64,
        hi: i64,
        size: u32,
    },
    CtxWrite,
    /// A context access touching the packet bound fields other than a load
    /// of exactly one field.
    PacketFieldMisuse {
        lo: i64,
        size: u32,
    },
    RegionOutOfBounds {
        region: u32,
        lo: i64,
        hi: i64,
        size: u32,
    },
    RegionWrite(u32),
    /// A packet read not covered by a comparison against packet end.
    PacketNotProven {
        lo: i64,
        size: u32,
    },
    /// A packet read that may start before the packet.
    PacketBeforeStart {
        lo: i64,
    },
    PacketWrite,
    /// Dereferencing the packet-end pointer.
    PacketEndAccess,
    /// Storing a pointer anywhere but the stack.
    PointerStoreOutsideStack(PtrKind),
}

impl fmt::Display for Reject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "instruction {}: {}", self.index, self.reason)
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use Reason::*;
        match *self {
            EmptyProgram => write!(f, "program has no instructions"),
            TooManyInstructions { len, max } => {
                write!(f, "program has {len} instructions, limit is {max}")
            }
            TruncatedInstruction { len } => {
                write!(f, "program image of {len} bytes is not a multiple of 8")
            }
            InvalidSpec(why) => write!(f, "invalid program spec: {why}"),
            TooComplex { steps } => {
                write!(f, "too many states to explore (gave up after {steps} steps)")
            }
            UnknownOpcode(op) => write!(f, "unknown opcode {op:#04x}"),
            BadRegister(r) => write!(f, "register r{r} does not exist"),
            WriteToFramePointer => write!(f, "r10 is read-only"),
            ReservedField(field) => write!(f, "reserved field `{field}` must be zero"),
            UnsupportedExtension(what) => write!(f, "unsupported eBPF extension: {what}"),
            IncompleteLdImm64 => write!(f, "ld_imm64 is missing its second slot"),
            MalformedLdImm64 => write!(f, "second slot of ld_imm64 must be all zero but imm"),
            BadPseudoSource(s) => {
                write!(f, "ld_imm64 src {s} unsupported (0 = constant, 2 = region)")
            }
            UnknownRegion { region, count } => {
                write!(f, "region {region} does not exist ({count} declared)")
            }
            LegacyPacketLoad => write!(f, "legacy ABS/IND packet loads are not supported"),
            AtomicOperation => write!(f, "atomic operations are not allowed"),
            HelperCall(id) => write!(f, "call to helper {id}: no helpers are available"),
            TailCall => write!(f, "tail calls are not allowed"),
            LocalCall => write!(f, "bpf-to-bpf calls are not allowed"),
            KfuncCall => write!(f, "kernel function calls are not allowed"),
            BadEndianWidth(w) => write!(f, "byte swap width {w} (must be 16, 32 or 64)"),
            ShiftOutOfRange(n) => write!(f, "shift by {n} is out of range"),
            DivisionByZero => write!(f, "division or modulo by constant zero"),
            JumpOutOfRange { target } => write!(f, "jump to {target} is outside the program"),
            BackwardJump { target } => {
                write!(f, "backward jump to {target} (loops are not allowed)")
            }
            JumpIntoLdImm64 { target } => {
                write!(f, "jump to {target}, the middle of an ld_imm64")
            }
            UnreachableInstruction => write!(f, "instruction is unreachable"),
            FallOffEnd => write!(f, "execution can fall off the end of the program"),
            UninitRegister(r) => write!(f, "r{r} is read before it is written"),
            ExitWithoutReturnValue => write!(f, "exit with r0 uninitialised"),
            PointerLeak(k) => write!(f, "exit would return a {k}"),
            DivisorMaybeZero(r) => write!(f, "divisor r{r} may be zero"),
            PointerArithmetic { op, kind } => {
                write!(f, "ALU operation {op:#04x} not allowed on a {kind}")
            }
            PointerArithmetic32(k) => write!(f, "32-bit ALU operation on a {k}"),
            PointerPlusPointer => write!(f, "cannot add two pointers"),
            ScalarMinusPointer => write!(f, "cannot subtract a pointer from a scalar"),
            PointerDifference { left, right } => {
                write!(f, "cannot subtract a {right} from a {left}")
            }
            UnboundedPointerOffset(k) => {
                write!(f, "offset added to a {k} has an unbounded range")
            }
            PointerOffsetOverflow(k) => write!(f, "offset of {k} out of representable range"),
            PointerScalarComparison(k) => write!(f, "comparison of a {k} with a scalar"),
            PointerKindComparison { left, right } => {
                write!(f, "comparison of a {left} with a {right}")
            }
            PointerComparisonOp(k) => {
                write!(f, "a {k} can only be compared with 64-bit ordered jumps")
            }
            ScalarDereference => write!(f, "memory access through a non-pointer"),
            MixedPointerKinds { first, second } => {
                write!(f, "the same instruction accesses a {first} and a {second} on different paths")
            }
            UninitStack { off } => write!(f, "stack byte at r10{off:+} is uninitialised"),
            StackOutOfBounds { off, size } => {
                write!(f, "stack access of {size} bytes at r10{off:+} is out of bounds")
            }
            MisalignedStack { off, size } => {
                write!(f, "stack access of {size} bytes at r10{off:+} is misaligned")
            }
            StackVariableOffset => write!(f, "stack access with a variable offset"),
            PartialPointerSpill => write!(f, "pointer spilled with fewer than 8 bytes"),
            PartialPointerFill { off } => {
                write!(f, "partial read of a spilled pointer at r10{off:+}")
            }
            CtxOutOfBounds { lo, hi, size } => {
                write!(f, "context access of {size} bytes at offset [{lo}, {hi}] is out of bounds")
            }
            CtxWrite => write!(f, "the context is read-only"),
            PacketFieldMisuse { lo, size } => {
                write!(f, "context access of {size} bytes at {lo} misuses a packet bound field")
            }
            RegionOutOfBounds { region, lo, hi, size } => {
                write!(f, "access of {size} bytes at offset [{lo}, {hi}] is outside region {region}")
            }
            RegionWrite(i) => write!(f, "region {i} is read-only"),
            PacketNotProven { lo, size } => {
                write!(f, "packet access of {size} bytes at offset {lo} not proven against packet end")
            }
            PacketBeforeStart { lo } => write!(f, "packet access at offset {lo} before start"),
            PacketWrite => write!(f, "packets are read-only"),
            PacketEndAccess => write!(f, "the packet-end pointer cannot be dereferenced"),
            PointerStoreOutsideStack(k) => write!(f, "a {k} can only be stored to the stack"),
        }
    }
}
