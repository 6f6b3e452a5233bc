//! Socket semantics: the listen backlog, loopback, UDP, errors as Linux
//! gives them, Nagle, and addressing.

mod common;

use common::*;
use netstack::{
    ready, Addressing, Errno, Opt, OptName, Shutdown, SockType, SocketId, Source, Stack, StaticIp,
};
use std::net::Ipv4Addr;

const ANY: Ipv4Addr = Ipv4Addr::UNSPECIFIED;

#[test]
fn a_backlog_holds_several_pending_connects_and_the_rest_retry() {
    let (mut a, mut b) = stacks(Faults::default(), 11);
    let l = b.socket(SockType::Stream);
    b.bind(l, sa(ANY, 8080)).unwrap();
    b.listen(l, 3).unwrap();
    let clients: Vec<_> = (0..6).map(|_| a.socket(SockType::Stream)).collect();
    for &c in &clients {
        assert_eq!(a.connect(c, sa(IP_B, 8080)), Err(Errno::EINPROGRESS));
        assert_eq!(a.connect(c, sa(IP_B, 8080)), Err(Errno::EALREADY));
    }
    let mut clock = Clock { now: 0 };
    clock.run(&mut a, &mut b, 50);
    // Three handshakes fit; three SYNs were dropped (not refused).
    assert!(b.stats().syn_dropped >= 3, "{:?}", b.stats());
    assert_eq!(b.readiness(l).unwrap() & ready::POLLIN, ready::POLLIN);
    let mut accepted = Vec::new();
    while let Ok((s, peer)) = b.accept(l) {
        accepted.push((s, peer));
    }
    assert_eq!(accepted.len(), 3);
    assert_eq!(b.accept(l), Err(Errno::EAGAIN));
    // The others retransmit their SYNs and get in.
    for _ in 0..20 {
        clock.run(&mut a, &mut b, 1000);
        while let Ok(x) = b.accept(l) {
            accepted.push(x);
        }
    }
    assert_eq!(accepted.len(), 6);
    let mut peers: Vec<_> = accepted.iter().map(|&(_, p)| p).collect();
    peers.sort();
    peers.dedup();
    assert_eq!(peers.len(), 6);
    // Each connection is its own: data sent on one arrives on its peer.
    for (i, &c) in clients.iter().enumerate() {
        assert_eq!(a.connect(c, sa(IP_B, 8080)), Ok(()), "client {i}");
        assert_eq!(a.connect(c, sa(IP_B, 8080)), Err(Errno::EISCONN));
        a.send(c, &[i as u8; 5]).unwrap();
    }
    clock.run(&mut a, &mut b, 100);
    for &(s, peer) in &accepted {
        let i = clients.iter().position(|&c| a.local_addr(c).unwrap() == peer).unwrap();
        let mut buf = [0u8; 16];
        assert_eq!(b.recv(s, &mut buf, false), Ok(5));
        assert_eq!(&buf[..5], &[i as u8; 5]);
    }
}

#[test]
fn loopback_inside_one_stack() {
    let (mut a, mut b) = stacks(Faults::default(), 12);
    let l = a.socket(SockType::Stream);
    a.bind(l, sa(ANY, 7)).unwrap();
    a.listen(l, 8).unwrap();
    let mut clock = Clock { now: 0 };
    for target in [Ipv4Addr::LOCALHOST, IP_A] {
        let c = a.socket(SockType::Stream);
        assert_eq!(a.connect(c, sa(target, 7)), Err(Errno::EINPROGRESS));
        clock.run(&mut a, &mut b, 5);
        let (s, peer) = a.accept(l).expect("loopback connection accepted");
        assert_eq!(peer, a.local_addr(c).unwrap());
        assert_eq!(peer.ip(), target);
        assert_eq!(a.connect(c, sa(target, 7)), Ok(()));
        assert_eq!(a.peer_addr(c), Ok(sa(target, 7)));
        a.send(c, b"ping").unwrap();
        clock.run(&mut a, &mut b, 5);
        let mut buf = [0u8; 8];
        assert_eq!(a.recv(s, &mut buf, false), Ok(4));
        assert_eq!(&buf[..4], b"ping");
        a.close(c).unwrap();
        clock.run(&mut a, &mut b, 5);
        assert_eq!(a.recv(s, &mut buf, false), Ok(0), "end of file");
    }
    assert_eq!(a.link().sent, 0, "nothing went on the wire");
    // UDP over loopback.
    let u = a.socket(SockType::Datagram);
    a.bind(u, sa(ANY, 5353)).unwrap();
    let v = a.socket(SockType::Datagram);
    assert_eq!(a.send_to(v, b"hello", sa(Ipv4Addr::LOCALHOST, 5353)), Ok(5));
    clock.run(&mut a, &mut b, 2);
    let mut buf = [0u8; 16];
    let got = a.recv_from(u, &mut buf, false).unwrap();
    assert_eq!(
        (&buf[..got.len], got.full, got.from),
        (&b"hello"[..], 5, a.local_addr(v).map(|x| sa(Ipv4Addr::LOCALHOST, x.port())).unwrap())
    );
    // A datagram longer than the buffer: the part that fits, and its whole
    // length for MSG_TRUNC; a peek leaves it whole, a receive drops the rest.
    assert_eq!(a.send_to(v, b"truncated", sa(Ipv4Addr::LOCALHOST, 5353)), Ok(9));
    clock.run(&mut a, &mut b, 2);
    let mut small = [0u8; 4];
    assert_eq!(a.recv_from(u, &mut small, true).map(|r| (r.len, r.full)), Ok((4, 9)));
    assert_eq!(a.recv_from(u, &mut small, false).map(|r| (r.len, r.full)), Ok((4, 9)));
    assert_eq!(&small, b"trun");
    assert_eq!(a.recv_from(u, &mut buf, false), Err(Errno::EAGAIN), "the rest went with it");
}

#[test]
fn udp_between_stacks_with_connected_filtering() {
    let (mut a, mut b) = stacks(Faults::default(), 13);
    let mut clock = Clock { now: 0 };
    let srv = b.socket(SockType::Datagram);
    b.bind(srv, sa(ANY, 9999)).unwrap();
    let cli = a.socket(SockType::Datagram);
    assert_eq!(a.send(cli, b"x"), Err(Errno::EDESTADDRREQ));
    a.connect(cli, sa(IP_B, 9999)).unwrap();
    assert_eq!(a.send(cli, b"request"), Ok(7));
    clock.run(&mut a, &mut b, 20);
    let mut buf = [0u8; 64];
    let got = b.recv_from(srv, &mut buf, false).unwrap();
    let (n, from) = (got.len, got.from);
    assert_eq!(&buf[..n], b"request");
    assert_eq!(b.send_to(srv, b"reply", from), Ok(5));
    // A stranger's datagram to the connected socket is dropped.
    let other = b.socket(SockType::Datagram);
    b.send_to(other, b"spam", from).unwrap();
    clock.run(&mut a, &mut b, 20);
    assert_eq!(a.recv(cli, &mut buf, true), Ok(5), "peek");
    assert_eq!(a.recv(cli, &mut buf, false), Ok(5));
    assert_eq!(&buf[..5], b"reply");
    assert_eq!(a.recv(cli, &mut buf, false), Err(Errno::EAGAIN));
    assert_eq!(a.send_to(cli, &vec![0u8; 1 << 20], sa(IP_B, 9999)), Err(Errno::EMSGSIZE));
}

#[test]
fn errors_are_linuxs() {
    let (mut a, mut b) = stacks(Faults::default(), 14);
    let mut clock = Clock { now: 0 };
    // Refused: no listener.
    let c = a.socket(SockType::Stream);
    assert_eq!(a.connect(c, sa(IP_B, 1)), Err(Errno::EINPROGRESS));
    clock.run(&mut a, &mut b, 20);
    assert_eq!(a.readiness(c).unwrap() & ready::POLLERR, ready::POLLERR);
    assert_eq!(a.take_error(c), Ok(Some(Errno::ECONNREFUSED)));
    assert_eq!(a.take_error(c), Ok(None));
    // Unconnected stream.
    let d = a.socket(SockType::Stream);
    assert_eq!(a.send(d, b"x"), Err(Errno::ENOTCONN));
    assert_eq!(a.recv(d, &mut [0; 4], false), Err(Errno::ENOTCONN));
    assert_eq!(a.peer_addr(d), Err(Errno::ENOTCONN));
    assert_eq!(a.accept(d), Err(Errno::EINVAL));
    assert_eq!(a.shutdown(d, Shutdown::Both), Err(Errno::ENOTCONN));
    // Addresses.
    assert_eq!(a.bind(d, sa(Ipv4Addr::new(10, 9, 9, 9), 80)), Err(Errno::EADDRNOTAVAIL));
    a.bind(d, sa(ANY, 80)).unwrap();
    assert_eq!(a.bind(d, sa(ANY, 81)), Err(Errno::EINVAL));
    let e = a.socket(SockType::Stream);
    assert_eq!(a.bind(e, sa(IP_A, 80)), Err(Errno::EADDRINUSE));
    a.listen(d, 1).unwrap();
    a.set_option(e, Opt::ReuseAddr(true)).unwrap();
    assert_eq!(a.bind(e, sa(IP_A, 80)), Err(Errno::EADDRINUSE), "REUSEADDR does not share a listening port");
    let f = a.socket(SockType::Stream);
    a.set_option(f, Opt::ReusePort(true)).unwrap();
    let g = a.socket(SockType::Stream);
    a.set_option(g, Opt::ReusePort(true)).unwrap();
    a.bind(f, sa(ANY, 90)).unwrap();
    a.bind(g, sa(ANY, 90)).unwrap();
    // Datagram sockets do not listen.
    let u = a.socket(SockType::Datagram);
    assert_eq!(a.listen(u, 1), Err(Errno::EOPNOTSUPP));
    // Closed sockets are gone.
    a.close(d).unwrap();
    assert_eq!(a.close(d), Err(Errno::EBADF));
    assert_eq!(a.readiness(d), Err(Errno::EBADF));
}

#[test]
fn end_of_file_reset_and_epipe() {
    let (mut a, mut b) = stacks(Faults::default(), 15);
    let mut clock = Clock { now: 0 };
    let l = b.socket(SockType::Stream);
    b.bind(l, sa(ANY, 80)).unwrap();
    b.listen(l, 4).unwrap();
    let connect = |a: &mut Stack<End>, b: &mut Stack<End>, clock: &mut Clock| {
        let c = a.socket(SockType::Stream);
        let _ = a.connect(c, sa(IP_B, 80));
        clock.run(a, b, 20);
        (c, b.accept(l).unwrap().0)
    };
    // Orderly: the peer shuts down writing; we read 0, can still send.
    let (c, s) = connect(&mut a, &mut b, &mut clock);
    b.shutdown(s, Shutdown::Write).unwrap();
    assert_eq!(b.send(s, b"x"), Err(Errno::EPIPE));
    clock.run(&mut a, &mut b, 20);
    assert_eq!(
        a.readiness(c).unwrap() & (ready::POLLIN | ready::POLLRDHUP),
        ready::POLLIN | ready::POLLRDHUP
    );
    assert_eq!(a.recv(c, &mut [0; 4], false), Ok(0));
    assert_eq!(a.send(c, b"late"), Ok(4));
    clock.run(&mut a, &mut b, 20);
    assert_eq!(b.recv(s, &mut [0; 8], false), Ok(4));
    // Abortive: SO_LINGER 0 resets.
    let (c, s) = connect(&mut a, &mut b, &mut clock);
    b.set_option(s, Opt::Linger(Some(0))).unwrap();
    b.close(s).unwrap();
    clock.run(&mut a, &mut b, 20);
    assert_eq!(a.recv(c, &mut [0; 4], false), Err(Errno::ECONNRESET));
    assert_ne!(a.readiness(c).unwrap() & ready::POLLERR, 0);
    assert_eq!(a.send(c, b"x"), Err(Errno::ECONNRESET));
    // Everything closed goes away once its shutdown completes.
    a.close(c).unwrap();
    clock.run(&mut a, &mut b, 130_000);
    assert_eq!(a.connections(), 1, "only the first client, never closed, is left");
}

#[test]
fn nagle_holds_small_segments_until_no_delay() {
    for no_delay in [false, true] {
        let (mut a, _b, clock, c, _) = connected(16);
        a.set_option(c, Opt::NoDelay(no_delay)).unwrap();
        assert_eq!(a.option(c, OptName::NoDelay), Ok(Opt::NoDelay(no_delay)));
        // Two small writes with the peer silent in between.
        let before = a.link().sent;
        a.send(c, b"ab").unwrap();
        a.poll(clock.now);
        a.send(c, b"cd").unwrap();
        a.poll(clock.now);
        let segments = a.link().sent - before;
        assert_eq!(segments, if no_delay { 2 } else { 1 }, "no_delay {no_delay}");
    }
}

/// A connection from A to B's port 80: A's socket and B's accepted one.
fn connected(seed: u64) -> (Stack<End>, Stack<End>, Clock, SocketId, SocketId) {
    let (mut a, mut b) = stacks(Faults::default(), seed);
    let mut clock = Clock { now: 0 };
    let l = b.socket(SockType::Stream);
    b.bind(l, sa(ANY, 80)).unwrap();
    b.listen(l, 1).unwrap();
    let c = a.socket(SockType::Stream);
    let _ = a.connect(c, sa(IP_B, 80));
    clock.run(&mut a, &mut b, 20);
    let (s, _) = b.accept(l).unwrap();
    (a, b, clock, c, s)
}

/// A request-response exchange over a new connection never waits for a
/// delayed ACK: an HTTP server's header then body (Nagle on, as nginx
/// leaves it without keep-alive) both arrive at once. Linux's quick-ACK
/// mode at a connection's start; after `QUICK_ACKS` data segments the
/// receiver delays its ACKs again (and Nagle then holds the sender's next
/// small segment until the delayed ACK comes).
#[test]
fn a_new_connection_acks_at_once_then_delays() {
    let (mut a, mut b, mut clock, c, s) = connected(19);
    // Polls both stacks at one instant until nothing moves.
    let settle = |a: &mut Stack<End>, b: &mut Stack<End>, now: u64| {
        for _ in 0..8 {
            b.poll(now);
            a.poll(now);
        }
    };
    let mut buf = [0u8; 4096];
    b.send(s, &[b'H'; 100]).unwrap();
    settle(&mut a, &mut b, clock.now);
    b.send(s, &[b'B'; 1000]).unwrap();
    settle(&mut a, &mut b, clock.now);
    assert_eq!(a.recv(c, &mut buf, false), Ok(1100), "the body waited for a delayed ACK");
    // One byte at a time: each goes out only once the last is ACKed.
    let quick = netstack::opts::QUICK_ACKS as usize - 2; // header and body counted
    let mut got = 0;
    for i in 0..quick + 4 {
        b.send(s, &[i as u8]).unwrap();
        settle(&mut a, &mut b, clock.now);
        got += a.recv(c, &mut buf, false).unwrap_or(0);
    }
    assert_eq!(got, quick + 1, "ACKs after the quick ones are delayed");
    clock.run(&mut a, &mut b, 2 * netstack::opts::ACK_DELAY_MS);
    assert_eq!(a.recv(c, &mut buf, false), Ok(3), "the delayed ACK released the rest");
}

/// An answer that ends with the peer's FIN is not ACKed on its own in the
/// quick-ACK start: the peer has nothing more to send, and the ACK rides
/// on this side's own FIN (one segment, as a Cheetah-style answer hopes).
#[test]
fn a_fin_is_acked_with_the_answer_not_alone() {
    let (mut a, mut b, clock, c, s) = connected(20);
    b.send(s, b"answer").unwrap();
    b.shutdown(s, Shutdown::Write).unwrap();
    b.poll(clock.now);
    let before = a.link().sent;
    a.poll(clock.now);
    let mut buf = [0u8; 16];
    assert_eq!(a.recv(c, &mut buf, false), Ok(6));
    assert_eq!(a.link().sent, before, "a lone ACK for the FIN");
    a.shutdown(c, Shutdown::Write).unwrap();
    a.poll(clock.now);
    assert_eq!(a.link().sent, before + 1, "the FIN carries the ACK");
}

#[test]
fn options_round_trip_and_buffers_take_effect() {
    let (mut a, _) = stacks(Faults::default(), 17);
    let s = a.socket(SockType::Stream);
    for opt in [
        Opt::ReuseAddr(true),
        Opt::ReusePort(true),
        Opt::KeepAlive(true),
        Opt::Linger(Some(5)),
        Opt::QuickAck(true),
        Opt::RcvTimeo(Some(1500)),
        Opt::SndTimeo(None),
        Opt::RcvBuf(1 << 20),
    ] {
        a.set_option(s, opt).unwrap();
    }
    assert_eq!(a.option(s, OptName::Linger), Ok(Opt::Linger(Some(5))));
    assert_eq!(a.option(s, OptName::RcvTimeo), Ok(Opt::RcvTimeo(Some(1500))));
    assert_eq!(a.option(s, OptName::RcvBuf), Ok(Opt::RcvBuf(1 << 20)));
    a.set_option(s, Opt::SndBuf(1)).unwrap();
    assert_eq!(a.option(s, OptName::SndBuf), Ok(Opt::SndBuf(netstack::opts::MIN_BUF)));
    assert_eq!(a.set_option(netstack::SocketId::from_raw(999), Opt::NoDelay(true)), Err(Errno::EBADF));
}

#[test]
fn dhcp_falls_back_to_qemus_static_address() {
    let (ea, _eb) = pair(Faults::default(), 18);
    let mut a =
        Stack::new(ea, MAC_A, 18, Addressing::Dhcp { fallback_ms: 3000, fallback: StaticIp::qemu() }, 0);
    a.poll(0);
    assert!(a.info().is_none());
    assert!(a.link().sent >= 1, "a DHCP discover went out");
    let c = a.socket(SockType::Stream);
    assert_eq!(a.connect(c, sa(Ipv4Addr::new(10, 0, 2, 2), 80)), Err(Errno::ENETUNREACH));
    let mut now = 0;
    while now < 3000 {
        now = a.poll_at().unwrap().max(now + 1);
        a.poll(now);
    }
    let info = a.info().unwrap();
    assert_eq!(info.source, Source::Fallback);
    assert_eq!(info.ip, StaticIp::qemu());
    assert_eq!(a.connect(c, sa(Ipv4Addr::new(10, 0, 2, 2), 80)), Err(Errno::EINPROGRESS));
}

/// The server closes first (HTTP with `Connection: close`), so each of its
/// connections ends in TIME_WAIT, which holds the socket and its buffers
/// for smoltcp's TIME_WAIT period. Over loopback there is no wire to
/// protect against, so the closed side lets go at once: a thousand
/// requests in a fraction of a second leave no connections behind (nginx
/// under lxrt ran out of memory after about 450 of them in
/// `cargo xtask bench http_0 ...`).
#[test]
fn loopback_connections_closed_by_the_server_do_not_pile_up() {
    let (mut a, mut b) = stacks(Faults::default(), 13);
    let l = a.socket(SockType::Stream);
    a.bind(l, sa(ANY, 80)).unwrap();
    a.listen(l, 8).unwrap();
    let mut clock = Clock { now: 0 };
    let mut buf = [0u8; 16];
    for i in 0..1000 {
        let c = a.socket(SockType::Stream);
        assert_eq!(a.connect(c, sa(Ipv4Addr::LOCALHOST, 80)), Err(Errno::EINPROGRESS));
        clock.run(&mut a, &mut b, 1);
        let (s, _) = a.accept(l).expect("accepted");
        a.send(c, b"GET").unwrap();
        clock.run(&mut a, &mut b, 1);
        assert_eq!(a.recv(s, &mut buf, false), Ok(3), "request {i}");
        a.send(s, b"200").unwrap();
        a.close(s).unwrap();
        clock.run(&mut a, &mut b, 1);
        assert_eq!(a.recv(c, &mut buf, false), Ok(3));
        assert_eq!(a.recv(c, &mut buf, false), Ok(0), "end of file");
        a.close(c).unwrap();
        clock.run(&mut a, &mut b, 1);
    }
    assert!(a.connections() < 10, "{} connections left after 1,000 closed", a.connections());
}

#[test]
fn loopback_sockets_need_no_packet_filter() {
    let (mut a, mut b) = stacks(Faults::default(), 14);
    let l = a.socket(SockType::Stream);
    a.bind(l, sa(ANY, 7)).unwrap();
    a.listen(l, 8).unwrap();
    let only_listener = vec![(true, 7)];
    assert_eq!(a.ports(), only_listener);
    let mut clock = Clock { now: 0 };
    for target in [Ipv4Addr::LOCALHOST, IP_A] {
        let c = a.socket(SockType::Stream);
        assert_eq!(a.connect(c, sa(target, 7)), Err(Errno::EINPROGRESS));
        clock.run(&mut a, &mut b, 5);
        assert_eq!(a.connect(c, sa(target, 7)), Ok(()));
        // The client's port and the accepted connection are loopback's.
        let (s, _) = a.accept(l).unwrap();
        assert_eq!(a.ports(), only_listener, "to {target}");
        a.close(s).unwrap();
        a.close(c).unwrap();
    }
    let lo = a.socket(SockType::Datagram);
    a.bind(lo, sa(Ipv4Addr::LOCALHOST, 99)).unwrap();
    assert_eq!(a.ports(), only_listener);
    // A connection over the wire still gets its port claimed.
    let c = a.socket(SockType::Stream);
    assert_eq!(a.connect(c, sa(IP_B, 80)), Err(Errno::EINPROGRESS));
    let port = a.local_addr(c).unwrap().port();
    assert!(a.ports().contains(&(true, port)), "{:?}", a.ports());
}
