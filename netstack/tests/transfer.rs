//! Two stacks over a simulated wire move several MiB both ways at once,
//! intact, on a clean link and on one that loses, reorders and truncates
//! frames.

mod common;

use common::*;
use netstack::{ready, Errno, Shutdown, SockType};
use std::net::Ipv4Addr;

struct Side {
    sent: u64,
    got: u64,
    eof: bool,
    shut: bool,
}

fn pump(
    stack: &mut netstack::Stack<End>,
    s: netstack::SocketId,
    side: &mut Side,
    size: u64,
    tx: u8,
    rx: u8,
) -> bool {
    let mut moved = false;
    let mut buf = [0u8; 8192];
    while side.sent < size {
        let n = (size - side.sent).min(buf.len() as u64) as usize;
        for (i, b) in buf[..n].iter_mut().enumerate() {
            *b = pattern(tx, side.sent + i as u64);
        }
        match stack.send(s, &buf[..n]) {
            Ok(k) => {
                side.sent += k as u64;
                moved = true;
            }
            Err(Errno::EAGAIN) => break,
            Err(e) => panic!("send: {e:?}"),
        }
    }
    if side.sent == size && !side.shut {
        stack.shutdown(s, Shutdown::Write).unwrap();
        side.shut = true;
    }
    loop {
        match stack.recv(s, &mut buf, false) {
            Ok(0) => {
                side.eof = true;
                break;
            }
            Ok(n) => {
                for (i, &b) in buf[..n].iter().enumerate() {
                    assert_eq!(b, pattern(rx, side.got + i as u64), "byte {} corrupted", side.got + i as u64);
                }
                side.got += n as u64;
                moved = true;
            }
            Err(Errno::EAGAIN) => break,
            Err(e) => panic!("recv: {e:?}"),
        }
    }
    moved
}

fn transfer(faults: Faults, seed: u64, size: u64) -> (u64, u64) {
    let (mut a, mut b) = stacks(faults, seed);
    let l = b.socket(SockType::Stream);
    b.bind(l, sa(Ipv4Addr::UNSPECIFIED, 80)).unwrap();
    b.listen(l, 4).unwrap();
    let ca = a.socket(SockType::Stream);
    assert_eq!(a.connect(ca, sa(IP_B, 80)), Err(Errno::EINPROGRESS));
    let mut clock = Clock { now: 0 };
    let mut cb = None;
    let (mut sa_, mut sb) = (
        Side { sent: 0, got: 0, eof: false, shut: false },
        Side { sent: 0, got: 0, eof: false, shut: false },
    );
    let mut busy = true;
    for _ in 0..3_000_000 {
        clock.step(&mut a, &mut b, busy);
        busy = false;
        if cb.is_none() {
            if let Ok((s, peer)) = b.accept(l) {
                assert_eq!(peer, a.local_addr(ca).unwrap());
                cb = Some(s);
            }
        }
        if a.readiness(ca).unwrap() & ready::POLLOUT != 0 || sa_.sent > 0 {
            busy |= pump(&mut a, ca, &mut sa_, size, 1, 2);
        }
        if let Some(s) = cb {
            busy |= pump(&mut b, s, &mut sb, size, 2, 1);
        }
        if sa_.eof && sb.eof {
            assert_eq!((sa_.got, sb.got), (size, size));
            return (clock.now, a.link().sent + b.link().sent);
        }
    }
    panic!("no progress: a sent {} got {}, b sent {} got {}", sa_.sent, sa_.got, sb.sent, sb.got);
}

#[test]
fn four_mib_each_way_on_a_clean_link() {
    let (ms, frames) = transfer(Faults::default(), 1, 4 << 20);
    println!("clean: 2 x 4 MiB in {ms} simulated ms, {frames} frames");
}

#[test]
fn four_mib_each_way_through_loss_reordering_and_truncation() {
    let faults = Faults { loss: 2, reorder: 5, truncate: 1 };
    let (ms, frames) = transfer(faults, 2, 4 << 20);
    println!("faulty: 2 x 4 MiB in {ms} simulated ms, {frames} frames");
}
