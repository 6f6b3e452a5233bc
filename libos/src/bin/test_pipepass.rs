//! Boot test: an end of a pipe with frames of its own (issue 25,
//! `obj::pipemem`) passed over a Unix socket with `SCM_RIGHTS`, as beam
//! hands each port's pipes to erl_child_setup, to every process Linux
//! lets receive it: the message carries the pipe's range ticket
//! (`FRAME_RANGE`) and the receiver maps the frames itself. A child of the
//! same user gets the write end, writes through it and exits: the parent
//! reads its bytes, then end of file (the reference the message carried
//! was handed on and dropped right). A child that became user 1000 gets
//! an end too and uses it, but cannot map another pipe of the parent's,
//! whose place, frame and ticket it is told, by name, nor claim it with
//! that ticket (the range's rule: root's, 0600) or a forged one, nor hold
//! it (it maps none of its frames).
//! A child passing an end of its own pipe to its parent (not its to map
//! into; received after the child ended, so only the message held the
//! frames) and a child that came to hold the socket after the send (given
//! nothing at the send) get theirs as well.
#![no_std]
#![no_main]

use abi::syscall::{map as mf, CRED_SELF, ENV_SELF};
use libos::linux::nr::{
    SYS_CLOSE, SYS_EXIT_GROUP, SYS_FORK, SYS_PIPE2, SYS_READ, SYS_RECVMSG, SYS_SENDMSG, SYS_SETGID,
    SYS_SETUID, SYS_SOCKETPAIR, SYS_WAIT4, SYS_WRITE,
};
use libos::native::{self, linux};
use user::verdict::check;
use user::{println, sys};

const EAGAIN: i64 = -11;
const O_NONBLOCK: u64 = 0o4000;

fn close(fd: i64) {
    linux(SYS_CLOSE, [fd as u64, 0, 0, 0, 0, 0]);
}

fn exit(code: u64) -> ! {
    linux(SYS_EXIT_GROUP, [code, 0, 0, 0, 0, 0]);
    sys::exit(code as i32);
}

fn pipe(flags: u64) -> [i64; 2] {
    let mut p = [0i32; 2];
    let r = linux(SYS_PIPE2, [p.as_mut_ptr() as u64, flags, 0, 0, 0, 0]);
    if r != 0 {
        println!("test_pipepass: pipe2: {r}");
        sys::exit(1);
    }
    [p[0] as i64, p[1] as i64]
}

fn socketpair() -> [i64; 2] {
    let mut s = [0i32; 2];
    // AF_UNIX, SOCK_STREAM.
    let r = linux(SYS_SOCKETPAIR, [1, 1, 0, s.as_mut_ptr() as u64, 0, 0]);
    if r != 0 {
        println!("test_pipepass: socketpair: {r}");
        sys::exit(1);
    }
    [s[0] as i64, s[1] as i64]
}

/// `sendmsg` of `data` on `sock`, with descriptor `fd` (if not -1).
fn send(sock: i64, data: &[u8], fd: i64) -> i64 {
    // On the stack: lxrt's checks know this program's stack, not its
    // read-only data.
    let mut copy = [0u8; 24];
    copy[..data.len()].copy_from_slice(data);
    let iov = [copy.as_ptr() as u64, data.len() as u64];
    // cmsghdr: length 20, SOL_SOCKET, SCM_RIGHTS, then the descriptor.
    let mut control = [0u8; 24];
    control[..8].copy_from_slice(&20u64.to_ne_bytes());
    control[8..12].copy_from_slice(&1i32.to_ne_bytes());
    control[12..16].copy_from_slice(&1i32.to_ne_bytes());
    control[16..20].copy_from_slice(&(fd as i32).to_ne_bytes());
    let (c, clen) = if fd < 0 { (0, 0) } else { (control.as_ptr() as u64, 24) };
    let msg = [0u64, 0, iov.as_ptr() as u64, 1, c, clen, 0];
    linux(SYS_SENDMSG, [sock as u64, msg.as_ptr() as u64, 0, 0, 0, 0])
}

/// `recvmsg` into `buf` on `sock`: (bytes, the descriptor received or -1).
fn recv(sock: i64, buf: &mut [u8]) -> (i64, i64) {
    let iov = [buf.as_mut_ptr() as u64, buf.len() as u64];
    let mut control = [0u8; 24];
    let msg = [0u64, 0, iov.as_ptr() as u64, 1, control.as_mut_ptr() as u64, 24, 0];
    let n = linux(SYS_RECVMSG, [sock as u64, msg.as_ptr() as u64, 0, 0, 0, 0]);
    let got = msg[5] >= 20 && control[12..16] == 1i32.to_ne_bytes();
    (n, if got { i32::from_ne_bytes(control[16..20].try_into().unwrap()) as i64 } else { -1 })
}

/// Reads `fd` (non-blocking) until it has something to say: (result,
/// bytes); EAGAIN after many tries.
fn read_soon(fd: i64, buf: &mut [u8]) -> i64 {
    for _ in 0..2000 {
        let r = linux(SYS_READ, [fd as u64, buf.as_mut_ptr() as u64, buf.len() as u64, 0, 0, 0]);
        if r != EAGAIN {
            return r;
        }
        sys::yield_now();
    }
    EAGAIN
}

fn wait(pid: i64) -> i64 {
    let mut status = 0i32;
    let r = linux(SYS_WAIT4, [pid as u64, &raw mut status as u64, 0, 0, 0, 0]);
    if r == pid {
        (status >> 8) as i64
    } else {
        -1
    }
}

/// The same user's child: takes the end, writes through it, exits.
fn receiver(sock: i64) -> ! {
    let mut b = [0u8; 1];
    let (n, fd) = recv(sock, &mut b);
    if n != 1 || fd < 0 {
        println!("test_pipepass: the child got {n} bytes and descriptor {fd}");
        exit(2);
    }
    let ok = *b"ok";
    if linux(SYS_WRITE, [fd as u64, ok.as_ptr() as u64, 2, 0, 0, 0]) != 2 {
        exit(3);
    }
    exit(0);
}

/// The other user's child: says it is user 1000, receives an end and
/// writes through it; told where another pipe is, its frame and its
/// ticket (as a ticket kept in shared memory is read), it must neither
/// map it, nor claim it with that ticket or a forged one, nor hold it so
/// that the ticket alone would do.
fn outsider(sock: i64) -> ! {
    if linux(SYS_SETGID, [1000, 0, 0, 0, 0, 0]) != 0 || linux(SYS_SETUID, [1000, 0, 0, 0, 0, 0]) != 0 {
        exit(2);
    }
    let _ = send(sock, b"u", -1);
    let mut at = [0u8; 24];
    let (n, fd) = recv(sock, &mut at);
    let word = |i: usize| u64::from_ne_bytes(at[i * 8..i * 8 + 8].try_into().unwrap());
    let (va, frame, ticket) = (word(0), word(1), word(2));
    let ok = *b"ok";
    if n != 24 || fd < 0 || linux(SYS_WRITE, [fd as u64, ok.as_ptr() as u64, 2, 0, 0, 0]) != 2 {
        exit(3);
    }
    if libos::selfmap::pte(va).is_some()
        || sys::map_with(ENV_SELF, va, frame, mf::WRITE, CRED_SELF, CRED_SELF).is_ok()
    {
        exit(4);
    }
    let forged = (0..64u64).any(|i| sys::range_claim(i | 0x5eed << 16, 7).is_ok());
    if forged {
        exit(5);
    }
    if sys::range_claim(ticket, 3) != Err(abi::Error::Denied) {
        exit(6);
    }
    let mine = libos::fd::get_raw(fd).map(|d| d.file.addr() & !(libos::layout::PAGE - 1)).unwrap_or(0);
    if sys::range_hold(ticket, va) != Err(abi::Error::NotMapped)
        || sys::range_hold(ticket, mine) != Err(abi::Error::Denied)
    {
        exit(7);
    }
    exit(0);
}

/// A child passing its own pipe's end up to its parent (of the same user
/// but not the child's to map into), then writing into the pipe.
fn upward(sock: i64) -> ! {
    let p = pipe(0);
    if send(sock, b"r", p[0]) != 1 {
        exit(5);
    }
    close(p[0]);
    let up = *b"up";
    exit(if linux(SYS_WRITE, [p[1] as u64, up.as_ptr() as u64, 2, 0, 0, 0]) == 2 { 0 } else { 6 });
}

/// A socket pair and a child running `body` on its second socket: (our
/// socket, the child's pid).
fn child(body: fn(i64) -> !) -> (i64, i64) {
    let s = socketpair();
    let pid = linux(SYS_FORK, [0; 6]);
    if pid == 0 {
        close(s[0]);
        body(s[1]);
    }
    close(s[1]);
    (s[0], pid)
}

fn main(_: u64) -> i32 {
    if let Err(e) = native::init(libos::linux::syscall) {
        println!("test_pipepass: {e}");
        return 1;
    }
    let mut ok = true;
    let mut buf = [0u8; 16];

    // The same user: the end is received, used and dropped.
    let (s, pid) = child(receiver);
    let p = pipe(O_NONBLOCK);
    check(&mut ok, "the send of a pipe end to the same user's child", send(s, b"p", p[1]) == 1);
    close(p[1]);
    check(&mut ok, "the child used the end it received", wait(pid) == 0);
    check(&mut ok, "its bytes came through", read_soon(p[0], &mut buf) == 2 && buf[..2] == *b"ok");
    check(&mut ok, "then end of file: the passed reference was dropped", read_soon(p[0], &mut buf) == 0);
    close(p[0]);
    close(s);

    // Another user: it gets the end; another pipe it is told of stays
    // out of its reach.
    let (s, pid) = child(outsider);
    check(&mut ok, "the child became user 1000", recv(s, &mut buf[..1]).0 == 1);
    let q = pipe(O_NONBLOCK);
    let other = pipe(O_NONBLOCK);
    let d = libos::fd::get_raw(other[1]).map(|d| d.file.addr()).unwrap_or(0);
    let va = d & !(libos::layout::PAGE - 1);
    let frame = libos::selfmap::pte(va).map_or(0, abi::pte::frame_of);
    let ticket = libos::obj::pipe::ticket(va).unwrap_or(0);
    let mut at = [0u8; 24];
    at[..8].copy_from_slice(&va.to_ne_bytes());
    at[8..16].copy_from_slice(&frame.to_ne_bytes());
    at[16..].copy_from_slice(&ticket.to_ne_bytes());
    check(&mut ok, "the send of an end to the other user's socket", send(s, &at, q[1]) == 24);
    close(q[1]);
    check(&mut ok, "the other user used the end, and reached no other pipe", wait(pid) == 0);
    check(&mut ok, "its bytes came through", read_soon(q[0], &mut buf) == 2 && buf[..2] == *b"ok");
    check(&mut ok, "then end of file", read_soon(q[0], &mut buf) == 0);
    close(q[0]);
    close(s);

    // Up the tree: the parent receives its child's pipe, after the child
    // has ended: in flight, mapped by no process, the message's hold on
    // the range kept its frames.
    let (s, pid) = child(upward);
    check(&mut ok, "the child wrote and exited", wait(pid) == 0);
    let (n, fd) = recv(s, &mut buf[..1]);
    check(&mut ok, "the parent received its child's read end", n == 1 && fd >= 0);
    check(&mut ok, "the child's bytes came through", read_soon(fd, &mut buf) == 2 && buf[..2] == *b"up");
    check(&mut ok, "then end of file", read_soon(fd, &mut buf) == 0);
    close(fd);
    close(s);

    // A later holder: sent while only this process held the socket, the
    // end goes to a child forked after this process closed its own.
    let t = socketpair();
    let r = pipe(O_NONBLOCK);
    check(&mut ok, "the send to a socket only the sender holds", send(t[1], b"l", r[1]) == 1);
    close(r[1]);
    close(t[1]);
    let pid = linux(SYS_FORK, [0; 6]);
    if pid == 0 {
        close(r[0]);
        receiver(t[0]);
    }
    close(t[0]);
    check(&mut ok, "the later holder used the end", wait(pid) == 0);
    check(&mut ok, "its bytes came through", read_soon(r[0], &mut buf) == 2 && buf[..2] == *b"ok");
    check(&mut ok, "then end of file", read_soon(r[0], &mut buf) == 0);
    close(r[0]);
    if ok {
        println!("pipe pass test passed");
        0
    } else {
        println!("pipe pass test FAILED");
        1
    }
}

user::entry!(main);
