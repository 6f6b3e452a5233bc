//! Boot test: a socketpair's rings are mapped only into the processes
//! that hold its sockets (issue 25, `obj::unix`). Root makes a socketpair
//! and sends a secret through it. A process of user 1000 looks for it in
//! every page of the shared arena it maps (which it maps writable) and
//! overwrites it; it then follows root's socket (root tells it where its
//! description is: it is in the arena, where anyone could find it) to
//! whatever the socket names in the pipes' window, and maps those frames
//! by name with each capability it holds, or tries their range. Root must
//! read its bytes unchanged, and the attacker must have seen and reached
//! nothing. A child root forks still uses the pair. The same again for
//! a connection root accepts from a socket it bound by name.
#![no_std]
#![no_main]

use libos::linux::nr::{
    SYS_ACCEPT, SYS_BIND, SYS_CONNECT, SYS_FORK, SYS_LISTEN, SYS_POLL, SYS_READ, SYS_RECVMSG, SYS_SHUTDOWN,
    SYS_SOCKET, SYS_SOCKETPAIR, SYS_WRITE,
};
use libos::native::{self, linux};
#[path = "hostile/kit.rs"]
mod kit;

use kit::{all_mapped, close, exit, read1, reads, wait, write1, writes, MAPPED, SAW, WROTE};
use user::println;
use user::verdict::check;

const AF_UNIX: u64 = 1;
const SOCK_STREAM: u64 = 1;
const SECRET: &[u8; 16] = b"root-secret-4567";

/// What the attacker reports, one bit each.
const NO_SOCKET: u8 = 32;

/// The words in the `len` bytes at `at` (mapped here).
fn words(at: u64, len: u64) -> impl Iterator<Item = u64> {
    // SAFETY: the caller checked the bytes are mapped; read only.
    (at..at + len).step_by(8).map(|va| unsafe { (va as *const u64).read_unaligned() })
}

/// An attacker's start (user 1000 already, `kit::fork_attacker`): waits
/// on `down` for the address of root's socket's description.
fn told(down: i64) -> u64 {
    let mut word = [0u8; 8];
    if linux(SYS_READ, [down as u64, word.as_mut_ptr() as u64, 8, 0, 0, 0]) != 8 {
        exit(3);
    }
    u64::from_ne_bytes(word)
}

/// User 1000: waits for the address of root's socket, then attacks the
/// pair; reports what it got on `up`.
fn attacker(down: i64, up: i64) -> ! {
    let file = told(down);
    let mut found = 0;
    // The socket's description, and the object it names, in the arena.
    let span = size_of::<libos::obj::File>() as u64;
    if !all_mapped(file, span) {
        found |= NO_SOCKET;
    }
    let mut bases = [0u64; 16];
    let mut n = 0;
    if found & NO_SOCKET == 0 {
        // SAFETY: mapped (checked); the attack reads another's description.
        let sock =
            unsafe { (*(file as *const libos::obj::File)).object::<libos::obj::unix::Socket>() }.addr();
        let size = size_of::<libos::obj::unix::Socket>() as u64;
        if all_mapped(sock, size) {
            for b in kit::pipe_words(sock, size) {
                if n < bases.len() && !bases[..n].contains(&b) {
                    bases[n] = b;
                    n += 1;
                }
            }
        } else {
            found |= NO_SOCKET;
        }
    }
    for &at in &bases[..n] {
        found |= map_attack(at);
    }
    // Anywhere in the arena this process can write.
    found |= kit::scrawl_arena(SECRET);
    write1(up, found);
    write1(up, n as u8);
    read1(down);
    exit(0);
}

/// User 1000: told where root's receiving socket of a pair is, follows
/// every word of it into the arena (the queue of passed descriptors, a
/// listener's pending connections) and
/// claims every pipe named there with the word after it (the ticket);
/// reports what it reached on `up`.
fn ticket_attacker(down: i64, up: i64) -> ! {
    let file = told(down);
    let mut found = 0;
    let span = size_of::<libos::obj::File>() as u64;
    if all_mapped(file, span) {
        // SAFETY: mapped (checked); the attack reads another's description.
        let sock =
            unsafe { (*(file as *const libos::obj::File)).object::<libos::obj::unix::Socket>() }.addr();
        let size = size_of::<libos::obj::unix::Socket>() as u64;
        if all_mapped(sock, size) {
            // Every ring the socket names, with each of its words as the
            // ticket (a listener's queue ring's is there: its rule is the
            // name's, which user 1000 may not write).
            for base in kit::pipe_words(sock, size) {
                for t in words(sock, size) {
                    let _ = libos::obj::pipemem::claim(base, t, libos::obj::pipe::GUARDED_PAGES);
                }
                found |= kit::reached(SECRET, base);
            }
            for at in (sock..sock + size).step_by(8) {
                // SAFETY: mapped (checked); read only.
                let to = unsafe { (at as *const u64).read_unaligned() };
                if to % 8 != 0 {
                    continue;
                }
                // SAFETY: mapped (checked); read only.
                let w = |i: u64| unsafe { ((to + i * 8) as *const u64).read() };
                for i in (0..31).take_while(|&i| all_mapped(to + i * 8, 16)) {
                    let base = w(i);
                    if libos::obj::pipemem::guarded(base) && libos::obj::pipemem::base(base) == base {
                        let r = libos::obj::pipemem::claim(base, w(i + 1), libos::obj::pipe::GUARDED_PAGES);
                        user::println!("ticket attacker: claims {base:#x}: {r:?}");
                        found |= kit::reached(SECRET, base);
                    }
                }
            }
        } else {
            found |= NO_SOCKET;
        }
    } else {
        found |= NO_SOCKET;
    }
    write1(up, found);
    read1(down);
    exit(0);
}

/// Frames at `at` in the pipes' window: maps them by name with each
/// capability this process holds for the purpose, or through the pipe
/// frames' claim with made-up tickets; what any of it got.
fn map_attack(at: u64) -> u8 {
    kit::map_by_name(at);
    for t in 1..64u64 {
        let _ = libos::obj::pipemem::claim(at, t, libos::obj::pipe::GUARDED_PAGES);
    }
    kit::reached(SECRET, at)
}

/// A process of user 1000, forked before the socket it attacks is made
/// (it holds none): its pid and the pipes to it and from it.
fn attacker_ready(ok: &mut bool) -> (i64, i64, i64) {
    let (pid, down, up) = kit::fork_attacker(attacker);
    check(ok, "the attacker became user 1000", read1(up) == b'u');
    (pid, down, up)
}

/// Root sends its secret from `a` to `b` while the attacker `(pid, down,
/// up)` attacks `a`.
fn attacked(ok: &mut bool, (pid, down, up): (i64, i64, i64), a: i64, b: i64) {
    check(ok, "root sends its secret", writes(a, SECRET));
    let file = libos::fd::get_raw(a).map_or(0, |d| d.file.addr());
    let word = file.to_ne_bytes();
    linux(SYS_WRITE, [down as u64, word.as_ptr() as u64, 8, 0, 0, 0]);
    let found = read1(up);
    let named = read1(up);
    check(ok, "the attacker ran", found != 0xff);
    check(ok, "the attacker found root's socket", found & NO_SOCKET == 0);
    check(ok, "the attacker did not see the secret", found & SAW == 0);
    check(ok, "the attacker could not write the ring", found & WROTE == 0);
    check(ok, "the attacker could not map the socket's frames", found & MAPPED == 0);
    println!("test_unixguard: the socket names {named} places in the pipes' window");
    check(ok, "root reads its bytes unchanged", reads(b, SECRET));
    write1(down, b'd');
    check(ok, "user 1000 ended well", wait(pid) == 0);
    close(down);
    close(up);
}

/// A child inherits `a`'s peer `b` and answers through it; root sees the
/// end of file when both have closed `b`.
fn shared_with_child(ok: &mut bool, a: i64, b: i64) {
    let child = linux(SYS_FORK, [0; 6]);
    if child == 0 {
        let got = reads(b, b"ping") && writes(b, b"pong");
        exit(if got { 0 } else { 1 });
    }
    check(ok, "root sends to its child", writes(a, b"ping"));
    check(ok, "the child answered", wait(child) == 0 && reads(a, b"pong"));
    close(b);
    check(ok, "root sees the end of file", reads(a, b""));
    close(a);
}

/// A stream connection by name, not accepted yet: root's listener at
/// `path` and the connector's end, or None.
fn connection(path: &[u8]) -> Option<(i64, i64)> {
    let l = listener(path)?;
    Some((l, connect_to(path)?))
}

/// A Unix socket address for `path`: the bytes and their length.
fn address(path: &[u8]) -> ([u8; 110], u64) {
    let mut addr = [0u8; 110];
    addr[..2].copy_from_slice(&(AF_UNIX as u16).to_ne_bytes());
    addr[2..2 + path.len()].copy_from_slice(path);
    (addr, 2 + path.len() as u64 + 1)
}

/// A stream socket listening at `path`, or None.
fn listener(path: &[u8]) -> Option<i64> {
    let (addr, len) = address(path);
    let l = linux(SYS_SOCKET, [AF_UNIX, SOCK_STREAM, 0, 0, 0, 0]);
    let bound = l >= 0
        && linux(SYS_BIND, [l as u64, addr.as_ptr() as u64, len, 0, 0, 0]) == 0
        && linux(SYS_LISTEN, [l as u64, 4, 0, 0, 0, 0]) == 0;
    bound.then_some(l)
}

/// A stream socket connected to `path`, or None.
fn connect_to(path: &[u8]) -> Option<i64> {
    let (addr, len) = address(path);
    let c = linux(SYS_SOCKET, [AF_UNIX, SOCK_STREAM, 0, 0, 0, 0]);
    let done = c >= 0 && linux(SYS_CONNECT, [c as u64, addr.as_ptr() as u64, len, 0, 0, 0]) == 0;
    done.then_some(c)
}

/// A holder of root's listener spoils a pending connection's tickets in
/// the listener's queue ring: `accept` refuses the connection, whose
/// rings it cannot map (rather than hand out a socket that is not
/// there), and the connector, a child, sees POLLERR, ECONNRESET, then
/// end of file.
fn refused(ok: &mut bool) {
    let path = b"/tmp/unixguard4.sock";
    let Some(l) = listener(path) else {
        check(ok, "root listens", false);
        return;
    };
    let (down, up) = (kit::pipe(), kit::pipe());
    let pid = linux(SYS_FORK, [0; 6]);
    if pid == 0 {
        let c = connect_to(path).unwrap_or(-1);
        write1(up[1], b'c');
        read1(down[0]);
        let told = poll_out(c) & POLLERR != 0;
        let mut b = [0u8; 1];
        let first = linux(SYS_READ, [c as u64, b.as_mut_ptr() as u64, 1, 0, 0, 0]);
        let then = linux(SYS_READ, [c as u64, b.as_mut_ptr() as u64, 1, 0, 0, 0]);
        println!("test_unixguard: the refused connector polls {told}, reads {first}, then {then}");
        exit(if c >= 0 && told && first == -104 && then == 0 { 0 } else { 1 });
    }
    check(ok, "a child connects", read1(up[0]) == b'c');
    let mut spoiled = 0;
    let file = libos::fd::get_raw(l).map_or(0, |d| d.file.addr());
    // SAFETY: root's own listener; the ring's frames are mapped here.
    let sock = unsafe { (*(file as *const libos::obj::File)).object::<libos::obj::unix::Socket>() }.addr();
    let ring = kit::pipe_words(sock, size_of::<libos::obj::unix::Socket>() as u64).next().unwrap_or(0);
    for at in (ring..ring + 4096).step_by(8).filter(|_| ring != 0) {
        // SAFETY: the first page of root's queue ring, mapped here.
        let w = unsafe { (at as *const u64).read() };
        if w != ring && libos::obj::pipemem::guarded(w) && libos::obj::pipemem::base(w) == w {
            // SAFETY: as above; the word after a ring's base is its ticket.
            unsafe { *((at + 8) as *mut u64) ^= 1 };
            spoiled += 1;
        }
    }
    check(ok, "root spoils the tickets in its queue ring", spoiled == 2);
    // F_SETFL O_NONBLOCK: the accept does not wait for another.
    linux(libos::linux::nr::SYS_FCNTL, [l as u64, 4, 0o4000, 0, 0, 0]);
    let got = linux(SYS_ACCEPT, [l as u64, 0, 0, 0, 0, 0]);
    check(ok, "accept refuses the connection (EAGAIN)", got == -11);
    write1(down[1], b'g');
    check(ok, "the connector sees POLLERR, ECONNRESET, then end of file", wait(pid) == 0);
    for fd in [l, down[0], down[1], up[0], up[1]] {
        close(fd);
    }
}

/// `sendmsg` of one byte on `sock` with descriptor `fd` (`SCM_RIGHTS`).
fn send_fd(sock: i64, fd: i64) -> i64 {
    let byte = [b'x'];
    let iov = [byte.as_ptr() as u64, 1];
    // cmsghdr: length 20, SOL_SOCKET, SCM_RIGHTS, then the descriptor.
    let mut control = [0u8; 24];
    control[..8].copy_from_slice(&20u64.to_ne_bytes());
    control[8..12].copy_from_slice(&1i32.to_ne_bytes());
    control[12..16].copy_from_slice(&1i32.to_ne_bytes());
    control[16..20].copy_from_slice(&(fd as i32).to_ne_bytes());
    let msg = [0u64, 0, iov.as_ptr() as u64, 1, control.as_ptr() as u64, 24, 0];
    linux(libos::linux::nr::SYS_SENDMSG, [sock as u64, msg.as_ptr() as u64, 0, 0, 0, 0])
}

/// The ticket attacker `(pid, down, up)` is told where root's socket `fd`
/// is and follows it; it must reach nothing.
fn tickets_attacked(ok: &mut bool, (pid, down, up): (i64, i64, i64), fd: i64) {
    let file = libos::fd::get_raw(fd).map_or(0, |d| d.file.addr());
    let word = file.to_ne_bytes();
    linux(SYS_WRITE, [down as u64, word.as_ptr() as u64, 8, 0, 0, 0]);
    let found = read1(up);
    check(ok, "the attacker found root's socket", found & NO_SOCKET == 0);
    check(ok, "the attacker did not see the secret", found & SAW == 0);
    check(ok, "the attacker could not map the rings in flight", found & MAPPED == 0);
    write1(down, b'd');
    check(ok, "user 1000 ended well", wait(pid) == 0);
    close(down);
    close(up);
}

/// A receiving ring parks as many tickets as it has room for: the next
/// send is refused (ETOOMANYREFS) until the receiver takes a batch; a
/// receiver that shuts its read side drops the ends in flight (the pipe's
/// writer sees no reader left).
fn parked(ok: &mut bool) {
    let mut sv = [0i32; 2];
    let made = linux(SYS_SOCKETPAIR, [AF_UNIX, SOCK_STREAM, 0, sv.as_mut_ptr() as u64, 0, 0]) == 0;
    let p = kit::pipe();
    check(ok, "root makes a pair and a pipe", made && p[0] >= 0);
    let (a, b) = (sv[0] as i64, sv[1] as i64);
    let mut sent = 0;
    while sent <= libos::obj::pipe::PARKED && send_fd(a, p[0]) == 1 {
        sent += 1;
    }
    check(ok, "the ring parks the tickets it has room for", sent == libos::obj::pipe::PARKED);
    check(ok, "one more is ETOOMANYREFS", send_fd(a, p[0]) == -109);
    let got = recv_fd(b);
    check(ok, "the receiver takes a batch", got >= 0);
    check(ok, "then one more goes", send_fd(a, p[0]) == 1);
    close(got);
    close(p[0]);
    check(ok, "the pipe still has readers in flight", poll_out(p[1]) & POLLERR == 0);
    check(ok, "the receiver shuts its read side", linux(SYS_SHUTDOWN, [b as u64, 0, 0, 0, 0, 0]) == 0);
    check(ok, "the ends in flight are dropped with it", poll_out(p[1]) & POLLERR != 0);
    close(p[1]);
    close(a);
    close(b);
}

const POLLERR: i16 = 8;

/// The events `poll` finds at once on `fd` asked for writing.
fn poll_out(fd: i64) -> i16 {
    // struct pollfd: the descriptor, the events (POLLOUT), the answer.
    let mut pfd = [0u8; 8];
    pfd[..4].copy_from_slice(&(fd as i32).to_ne_bytes());
    pfd[4..6].copy_from_slice(&4i16.to_ne_bytes());
    linux(SYS_POLL, [pfd.as_mut_ptr() as u64, 1, 0, 0, 0, 0]);
    i16::from_ne_bytes([pfd[6], pfd[7]])
}

/// `recvmsg` of one byte on `sock`: the descriptor it carried, or -1.
fn recv_fd(sock: i64) -> i64 {
    let mut byte = [0u8];
    let iov = [byte.as_mut_ptr() as u64, 1];
    let mut control = [0u8; 24];
    let msg = [0u64, 0, iov.as_ptr() as u64, 1, control.as_mut_ptr() as u64, 24, 0];
    if linux(SYS_RECVMSG, [sock as u64, msg.as_ptr() as u64, 0, 0, 0, 0]) != 1 {
        return -1;
    }
    i32::from_ne_bytes([control[16], control[17], control[18], control[19]]) as i64
}

fn main(_: u64) -> i32 {
    if let Err(e) = native::init(libos::linux::syscall) {
        println!("test_unixguard: {e}");
        return 1;
    }
    let mut ok = true;
    println!("test_unixguard: a socketpair");
    let them = attacker_ready(&mut ok);
    let mut sv = [0i32; 2];
    let made = linux(SYS_SOCKETPAIR, [AF_UNIX, SOCK_STREAM, 0, sv.as_mut_ptr() as u64, 0, 0]) == 0;
    check(&mut ok, "root makes a socketpair", made);
    let (a, b) = (sv[0] as i64, sv[1] as i64);
    attacked(&mut ok, them, a, b);
    shared_with_child(&mut ok, a, b);

    println!("test_unixguard: an accepted connection");
    let them = attacker_ready(&mut ok);
    let conn = connection(b"/tmp/unixguard.sock").and_then(|(l, c)| {
        Some((l, c, Some(linux(SYS_ACCEPT, [l as u64, 0, 0, 0, 0, 0])).filter(|&s| s >= 0)?))
    });
    check(&mut ok, "root connects to its own listener and accepts", conn.is_some());
    if let Some((l, c, s)) = conn {
        attacked(&mut ok, them, s, c);
        shared_with_child(&mut ok, s, c);
        close(l);
    }
    // A pipe end in flight over a pair: its ticket is not where a process
    // that holds neither socket reads it.
    println!("test_unixguard: a ticket in flight");
    let them = kit::fork_attacker(ticket_attacker);
    check(&mut ok, "the attacker became user 1000", read1(them.2) == b'u');
    let mut sv = [0i32; 2];
    let made = linux(SYS_SOCKETPAIR, [AF_UNIX, SOCK_STREAM, 0, sv.as_mut_ptr() as u64, 0, 0]) == 0;
    let p = kit::pipe();
    check(&mut ok, "root makes a pair and a pipe", made && p[0] >= 0);
    let (a, b) = (sv[0] as i64, sv[1] as i64);
    check(&mut ok, "root writes its secret in the pipe", writes(p[1], SECRET));
    check(&mut ok, "root passes the pipe's reading end", send_fd(a, p[0]) == 1);
    close(p[0]);
    tickets_attacked(&mut ok, them, b);
    let got = recv_fd(b);
    check(&mut ok, "root receives the end and its secret", got >= 0 && reads(got, SECRET));
    close(got);
    close(p[1]);
    close(a);
    close(b);

    // A connection pending at root's listener: the tickets of its rings
    // are not where a process that does not hold the listener reads them.
    println!("test_unixguard: a connection pending");
    let them = kit::fork_attacker(ticket_attacker);
    check(&mut ok, "the attacker became user 1000", read1(them.2) == b'u');
    // A name user 1000 may not write (so may not connect to).
    linux(libos::linux::nr::SYS_UMASK, [0o022, 0, 0, 0, 0, 0]);
    let pending = connection(b"/tmp/unixguard3.sock");
    check(&mut ok, "root connects and does not accept yet", pending.is_some());
    if let Some((l, c)) = pending {
        check(&mut ok, "root sends its secret before the accept", writes(c, SECRET));
        tickets_attacked(&mut ok, them, l);
        let s = linux(SYS_ACCEPT, [l as u64, 0, 0, 0, 0, 0]);
        check(&mut ok, "root accepts and reads its secret", s >= 0 && reads(s, SECRET));
        close(s);
        close(c);
        close(l);
    }

    println!("test_unixguard: tickets parked in the ring");
    parked(&mut ok);
    println!("test_unixguard: a connection accept cannot map");
    refused(&mut ok);

    // A listener closed with a connection pending drops its ends: the
    // connector sees the end of file.
    let pending = connection(b"/tmp/unixguard2.sock");
    check(&mut ok, "root connects and does not accept", pending.is_some());
    if let Some((l, c)) = pending {
        close(l);
        check(&mut ok, "the listener's close ends the pending connection", reads(c, b""));
        close(c);
    }
    if ok {
        println!("unix guard test passed");
        0
    } else {
        println!("unix guard test FAILED");
        1
    }
}

user::entry!(main);
