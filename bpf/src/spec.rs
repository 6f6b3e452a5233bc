//! The load-time description of what a program may touch.

use alloc::vec::Vec;

/// Default cap on program length, in instruction slots.
pub const DEFAULT_MAX_INSNS: usize = 4096;
/// Default cap on verifier work (instructions stepped over all paths).
pub const DEFAULT_MAX_STEPS: usize = 1 << 20;

/// Where the packet bounds live inside the context. Loading exactly these
/// fields (at this offset, with this width) yields the packet start and
/// packet end pointers; any other access that overlaps them is rejected.
/// The bytes stored there are never read: the caller passes the packet
/// separately, so a forged context cannot widen the packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacketFields {
    /// Context offset of the packet-start field.
    pub data_off: u32,
    /// Context offset of the packet-end field.
    pub data_end_off: u32,
    /// Width of both fields in bytes: 4 or 8.
    pub width: u32,
}

/// Everything the verifier needs to know about the program's environment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProgramSpec {
    /// Size of the read-only context that r1 points to on entry.
    pub ctx_size: u32,
    /// Packet access, if the context carries packet bounds.
    pub packet: Option<PacketFields>,
    /// Size in bytes of each read-only region, indexed by region number.
    pub regions: Vec<u32>,
    /// Longest accepted program, in instruction slots.
    pub max_insns: usize,
    /// Bound on verifier effort; exceeding it rejects the program.
    pub max_steps: usize,
}

impl ProgramSpec {
    /// A context of `ctx_size` bytes, no regions and no packet.
    pub fn new(ctx_size: u32) -> ProgramSpec {
        ProgramSpec {
            ctx_size,
            packet: None,
            regions: Vec::new(),
            max_insns: DEFAULT_MAX_INSNS,
            max_steps: DEFAULT_MAX_STEPS,
        }
    }

    pub fn with_regions(mut self, sizes: &[u32]) -> ProgramSpec {
        self.regions = sizes.to_vec();
        self
    }

    pub fn with_packet(mut self, fields: PacketFields) -> ProgramSpec {
        self.packet = Some(fields);
        self
    }

    pub fn with_max_insns(mut self, max: usize) -> ProgramSpec {
        self.max_insns = max;
        self
    }

    pub fn with_max_steps(mut self, max: usize) -> ProgramSpec {
        self.max_steps = max;
        self
    }
}
