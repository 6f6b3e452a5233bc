//! IPv6 over loopback: streams and datagrams on `::1`, dual stack (an
//! IPv6 wildcard hears IPv4 peers unless `V6Only`), and the families a
//! socket refuses.

mod common;

use common::*;
use netstack::{Errno, Opt, OptName, SockType};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

fn v6(ip: Ipv6Addr, port: u16) -> SocketAddr {
    SocketAddr::new(IpAddr::V6(ip), port)
}

const ANY6: Ipv6Addr = Ipv6Addr::UNSPECIFIED;
const LO6: Ipv6Addr = Ipv6Addr::LOCALHOST;

#[test]
fn tcp_over_ipv6_loopback_and_ipv4_peers_of_a_dual_stack_listener() {
    let (mut a, mut b) = stacks(Faults::default(), 41);
    let mut clock = Clock { now: 0 };
    let l = a.socket_v6(SockType::Stream);
    assert_eq!(a.local_addr(l), Ok(v6(ANY6, 0)), "an unbound IPv6 socket's name");
    a.bind(l, v6(ANY6, 0)).unwrap();
    let port = a.local_addr(l).unwrap().port();
    assert_ne!(port, 0);
    a.listen(l, 8).unwrap();
    for target in [IpAddr::V6(LO6), IpAddr::V4(Ipv4Addr::LOCALHOST)] {
        let c = if target.is_ipv6() { a.socket_v6(SockType::Stream) } else { a.socket(SockType::Stream) };
        assert_eq!(a.connect(c, SocketAddr::new(target, port)), Err(Errno::EINPROGRESS));
        clock.run(&mut a, &mut b, 5);
        let (s, peer) = a.accept(l).expect("accepted");
        assert_eq!(peer, a.local_addr(c).unwrap());
        assert_eq!(peer.ip(), target);
        assert_eq!(a.local_addr(s).unwrap(), SocketAddr::new(target, port));
        a.send(c, b"ping").unwrap();
        clock.run(&mut a, &mut b, 5);
        let mut buf = [0u8; 8];
        assert_eq!(a.recv(s, &mut buf, false), Ok(4));
        assert_eq!(&buf[..4], b"ping");
    }
    assert_eq!(a.link().sent, 0, "nothing went on the wire");
    // IPv6 has no route off the machine.
    let c = a.socket_v6(SockType::Stream);
    assert_eq!(a.connect(c, v6("2001:db8::1".parse().unwrap(), 80)), Err(Errno::ENETUNREACH));
    // An IPv4 socket has no IPv6.
    let c = a.socket(SockType::Stream);
    assert_eq!(a.bind(c, v6(LO6, 0)), Err(Errno::EAFNOSUPPORT));
    assert_eq!(a.connect(c, v6(LO6, port)), Err(Errno::EAFNOSUPPORT));
}

#[test]
fn v6only_keeps_ipv4_out_and_frees_the_ipv4_port() {
    let (mut a, mut b) = stacks(Faults::default(), 42);
    let mut clock = Clock { now: 0 };
    let l = a.socket_v6(SockType::Stream);
    assert_eq!(a.option(l, OptName::V6Only), Ok(Opt::V6Only(false)));
    a.set_option(l, Opt::V6Only(true)).unwrap();
    a.bind(l, v6(ANY6, 0)).unwrap();
    assert_eq!(a.set_option(l, Opt::V6Only(false)), Err(Errno::EINVAL), "only before bind");
    let port = a.local_addr(l).unwrap().port();
    a.listen(l, 8).unwrap();
    // The IPv4 port is free: an IPv4 socket binds it, and an IPv4 connect
    // does not reach the IPv6-only listener.
    let l4 = a.socket(SockType::Stream);
    a.bind(l4, sa(Ipv4Addr::LOCALHOST, port)).unwrap();
    let c = a.socket(SockType::Stream);
    assert_eq!(a.connect(c, sa(Ipv4Addr::LOCALHOST, port)), Err(Errno::EINPROGRESS));
    clock.run(&mut a, &mut b, 5);
    assert_eq!(a.connect(c, sa(Ipv4Addr::LOCALHOST, port)), Err(Errno::ECONNREFUSED));
    assert_eq!(a.accept(l), Err(Errno::EAGAIN));
    // A dual-stack wildcard conflicts with the IPv4 binding.
    let d = a.socket_v6(SockType::Stream);
    assert_eq!(a.bind(d, v6(ANY6, port)), Err(Errno::EADDRINUSE));
    // An IPv6-only socket cannot reach IPv4.
    let u = a.socket_v6(SockType::Datagram);
    a.set_option(u, Opt::V6Only(true)).unwrap();
    assert_eq!(a.send_to(u, b"x", sa(Ipv4Addr::LOCALHOST, 9)), Err(Errno::ENETUNREACH));
    // V6Only is not an option of an IPv4 socket.
    assert_eq!(a.set_option(c, Opt::V6Only(true)), Err(Errno::ENOPROTOOPT));
}

#[test]
fn udp_over_ipv6_and_dual_stack_datagrams() {
    let (mut a, mut b) = stacks(Faults::default(), 43);
    let mut clock = Clock { now: 0 };
    let u = a.socket_v6(SockType::Datagram);
    a.bind(u, v6(ANY6, 5353)).unwrap();
    let v = a.socket_v6(SockType::Datagram);
    assert_eq!(a.send_to(v, b"six", v6(LO6, 5353)), Ok(3));
    let w = a.socket(SockType::Datagram);
    assert_eq!(a.send_to(w, b"four", sa(Ipv4Addr::LOCALHOST, 5353)), Ok(4));
    clock.run(&mut a, &mut b, 2);
    let mut buf = [0u8; 16];
    let got = a.recv_from(u, &mut buf, false).unwrap();
    assert_eq!((&buf[..got.len], got.from), (&b"six"[..], v6(LO6, a.local_addr(v).unwrap().port())));
    let got = a.recv_from(u, &mut buf, false).unwrap();
    let from4 = sa(Ipv4Addr::LOCALHOST, a.local_addr(w).unwrap().port());
    assert_eq!((&buf[..got.len], got.from), (&b"four"[..], from4));
    // An IPv4 socket on the port hears no IPv6 datagram.
    let x = a.socket(SockType::Datagram);
    a.bind(x, sa(Ipv4Addr::UNSPECIFIED, 5400)).unwrap();
    a.send_to(v, b"lost", v6(LO6, 5400)).unwrap();
    clock.run(&mut a, &mut b, 2);
    assert_eq!(a.recv_from(x, &mut buf, false), Err(Errno::EAGAIN));
    // Each datagram arrives with its hop limit and traffic class: the
    // default 64, the socket's option, one datagram's own limit (and the
    // option again after it); class 0 (smoltcp sends no other).
    let hops = |a: &mut netstack::Stack<End>, buf: &mut [u8]| a.recv_from(u, buf, false).unwrap().traffic;
    a.send_to(v, b"a", v6(LO6, 5353)).unwrap();
    a.set_option(v, Opt::HopLimit(Some(7))).unwrap();
    assert_eq!(a.option(v, OptName::HopLimit), Ok(Opt::HopLimit(Some(7))));
    a.send_to(v, b"b", v6(LO6, 5353)).unwrap();
    a.send_with_hops(v, b"c", Some(v6(LO6, 5353)), 2).unwrap();
    a.send_to(v, b"d", v6(LO6, 5353)).unwrap();
    a.send_to(w, b"e", sa(Ipv4Addr::LOCALHOST, 5353)).unwrap();
    clock.run(&mut a, &mut b, 2);
    let got: Vec<_> = (0..5).map(|_| hops(&mut a, &mut buf)).collect();
    assert_eq!(got, [Some((64, 0)), Some((7, 0)), Some((2, 0)), Some((7, 0)), Some((64, 0))]);
}
