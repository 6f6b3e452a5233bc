//! Frames and filters the tests share.
#![allow(dead_code)]

use bpf::insn::Insn;
use dpf::pattern::{Pattern, IPPROTO_TCP, IPPROTO_UDP};

pub const NIC: [u8; 6] = [0x52, 0x54, 0x00, 0x12, 0x34, 0x56];
pub const GW: [u8; 6] = [0x52, 0x55, 0x0a, 0x00, 0x02, 0x02];
pub const HOST: [u8; 4] = [10, 0, 2, 15];
pub const PEER: [u8; 4] = [10, 0, 2, 2];

/// An Ethernet + IPv4 (20-byte header) + TCP/UDP frame with `payload`
/// bytes after a 20-byte (TCP) or 8-byte (UDP) header.
pub fn frame(proto: u8, src: ([u8; 4], u16), dst: ([u8; 4], u16), payload: usize) -> Vec<u8> {
    let l4 = if proto == IPPROTO_TCP { 20 } else { 8 };
    let mut f = vec![0u8; 14 + 20 + l4 + payload];
    f[0..6].copy_from_slice(&NIC);
    f[6..12].copy_from_slice(&GW);
    f[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
    f[14] = 0x45;
    let total = (20 + l4 + payload) as u16;
    f[16..18].copy_from_slice(&total.to_be_bytes());
    f[22] = 64;
    f[23] = proto;
    f[26..30].copy_from_slice(&src.0);
    f[30..34].copy_from_slice(&dst.0);
    f[34..36].copy_from_slice(&src.1.to_be_bytes());
    f[36..38].copy_from_slice(&dst.1.to_be_bytes());
    f
}

/// The same frame as sent by us: our MAC as source.
pub fn outgoing(proto: u8, src: ([u8; 4], u16), dst: ([u8; 4], u16)) -> Vec<u8> {
    let mut f = frame(proto, src, dst, 0);
    f[0..6].copy_from_slice(&GW);
    f[6..12].copy_from_slice(&NIC);
    f
}

pub fn tcp_port(ip: [u8; 4], port: u16) -> Vec<Insn> {
    Pattern::new().ipv4(IPPROTO_TCP).dst_ip(ip).dst_port(port).program()
}

pub fn udp_port(ip: [u8; 4], port: u16) -> Vec<Insn> {
    Pattern::new().ipv4(IPPROTO_UDP).dst_ip(ip).dst_port(port).program()
}

pub fn tcp_conn(local: ([u8; 4], u16), remote: ([u8; 4], u16)) -> Vec<Insn> {
    Pattern::new()
        .ipv4(IPPROTO_TCP)
        .src_ip(remote.0)
        .dst_ip(local.0)
        .src_port(remote.1)
        .dst_port(local.1)
        .program()
}

/// `r0 = 1; exit`: claims every frame.
pub fn everything() -> Vec<Insn> {
    let mut a = bpf::Asm::new();
    a.mov64_imm(0, 1).exit();
    a.finish().unwrap()
}

/// An opaque filter: IPv4 protocol `proto` to port `p` *or* `q` (two
/// accepting paths, so not canonical).
pub fn either_port(proto: u8, p: u16, q: u16) -> Vec<Insn> {
    use bpf::insn::{JMP_JEQ, JMP_JGT, JMP_JNE};
    let mut a = bpf::Asm::new();
    let (no, yes) = (a.label(), a.label());
    a.mov64_imm(0, 0).ldx_w(2, 1, 0).ldx_w(3, 1, 4).mov64_reg(4, 2).add64_imm(4, 38);
    a.jmp_reg(JMP_JGT, 4, 3, no);
    a.ldx_h(5, 2, 12).jmp_imm(JMP_JNE, 5, 0x0008, no);
    a.ldx_b(5, 2, 23).jmp_imm(JMP_JNE, 5, i32::from(proto), no);
    a.ldx_h(5, 2, 36)
        .be(5, 16)
        .jmp_imm(JMP_JEQ, 5, i32::from(p), yes)
        .jmp_imm(JMP_JEQ, 5, i32::from(q), yes)
        .ja(no);
    a.bind(yes).mov64_imm(0, 1);
    a.bind(no).exit();
    a.finish().unwrap()
}
