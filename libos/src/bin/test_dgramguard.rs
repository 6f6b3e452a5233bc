//! Boot test: a bound Unix datagram socket's inbox is mapped only into
//! the processes that hold the socket and the senders its file's bits let
//! send (issue 25, `obj::inbox`). Root binds a datagram socket at a 0600
//! name; another root process sends it a secret. A process of user 1000,
//! which may not send there, follows the name's inode to root's socket
//! (both in the shared arena, which every process maps writable), maps
//! whatever the socket names in the pipes' window by name or with the
//! ticket kept beside the name (or forged ones), and searches the arena;
//! it overwrites every copy of the secret it finds, then sends to the
//! name itself (EACCES). Root must receive its datagram unchanged and
//! nothing else, and the attacker must have seen and reached nothing.
//! What user 1000 may do still works: it sends to root's 0666 name and
//! to root's abstract name, and root receives both with their senders.
#![no_std]
#![no_main]

use libos::linux::nr::{
    SYS_BIND, SYS_CHMOD, SYS_CONNECT, SYS_FORK, SYS_RECVFROM, SYS_SENDTO, SYS_SOCKET, SYS_STAT, SYS_UNLINK,
};
use libos::native::{self, linux};
#[path = "hostile/kit.rs"]
mod kit;

use kit::{all_mapped, close, exit, read1, reads, wait, write1, writes, CLAIMED, MAPPED, SAW, WROTE};
use user::println;
use user::verdict::check;

const AF_UNIX: u64 = 1;
const SOCK_DGRAM: u64 = 2;
const MSG_DONTWAIT: u64 = 0x40;
const EACCES: i64 = -13;
const EAGAIN: i64 = -11;
const SECRET: &[u8; 16] = b"root-secret-89ab";

/// What the attacker reports, one bit each.
const SENT: u8 = 16;
const NO_SOCKET: u8 = 32;
const NO_RING: u8 = 64;

/// Root's name under attack (0600), the one anyone may send to (0666),
/// and an abstract one (no file, no bits).
const GUARDED: &[u8] = b"/tmp/dgramguard";
const SHARED: &[u8] = b"/tmp/dgramshare";
const ABSTRACT: &[u8] = b"\0dgramguard";

/// A `sockaddr_un` for `name` on the stack (lxrt's checks know this
/// program's stack, not its read-only data), and its length.
fn addr(name: &[u8]) -> ([u8; 110], u64) {
    let mut a = [0u8; 110];
    a[..2].copy_from_slice(&(AF_UNIX as u16).to_ne_bytes());
    a[2..2 + name.len()].copy_from_slice(name);
    let nul = u64::from(name.first() != Some(&0));
    (a, 2 + name.len() as u64 + nul)
}

/// A path's bytes with a NUL, on the stack.
fn path(name: &[u8]) -> [u8; 32] {
    let mut p = [0u8; 32];
    p[..name.len()].copy_from_slice(name);
    p
}

fn socket() -> i64 {
    linux(SYS_SOCKET, [AF_UNIX, SOCK_DGRAM, 0, 0, 0, 0])
}

/// A datagram socket bound to `name`, its file's mode set to `mode` (a
/// path), or -1.
fn bound(name: &[u8], mode: u64) -> i64 {
    let s = socket();
    let (a, len) = addr(name);
    if name[0] != 0 {
        let p = path(name);
        linux(SYS_UNLINK, [p.as_ptr() as u64, 0, 0, 0, 0, 0]);
    }
    let ok = s >= 0
        && linux(SYS_BIND, [s as u64, a.as_ptr() as u64, len, 0, 0, 0]) == 0
        && (name[0] == 0 || linux(SYS_CHMOD, [path(name).as_ptr() as u64, mode, 0, 0, 0, 0]) == 0);
    if ok {
        s
    } else {
        -1
    }
}

/// `sendto` of `bytes` from socket `s` to `name`: its result.
fn send(s: i64, name: &[u8], bytes: &[u8]) -> i64 {
    let (a, len) = addr(name);
    let mut copy = [0u8; 32];
    copy[..bytes.len()].copy_from_slice(bytes);
    linux(SYS_SENDTO, [s as u64, copy.as_ptr() as u64, bytes.len() as u64, 0, a.as_ptr() as u64, len])
}

/// Whether socket `s` receives exactly `want` now, from `from` (empty: an
/// unnamed sender).
fn receives(s: i64, want: &[u8], from: &[u8]) -> bool {
    let mut got = [0u8; 32];
    let mut a = [0u8; 110];
    let mut alen = 110u32;
    let n = linux(
        SYS_RECVFROM,
        [s as u64, got.as_mut_ptr() as u64, 32, MSG_DONTWAIT, a.as_mut_ptr() as u64, &raw mut alen as u64],
    );
    let (want_addr, want_len) = addr(from);
    let sender =
        if from.is_empty() { alen == 0 } else { a[..want_len as usize] == want_addr[..want_len as usize] };
    n == want.len() as i64 && got[..want.len()] == *want && sender
}

/// Whether socket `s` has nothing queued.
fn empty(s: i64) -> bool {
    let mut got = [0u8; 32];
    linux(SYS_RECVFROM, [s as u64, got.as_mut_ptr() as u64, 32, MSG_DONTWAIT, 0, 0]) == EAGAIN
}

/// User 1000: waits for the word, then attacks root's bound socket;
/// reports what it got on `up`, then sends to the names it may.
fn attacker(down: i64, up: i64) -> ! {
    if read1(down) != b'g' {
        exit(3);
    }
    let mut found = 0;
    let mut st = [0u64; 18];
    let p = path(GUARDED);
    let ino = if linux(SYS_STAT, [p.as_ptr() as u64, st.as_mut_ptr() as u64, 0, 0, 0, 0]) == 0 {
        st[1] as libos::fs::Ino
    } else {
        0
    };
    let node = libos::fs::node::get(ino);
    // The socket the name names, in the arena, and what it points to in
    // the pipes' window.
    let sock = node.data as u64;
    let size = size_of::<libos::obj::unix::Socket>() as u64;
    if ino == 0 || sock == 0 || !all_mapped(sock, size) {
        found |= NO_SOCKET | NO_RING;
    } else {
        let (got, named) = kit::attack_words(SECRET, sock, size, node.ticket);
        found |= got | if named == 0 { NO_RING } else { 0 };
    }
    // Anywhere in the arena this process can write.
    found |= kit::scrawl_arena(SECRET);
    // The library's own check: sending is writing to the socket file.
    let s = socket();
    if send(s, GUARDED, b"forged") != EACCES {
        found |= SENT;
    }
    write1(up, found);
    // What user 1000 may do.
    let mut legit = if send(s, SHARED, b"to-shared") == 9 { 0 } else { 1 };
    legit |= if send(s, ABSTRACT, b"to-abstract") == 11 { 0 } else { 2 };
    write1(up, legit);
    read1(down);
    exit(0);
}

fn main(_: u64) -> i32 {
    if let Err(e) = native::init(libos::linux::syscall) {
        println!("test_dgramguard: {e}");
        return 1;
    }
    let mut ok = true;
    let (pid, down, up) = kit::fork_attacker(attacker);
    check(&mut ok, "the attacker became user 1000", read1(up) == b'u');
    let s = bound(GUARDED, 0o600);
    let shared = bound(SHARED, 0o666);
    let abs = bound(ABSTRACT, 0);
    check(&mut ok, "root binds its 0600, 0666 and abstract names", s >= 0 && shared >= 0 && abs >= 0);
    // Another root process, holding none of them, sends the secret.
    let sender = linux(SYS_FORK, [0; 6]);
    if sender == 0 {
        close(s);
        let c = socket();
        exit(if send(c, GUARDED, SECRET) == SECRET.len() as i64 { 0 } else { 1 });
    }
    check(&mut ok, "another root process sent to the name", wait(sender) == 0);

    write1(down, b'g');
    let found = read1(up);
    check(&mut ok, "the attacker ran", found != 0xff);
    check(&mut ok, "the attacker found root's socket beside the name", found & NO_SOCKET == 0);
    check(&mut ok, "the attacker found where the socket's inbox is", found & NO_RING == 0);
    check(&mut ok, "the attacker did not see the secret", found & SAW == 0);
    check(&mut ok, "the attacker could not write the inbox", found & WROTE == 0);
    check(&mut ok, "the attacker could not claim the inbox's range", found & CLAIMED == 0);
    check(&mut ok, "the attacker could not map the inbox's frames", found & MAPPED == 0);
    check(&mut ok, "user 1000's send to the 0600 name: EACCES", found & SENT == 0);
    check(&mut ok, "root receives its datagram unchanged", receives(s, SECRET, b""));
    check(&mut ok, "and nothing else", empty(s));
    let legit = read1(up);
    check(&mut ok, "user 1000 sent to root's 0666 name", legit & 1 == 0);
    check(&mut ok, "user 1000 sent to root's abstract name", legit & 2 == 0);
    check(&mut ok, "root receives it there", receives(shared, b"to-shared", b""));
    check(&mut ok, "root receives it at the abstract name", receives(abs, b"to-abstract", b""));
    // Connected to a name, root writes; `read` takes the datagram.
    let c = socket();
    let (a, len) = addr(SHARED);
    let connected = linux(SYS_CONNECT, [c as u64, a.as_ptr() as u64, len, 0, 0, 0]) == 0;
    check(&mut ok, "root connects to its 0666 name and writes", connected && writes(c, b"connected"));
    check(&mut ok, "and reads it there", reads(shared, b"connected"));
    close(c);
    write1(down, b'd');
    check(&mut ok, "user 1000 ended well", wait(pid) == 0);
    for fd in [s, shared, abs, down, up] {
        close(fd);
    }
    for name in [GUARDED, SHARED] {
        let p = path(name);
        linux(SYS_UNLINK, [p.as_ptr() as u64, 0, 0, 0, 0, 0]);
    }
    if ok {
        println!("dgram guard test passed");
        0
    } else {
        println!("dgram guard test FAILED");
        1
    }
}

user::entry!(main);
