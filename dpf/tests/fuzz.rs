//! 100,000 malformed frames (mutated, truncated, extended, random) through
//! classification and the transmit check: no panic, and every answer
//! agrees with running each owner's filter program on the frame.

mod common;

use bpf::gen::Rng;
use bpf::insn::Insn;
use bpf::Memory;
use common::*;
use dpf::pattern::{Pattern, IPPROTO_TCP, IPPROTO_UDP};
use dpf::{filter_spec, Demux};

#[test]
fn malformed_frames_never_panic_and_always_agree_with_the_programs() {
    let programs: Vec<Vec<Insn>> = vec![
        tcp_port(HOST, 80),
        tcp_conn((HOST, 22), (PEER, 50000)),
        udp_port(HOST, 68),
        Pattern::new().arp_target(HOST).program(),
        Pattern::new().ethertype(0x0800).atom(14, 1, 0xf0, 0x40).field(23, 1, 1).program(), // ICMP, any IHL
        either_port(IPPROTO_UDP, 53, 5353),
    ];
    let mut d = Demux::new(NIC, 7);
    let verified: Vec<_> = programs.iter().map(|p| bpf::verify(p, &filter_spec()).unwrap()).collect();
    for (i, p) in programs.iter().enumerate() {
        d.install(i as u32 + 1, i as u32, p).unwrap();
    }
    let seeds = [
        frame(IPPROTO_TCP, (PEER, 40000), (HOST, 80), 30),
        frame(IPPROTO_TCP, (PEER, 50000), (HOST, 22), 0),
        frame(IPPROTO_UDP, (PEER, 67), (HOST, 68), 300),
        frame(IPPROTO_UDP, (PEER, 9), (HOST, 53), 20),
        {
            let mut f = vec![0u8; 42];
            f[12] = 8;
            f[13] = 6;
            f[38..42].copy_from_slice(&HOST);
            f
        },
        {
            let mut f = frame(1, (PEER, 0), (HOST, 0), 40);
            f[14] = 0x46;
            f
        },
    ];
    let mut rng = Rng::new(0xf022);
    let (mut claimed, mut refused_tx) = (0u64, 0u64);
    let n = 100_000;
    for i in 0..n {
        let mut f = seeds[i % seeds.len()].clone();
        match rng.below(6) {
            0 => {}
            1 => f.truncate(rng.below(f.len() as u64 + 1) as usize),
            2 => f.extend((0..rng.below(64)).map(|_| rng.below(256) as u8)),
            3 => f = (0..rng.below(1600)).map(|_| rng.below(256) as u8).collect(),
            _ => {
                for _ in 0..1 + rng.below(4) {
                    if !f.is_empty() {
                        let at = rng.below(f.len().min(48) as u64) as usize;
                        f[at] = rng.below(256) as u8;
                    }
                }
            }
        }
        let got = d.classify(&f);
        let ctx = [0u8; 16];
        for (k, p) in verified.iter().enumerate() {
            let wants = bpf::run(p, &Memory { ctx: &ctx, regions: &[], packet: &f }).unwrap() != 0;
            let has = got.as_slice().iter().any(|x| x.owner == k as u32 + 1);
            assert_eq!(wants, has, "owner {} frame {f:?}", k + 1);
        }
        claimed += !got.is_empty() as u64;
        // Send it back as if from an owner: never a panic, and refused
        // unless the owner's filter takes the reply.
        let owner = 1 + rng.below(programs.len() as u64) as u32;
        refused_tx += d.check_transmit(owner, &f).is_err() as u64;
    }
    let s = d.stats();
    assert_eq!(s.frames, n as u64);
    assert_eq!(s.unclaimed, n as u64 - claimed);
    assert!(claimed > 10_000 && s.unclaimed > 10_000, "claimed {claimed}");
    assert!(refused_tx > 50_000, "{refused_tx}");
}
