//! The protection rules against hostile owners: stealing (a filter over
//! another's port or connection), snooping (a filter that matches
//! everything, or a disguised one), spoofing (a frame with another's
//! source port or address) and malformed frames.

mod common;

use bpf::insn::{JMP_JEQ, JMP_JGT};
use common::*;
use dpf::pattern::{Pattern, IPPROTO_TCP};
use dpf::{Demux, FilterError, FilterId, Grantee, InstallError, TxError};

const A: u32 = 1;
const B: u32 = 2;
const C: u32 = 3;

fn demux() -> Demux {
    Demux::new(NIC, 0x5eed)
}

fn owners(d: &mut Demux, f: &[u8]) -> Vec<(u32, u32)> {
    d.classify(f).as_slice().iter().map(|x| (x.owner, x.sink)).collect()
}

#[test]
fn a_filter_over_anothers_port_is_refused() {
    let mut d = demux();
    let web = d.install(A, 10, &tcp_port(HOST, 80)).unwrap();
    let err = d.install(B, 20, &tcp_port(HOST, 80)).unwrap_err();
    assert_eq!(err, InstallError::Overlap { filter: web, owner: A });
    // More specific does not win: one connection of A's port is A's too.
    let err = d.install(B, 20, &tcp_conn((HOST, 80), (PEER, 40000))).unwrap_err();
    assert_eq!(err, InstallError::Overlap { filter: web, owner: A });
    // Nor does a less specific one: every TCP frame, or every frame to port 80.
    let all_tcp = Pattern::new().ipv4(IPPROTO_TCP).program();
    assert!(matches!(d.install(B, 20, &all_tcp), Err(InstallError::Overlap { owner: A, .. })));
    let any_ip_80 = Pattern::new().ipv4(IPPROTO_TCP).dst_port(80).program();
    assert!(matches!(d.install(B, 20, &any_ip_80), Err(InstallError::Overlap { owner: A, .. })));
    // A refused filter changed nothing: A still gets its frames alone.
    let f = frame(IPPROTO_TCP, (PEER, 40000), (HOST, 80), 10);
    assert_eq!(owners(&mut d, &f), [(A, 10)]);
    // Another port is fine.
    d.install(B, 20, &tcp_port(HOST, 8080)).unwrap();
    let g = frame(IPPROTO_TCP, (PEER, 40000), (HOST, 8080), 10);
    assert_eq!(owners(&mut d, &g), [(B, 20)]);
}

#[test]
fn a_filter_that_matches_everything_is_refused() {
    let mut d = demux();
    d.install(A, 10, &tcp_port(HOST, 80)).unwrap();
    assert!(matches!(d.install(B, 20, &everything()), Err(InstallError::Overlap { owner: A, .. })));
    // Disguised: accept port 80 *or* anything with an odd TTL. Two
    // accepting paths, not canonical; the claim still covers port 80.
    let mut a = bpf::Asm::new();
    let (no, yes) = (a.label(), a.label());
    a.mov64_imm(0, 0).ldx_w(2, 1, 0).ldx_w(3, 1, 4).mov64_reg(4, 2).add64_imm(4, 38);
    a.jmp_reg(JMP_JGT, 4, 3, no);
    a.ldx_b(5, 2, 22).and64_imm(5, 1).jmp_imm(JMP_JEQ, 5, 1, yes);
    a.ldx_h(5, 2, 36).be(5, 16).jmp_imm(JMP_JEQ, 5, 80, yes).ja(no);
    a.bind(yes).mov64_imm(0, 1);
    a.bind(no).exit();
    let sneaky = a.finish().unwrap();
    assert!(matches!(d.install(B, 20, &sneaky), Err(InstallError::Overlap { owner: A, .. })));
    // Opaque arithmetic (the port times one) cannot be read exactly: it
    // claims more than it needs, and is refused too.
    let mut a = bpf::Asm::new();
    let no = a.label();
    a.mov64_imm(0, 0).ldx_w(2, 1, 0).ldx_w(3, 1, 4).mov64_reg(4, 2).add64_imm(4, 38);
    a.jmp_reg(JMP_JGT, 4, 3, no);
    a.ldx_h(5, 2, 36).be(5, 16).mul64_imm(5, 1).jmp_imm(bpf::insn::JMP_JNE, 5, 80, no).mov64_imm(0, 1);
    a.bind(no).exit();
    assert!(matches!(d.install(B, 20, &a.finish().unwrap()), Err(InstallError::Overlap { owner: A, .. })));
    // And the first match-everything filter blocks later ones of others.
    let mut e = demux();
    e.install(C, 30, &everything()).unwrap();
    assert!(matches!(e.install(A, 10, &tcp_port(HOST, 80)), Err(InstallError::Overlap { owner: C, .. })));
}

#[test]
fn opaque_filters_run_alone_and_may_coexist() {
    let mut d = demux();
    d.install(A, 10, &tcp_port(HOST, 80)).unwrap();
    // B: TCP port 8080 or 8081, written with two accepting paths.
    let id = d.install(B, 20, &either_port(IPPROTO_TCP, 8080, 8081)).unwrap();
    assert_eq!(d.is_canonical(id), Some(false));
    let f = frame(IPPROTO_TCP, (PEER, 1), (HOST, 8081), 0);
    assert_eq!(owners(&mut d, &f), [(B, 20)]);
    assert!(d.charge(B) > 0, "opaque runs are charged to their owner");
    // A frame for A's port does not even run B's filter.
    let before = d.stats().opaque_runs;
    let f = frame(IPPROTO_TCP, (PEER, 1), (HOST, 80), 0);
    assert_eq!(owners(&mut d, &f), [(A, 10)]);
    assert_eq!(d.stats().opaque_runs, before);
}

#[test]
fn consent_lets_an_owner_share_and_withdrawing_it_removes_the_sharer() {
    let mut d = demux();
    let arp = d.install(A, 10, &Pattern::new().arp_target(HOST).program()).unwrap();
    assert!(d.install(B, 20, &Pattern::new().arp_target(HOST).program()).is_err());
    // Only the owner may consent.
    assert_eq!(d.consent(B, arp, Grantee::Anyone), Err(FilterError::NotOwner));
    d.consent(A, arp, Grantee::Owner(B)).unwrap();
    let b_arp = d.install(B, 20, &Pattern::new().arp_target(HOST).program()).unwrap();
    assert!(d.install(C, 30, &Pattern::new().arp_target(HOST).program()).is_err(), "consent was for B only");
    let mut f = vec![0u8; 42];
    f[12..14].copy_from_slice(&0x0806u16.to_be_bytes());
    f[38..42].copy_from_slice(&HOST);
    assert_eq!(owners(&mut d, &f), [(A, 10), (B, 20)]);
    assert_eq!(d.withdraw(A, arp, Grantee::Owner(B)).unwrap(), [b_arp]);
    assert_eq!(owners(&mut d, &f), [(A, 10)]);
}

#[test]
fn within_one_owner_the_most_specific_filter_wins() {
    let mut d = demux();
    d.install(A, 10, &tcp_port(HOST, 80)).unwrap();
    d.install(A, 11, &tcp_conn((HOST, 80), (PEER, 40000))).unwrap();
    let conn = frame(IPPROTO_TCP, (PEER, 40000), (HOST, 80), 0);
    let other = frame(IPPROTO_TCP, (PEER, 40001), (HOST, 80), 0);
    assert_eq!(owners(&mut d, &conn), [(A, 11)]);
    assert_eq!(owners(&mut d, &other), [(A, 10)]);
}

#[test]
fn transmit_is_checked_against_the_senders_filters() {
    let mut d = demux();
    d.install(A, 10, &tcp_port(HOST, 80)).unwrap();
    d.install(B, 20, &tcp_port(HOST, 8080)).unwrap();
    // A answers a client from its port.
    assert_eq!(d.check_transmit(A, &outgoing(IPPROTO_TCP, (HOST, 80), (PEER, 40000))), Ok(()));
    // B pretends to be A's port: spoofed source port.
    assert_eq!(
        d.check_transmit(B, &outgoing(IPPROTO_TCP, (HOST, 80), (PEER, 40000))),
        Err(TxError::NotBound)
    );
    // B's own port from another address: spoofed source address.
    let spoof_ip = [10, 0, 2, 99];
    assert_eq!(
        d.check_transmit(B, &outgoing(IPPROTO_TCP, (spoof_ip, 8080), (PEER, 1))),
        Err(TxError::NotBound)
    );
    // B's port over UDP is not B's either.
    assert_eq!(
        d.check_transmit(B, &outgoing(dpf::pattern::IPPROTO_UDP, (HOST, 8080), (PEER, 1))),
        Err(TxError::NotBound)
    );
    // Another NIC's source MAC.
    let mut f = outgoing(IPPROTO_TCP, (HOST, 8080), (PEER, 1));
    assert_eq!(d.check_transmit(B, &f), Ok(()));
    f[11] ^= 1;
    assert_eq!(d.check_transmit(B, &f), Err(TxError::SourceMac));
    // Runts and giants.
    assert_eq!(d.check_transmit(B, &f[..13]), Err(TxError::BadLength));
    assert_eq!(d.check_transmit(B, &vec![0u8; 1515]), Err(TxError::BadLength));
    // An owner with no filter sends nothing.
    assert_eq!(d.check_transmit(C, &outgoing(IPPROTO_TCP, (HOST, 5), (PEER, 1))), Err(TxError::NotBound));
    assert_eq!(d.stats().tx_refused, 7);
}

#[test]
fn unclaimed_and_truncated_frames_are_dropped() {
    let mut d = demux();
    d.install(A, 10, &tcp_port(HOST, 80)).unwrap();
    let f = frame(IPPROTO_TCP, (PEER, 1), (HOST, 81), 0);
    assert!(d.classify(&f).is_empty());
    assert_eq!(d.stats().unclaimed, 1);
    // Every truncation of a frame A would take, down to nothing.
    let f = frame(IPPROTO_TCP, (PEER, 1), (HOST, 80), 0);
    for n in 0..38 {
        assert!(d.classify(&f[..n]).is_empty(), "{n} bytes claimed");
    }
    assert_eq!(d.stats().unclaimed, 39);
    assert_eq!(owners(&mut d, &f[..38]), [(A, 10)]);
}

#[test]
fn only_the_owner_removes_and_removal_frees_the_tree() {
    let mut d = demux();
    let empty = d.tree_nodes();
    let web = d.install(A, 10, &tcp_port(HOST, 80)).unwrap();
    assert_eq!(d.remove(B, web), Err(FilterError::NotOwner));
    assert_eq!(d.remove(B, FilterId(77)), Err(FilterError::NoSuchFilter));
    assert!(d.install(B, 20, &tcp_port(HOST, 80)).is_err());
    for p in 0..50 {
        d.install(A, 10, &tcp_port(HOST, 1000 + p)).unwrap();
    }
    d.remove(A, web).unwrap();
    d.install(B, 20, &tcp_port(HOST, 80)).unwrap();
    d.remove_owner(A);
    d.remove_owner(B);
    assert_eq!(d.tree_nodes(), empty);
    assert!(d.filters_of(A).is_empty());
}

#[test]
fn rejected_programs_say_why() {
    let mut d = demux();
    let mut a = bpf::Asm::new();
    a.ldx_w(2, 1, 0).ldx_b(0, 2, 40).exit(); // packet read without a bounds check
    assert!(matches!(d.install(A, 1, &a.finish().unwrap()), Err(InstallError::Rejected(_))));
}
