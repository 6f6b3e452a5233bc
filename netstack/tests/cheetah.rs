//! Cheetah (paper 000 §7.3) on the library stack: files served from the
//! cache with stored checksums, the request's ACK and the FIN merged into
//! the response, retransmission from the cache over a lossy wire, and
//! hostile clients.

mod common;

use common::*;
use netstack::cheetah::{CHUNK, MAX_SEGMENT};
use netstack::{Errno, Opt, SockType, Stack};
use std::net::Ipv4Addr;

const PORT: u16 = 8084;
const SIZES: [usize; 4] = [0, 1024, 10240, 102400];

fn body(size: usize) -> Vec<u8> {
    (0..size as u64).map(|i| pattern(7, i)).collect()
}

fn serve(s: &mut Stack<End>) -> netstack::SocketId {
    let l = s.socket(SockType::Stream);
    s.bind(l, sa(Ipv4Addr::UNSPECIFIED, PORT)).unwrap();
    s.listen(l, 16).unwrap();
    for size in SIZES {
        s.cheetah_publish(l, format!("/{size}").as_bytes(), &body(size)).unwrap();
    }
    l
}

fn response(status: &str, body: &[u8]) -> Vec<u8> {
    let ty = "application/octet-stream";
    let mut v = format!(
        "HTTP/1.1 {status}\r\nServer: cheetah\r\nContent-Type: {ty}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    v.extend_from_slice(body);
    v
}

/// Sends `request` from a fresh socket on `client` to `to` and reads to
/// the end (or `ms` milliseconds).
fn fetch(
    client: &mut Stack<End>,
    other: &mut Stack<End>,
    clock: &mut Clock,
    to: Ipv4Addr,
    request: &[u8],
    ms: u64,
) -> Vec<u8> {
    let c = client.socket(SockType::Stream);
    assert_eq!(client.connect(c, sa(to, PORT)), Err(Errno::EINPROGRESS));
    let end = clock.now + ms;
    let mut sent = 0;
    let mut got = Vec::new();
    let mut buf = vec![0u8; 4096];
    while clock.now < end {
        clock.step(client, other, true);
        if sent < request.len() {
            if let Ok(n) = client.send(c, &request[sent..]) {
                sent += n;
            }
        }
        match client.recv(c, &mut buf, false) {
            Ok(0) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(Errno::EAGAIN | Errno::ENOTCONN) => {}
            Err(e) => panic!("recv: {e:?}"),
        }
    }
    client.close(c).unwrap();
    clock.run(client, other, 20);
    got
}

fn get(path: &str) -> Vec<u8> {
    format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n").into_bytes()
}

#[test]
fn serves_its_files_over_loopback_from_the_cache_with_stored_checksums() {
    let (mut a, mut b) = stacks(Faults::default(), 31);
    let l = serve(&mut a);
    let mut clock = Clock { now: 0 };
    for size in SIZES {
        let before = a.cheetah_stats(l).unwrap().0;
        let got = fetch(&mut a, &mut b, &mut clock, Ipv4Addr::LOCALHOST, &get(&format!("/{size}")), 2000);
        let want = response("200 OK", &body(size));
        assert!(got == want, "/{size}: {} bytes, want {}", got.len(), want.len());
        let s = a.cheetah_stats(l).unwrap().0;
        // Loopback's MSS takes many chunks a segment (their sums added);
        // past one window's worth, the client's ACKs say how many.
        let segments = s.data_segments - before.data_segments;
        let fewest = want.len().div_ceil(MAX_SEGMENT) as u64;
        if want.len() <= MAX_SEGMENT {
            assert_eq!(segments, fewest, "{s:?}");
        } else {
            assert!((fewest..want.len().div_ceil(CHUNK) as u64).contains(&segments), "{s:?}");
        }
        // Every data segment's checksum came from the cache.
        assert_eq!(s.cached_sums - before.cached_sums, segments);
        assert_eq!(s.computed_sums, 0);
        // The request's ACK rode on the response, the FIN on its last
        // segment: the only bare ACK is the one for the client's FIN.
        assert_eq!(s.merged_fins - before.merged_fins, 1);
        assert_eq!(s.bare_acks - before.bare_acks, 1, "{s:?}");
        assert_eq!(s.retransmits, 0);
    }
    // Nothing is left behind on either side of the connections.
    assert_eq!(a.cheetah_stats(l).unwrap().1, 0);
    assert_eq!(a.connections(), 0);
    // The same through the machine's own address, and a 404.
    let got = fetch(&mut a, &mut b, &mut clock, IP_A, &get("/1024?x=1"), 2000);
    assert!(got == response("200 OK", &body(1024)));
    let got = fetch(&mut a, &mut b, &mut clock, IP_A, &get("/missing"), 2000);
    assert!(got.starts_with(b"HTTP/1.1 404 Not Found\r\n"), "{}", String::from_utf8_lossy(&got));
    let s = a.cheetah_stats(l).unwrap().0;
    assert_eq!((s.requests, s.not_found, s.bad_requests), (6, 1, 0));
}

#[test]
fn retransmits_from_the_cache_over_a_lossy_wire() {
    let faults = Faults { loss: 5, reorder: 5, truncate: 1 };
    let (mut a, mut b) = stacks(faults, 32);
    let l = serve(&mut b);
    let mut clock = Clock { now: 0 };
    for round in 0..6 {
        let size = SIZES[round % 4].max(10240);
        let got = fetch(&mut a, &mut b, &mut clock, IP_B, &get(&format!("/{size}")), 60_000);
        assert!(got == response("200 OK", &body(size)), "round {round}: {} bytes", got.len());
    }
    let s = b.cheetah_stats(l).unwrap().0;
    assert!(s.retransmits > 0, "{s:?}");
    assert_eq!(s.computed_sums, 0, "{s:?}");
    // Give-ups included (8 doubling retries), nothing stays.
    clock.run(&mut a, &mut b, 120_000);
    assert_eq!(b.cheetah_stats(l).unwrap().1, 0);
}

#[test]
fn hostile_clients_get_an_answer_or_a_reset_and_leave_nothing_behind() {
    let (mut a, mut b) = stacks(Faults::default(), 33);
    let l = serve(&mut a);
    let mut clock = Clock { now: 0 };
    let lo = Ipv4Addr::LOCALHOST;
    for garbage in [&b"\x00\x01\x02garbage\r\n\r\n"[..], b"POST /0 HTTP/1.1\r\n\r\n", b"GET /0\r\n\r\n"] {
        let got = fetch(&mut a, &mut b, &mut clock, lo, garbage, 2000);
        assert!(got.starts_with(b"HTTP/1.1 400 Bad Request\r\n"), "{}", String::from_utf8_lossy(&got));
    }
    // A request longer than the server takes.
    let long = vec![b'A'; 5000];
    let got = fetch(&mut a, &mut b, &mut clock, lo, &long, 2000);
    assert!(got.starts_with(b"HTTP/1.1 400 "));
    // A connection closed without a request gets our FIN, no answer.
    let c = a.socket(SockType::Stream);
    let _ = a.connect(c, sa(lo, PORT));
    clock.run(&mut a, &mut b, 5);
    a.shutdown(c, netstack::Shutdown::Write).unwrap();
    clock.run(&mut a, &mut b, 20);
    assert_eq!(a.recv(c, &mut [0u8; 16], false), Ok(0));
    a.close(c).unwrap();
    assert_eq!(a.cheetah_stats(l).unwrap().0.bad_requests, 4);
    // A truncated request, then the client's FIN.
    let c = a.socket(SockType::Stream);
    let _ = a.connect(c, sa(lo, PORT));
    clock.run(&mut a, &mut b, 5);
    a.send(c, b"GET /10240 HT").unwrap();
    a.shutdown(c, netstack::Shutdown::Write).unwrap();
    clock.run(&mut a, &mut b, 20);
    let mut buf = vec![0u8; 256];
    let n = a.recv(c, &mut buf, false).unwrap();
    assert!(buf[..n].starts_with(b"HTTP/1.1 400 "));
    a.close(c).unwrap();
    // Clients that go away in the middle of a 100 KiB response: one
    // closes (FIN, then its stack resets what still arrives), one resets.
    for linger0 in [false, true] {
        let c = a.socket(SockType::Stream);
        let _ = a.connect(c, sa(lo, PORT));
        clock.run(&mut a, &mut b, 5);
        a.send(c, &get("/102400")).unwrap();
        clock.run(&mut a, &mut b, 2);
        assert!(a.recv(c, &mut buf, false).unwrap() > 0);
        if linger0 {
            a.set_option(c, Opt::Linger(Some(0))).unwrap();
        }
        a.close(c).unwrap();
        clock.run(&mut a, &mut b, 100);
    }
    // Within the idle and retry limits everything is gone (the closed
    // client's stack keeps acknowledging with a zero window: probed 8
    // times, then reset), and the server still answers.
    clock.run(&mut a, &mut b, 120_000);
    assert_eq!(a.cheetah_stats(l).unwrap().1, 0, "{:?}", a.cheetah_stats(l));
    let got = fetch(&mut a, &mut b, &mut clock, lo, &get("/1024"), 2000);
    assert!(got == response("200 OK", &body(1024)));
    // A socket that is not listening cannot be Cheetah's; another
    // listener cannot take it over; closing the listener ends it.
    let other = a.socket(SockType::Stream);
    assert_eq!(a.cheetah_publish(other, b"/x", b"x"), Err(Errno::EINVAL));
    a.bind(other, sa(Ipv4Addr::UNSPECIFIED, PORT + 1)).unwrap();
    a.listen(other, 1).unwrap();
    assert_eq!(a.cheetah_publish(other, b"/x", b"x"), Err(Errno::EBUSY));
    assert_eq!(a.cheetah_publish(l, b"no-slash", b"x"), Err(Errno::EINVAL));
    assert_eq!(a.cheetah_publish(l, b"/a b", b"x"), Err(Errno::EINVAL));
    a.close(l).unwrap();
    assert_eq!(a.cheetah_stats(l), Err(Errno::EINVAL));
}

#[test]
fn an_idle_connection_is_dropped_and_a_syn_flood_is_bounded() {
    let (mut a, mut b) = stacks(Faults::default(), 34);
    let l = serve(&mut a);
    let mut clock = Clock { now: 0 };
    // Connections that never send a request.
    let idle: Vec<_> = (0..300).map(|_| a.socket(SockType::Stream)).collect();
    for &c in &idle {
        let _ = a.connect(c, sa(Ipv4Addr::LOCALHOST, PORT));
    }
    clock.run(&mut a, &mut b, 50);
    let (s, live) = a.cheetah_stats(l).unwrap();
    assert_eq!(live, netstack::cheetah::MAX_CONNS);
    assert!(s.syn_dropped > 0, "{s:?}");
    clock.run(&mut a, &mut b, netstack::cheetah::IDLE_MS as u64 + 1000);
    let (s, _) = a.cheetah_stats(l).unwrap();
    assert!(s.timed_out >= netstack::cheetah::MAX_CONNS as u64, "{s:?}");
    for c in idle {
        a.close(c).unwrap();
    }
    clock.run(&mut a, &mut b, 40_000);
    assert_eq!(a.cheetah_stats(l).unwrap().1, 0);
    let got = fetch(&mut a, &mut b, &mut clock, Ipv4Addr::LOCALHOST, &get("/0"), 2000);
    assert!(got == response("200 OK", &[]));
}
