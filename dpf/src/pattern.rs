//! Builds canonical filters: a list of big-endian field values the frame
//! must hold becomes an eBPF program of loads and equality tests (what a
//! library hands the kernel). The analysis in `shape` recognises the
//! result, and any program written in the same style, as canonical.

use alloc::vec::Vec;

use bpf::insn::{Insn, JMP_JGT, JMP_JNE};
use bpf::Asm;

/// `frame[off..off + width] & mask == value`, big-endian, width 1, 2 or 4.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Atom {
    pub off: u16,
    pub width: u8,
    pub mask: u32,
    pub value: u32,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pattern {
    atoms: Vec<Atom>,
}

pub const ETH_IPV4: u16 = 0x0800;
pub const ETH_ARP: u16 = 0x0806;
pub const IPPROTO_ICMP: u8 = 1;
pub const IPPROTO_TCP: u8 = 6;
pub const IPPROTO_UDP: u8 = 17;

impl Pattern {
    pub fn new() -> Pattern {
        Pattern::default()
    }

    pub fn atom(mut self, off: u16, width: u8, mask: u32, value: u32) -> Pattern {
        self.atoms.push(Atom { off, width, mask, value: value & mask });
        self
    }

    pub fn field(self, off: u16, width: u8, value: u32) -> Pattern {
        let mask = if width >= 4 { u32::MAX } else { (1 << (8 * u32::from(width))) - 1 };
        self.atom(off, width, mask, value)
    }

    pub fn eth_dst(self, mac: [u8; 6]) -> Pattern {
        self.field(0, 4, u32::from_be_bytes([mac[0], mac[1], mac[2], mac[3]])).field(
            4,
            2,
            u32::from(u16::from_be_bytes([mac[4], mac[5]])),
        )
    }

    pub fn ethertype(self, t: u16) -> Pattern {
        self.field(12, 2, u32::from(t))
    }

    /// IPv4 with a 20-byte header (what the merged tree's field layout
    /// expects; frames with IP options need an opaque filter).
    pub fn ipv4(self, proto: u8) -> Pattern {
        self.ethertype(ETH_IPV4).field(14, 1, 0x45).field(23, 1, u32::from(proto))
    }

    pub fn src_ip(self, ip: [u8; 4]) -> Pattern {
        self.field(26, 4, u32::from_be_bytes(ip))
    }

    pub fn dst_ip(self, ip: [u8; 4]) -> Pattern {
        self.field(30, 4, u32::from_be_bytes(ip))
    }

    pub fn src_port(self, port: u16) -> Pattern {
        self.field(34, 2, u32::from(port))
    }

    pub fn dst_port(self, port: u16) -> Pattern {
        self.field(36, 2, u32::from(port))
    }

    /// The ARP frames about `ip` (its target protocol address).
    pub fn arp_target(self, ip: [u8; 4]) -> Pattern {
        self.ethertype(ETH_ARP).field(38, 4, u32::from_be_bytes(ip))
    }

    /// The eBPF program: bounds check, then each atom; returns 1 when all
    /// hold, 0 otherwise.
    pub fn program(&self) -> Vec<Insn> {
        let end = self.atoms.iter().map(|a| u32::from(a.off) + u32::from(a.width)).max().unwrap_or(0);
        let mut a = Asm::new();
        let no = a.label();
        a.mov64_imm(0, 0);
        a.ldx_w(2, 1, 0).ldx_w(3, 1, 4).mov64_reg(4, 2).add64_imm(4, end as i32);
        a.jmp_reg(JMP_JGT, 4, 3, no);
        for at in &self.atoms {
            match at.width {
                1 => a.ldx_b(5, 2, at.off as i16),
                2 => a.ldx_h(5, 2, at.off as i16).be(5, 16),
                _ => a.ldx_w(5, 2, at.off as i16).be(5, 32),
            };
            if at.mask != u32::MAX >> (32 - 8 * u32::from(at.width.min(4))) {
                a.and32_imm(5, at.mask as i32);
            }
            a.jmp32_imm(JMP_JNE, 5, at.value as i32, no);
        }
        a.mov64_imm(0, 1);
        a.bind(no).exit();
        a.finish().expect("labels bound")
    }
}
