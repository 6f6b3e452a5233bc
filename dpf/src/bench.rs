//! The demultiplexing cost against the number of installed filters: the
//! work the merged tree does per frame (nodes visited + field loads + hash
//! probes; opaque filters run: 0 here), used by `tests/flat.rs` and
//! `examples/demux_bench.rs`.

use alloc::vec::Vec;

use crate::demux::Demux;
use crate::pattern::{Pattern, IPPROTO_TCP};

/// What the filters look like.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `n` listening ports: "IPv4 TCP to 10.0.2.15 port 1000 + i".
    Ports,
    /// `n` connections of port 80: 4-tuples from 10.0.x.y port 40000 + i.
    Connections,
}

const NIC: [u8; 6] = [0x52, 0x54, 0, 0x12, 0x34, 0x56];
const HOST: [u8; 4] = [10, 0, 2, 15];

fn peer(i: u32) -> ([u8; 4], u16) {
    ([10, 0, (i >> 8) as u8 + 3, i as u8], 40000 + (i % 1000) as u16)
}

fn frame(src: ([u8; 4], u16), dst_port: u16) -> [u8; 60] {
    let mut f = [0u8; 60];
    f[0..6].copy_from_slice(&NIC);
    f[12] = 8;
    f[14] = 0x45;
    f[23] = IPPROTO_TCP;
    f[26..30].copy_from_slice(&src.0);
    f[30..34].copy_from_slice(&HOST);
    f[34..36].copy_from_slice(&src.1.to_be_bytes());
    f[36..38].copy_from_slice(&dst_port.to_be_bytes());
    f
}

/// A demultiplexer with `n` filters of `kind` (one owner each), and one
/// frame for each filter.
pub fn setup(kind: Kind, n: u32) -> (Demux, Vec<[u8; 60]>) {
    let mut d = Demux::new(NIC, 0x0123_4567_89ab_cdef);
    let mut frames = Vec::new();
    for i in 0..n {
        let (insns, f) = match kind {
            Kind::Ports => {
                let port = 1000 + i as u16;
                (Pattern::new().ipv4(IPPROTO_TCP).dst_ip(HOST).dst_port(port).program(), frame(peer(0), port))
            }
            Kind::Connections => {
                let (ip, port) = peer(i);
                let p = Pattern::new().ipv4(IPPROTO_TCP).src_ip(ip).dst_ip(HOST).src_port(port).dst_port(80);
                (p.program(), frame((ip, port), 80))
            }
        };
        d.install(i + 1, i, &insns).expect("disjoint filters");
        frames.push(f);
    }
    (d, frames)
}

/// Average work per frame over `rounds` passes over the frames, each of
/// which must reach exactly its filter's owner.
pub fn work_per_frame(kind: Kind, n: u32, rounds: u32) -> f64 {
    let (mut d, frames) = setup(kind, n);
    let before = d.stats().work;
    for _ in 0..rounds {
        for (i, f) in frames.iter().enumerate() {
            let got = d.classify(f);
            assert!(got.as_slice().len() == 1 && got.as_slice()[0].owner == i as u32 + 1);
        }
    }
    let w = d.stats().work;
    let ops = (w.nodes - before.nodes) + (w.loads - before.loads) + (w.probes - before.probes);
    ops as f64 / f64::from(n * rounds)
}
