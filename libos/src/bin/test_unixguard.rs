//! Boot test: a socketpair's rings are mapped only into the processes
//! that hold its sockets (issue 25, `obj::unix`). Root makes a socketpair
//! and sends a secret through it. A process of user 1000 looks for it in
//! every page of the shared arena it maps (which it maps writable) and
//! overwrites it; it then follows root's socket (root tells it where its
//! description is: it is in the arena, where anyone could find it) to
//! whatever the socket names in the pipes' window, and maps those frames
//! by name with each capability it holds, or tries their range. Root must
//! read its bytes unchanged, and the attacker must have seen and reached
//! nothing. A child root forks still uses the pair.
#![no_std]
#![no_main]

use abi::syscall::{map as mf, CRED_SELF, ENV_SELF};
use libos::layout::{PAGE, PIPES, PIPES_END, PIPE_SLOT};
use libos::linux::nr::{
    SYS_CLOSE, SYS_EXIT_GROUP, SYS_FORK, SYS_PIPE2, SYS_READ, SYS_SETGID, SYS_SETUID, SYS_SOCKETPAIR,
    SYS_WAIT4, SYS_WRITE,
};
use libos::native::{self, linux};
use user::verdict::check;
use user::{println, sys};

const AF_UNIX: u64 = 1;
const SOCK_STREAM: u64 = 1;
const SECRET: &[u8; 16] = b"root-secret-4567";

/// What the attacker reports, one bit each.
const SAW: u8 = 1;
const WROTE: u8 = 2;
const MAPPED: u8 = 8;
const NO_SOCKET: u8 = 32;

fn close(fd: i64) {
    linux(SYS_CLOSE, [fd as u64, 0, 0, 0, 0, 0]);
}

fn exit(code: u64) -> ! {
    linux(SYS_EXIT_GROUP, [code, 0, 0, 0, 0, 0]);
    sys::exit(code as i32);
}

fn pipe() -> [i64; 2] {
    let mut p = [0i32; 2];
    if linux(SYS_PIPE2, [p.as_mut_ptr() as u64, 0, 0, 0, 0, 0]) != 0 {
        println!("test_unixguard: pipe2 failed");
        sys::exit(1);
    }
    [p[0] as i64, p[1] as i64]
}

/// Whether `fd` reads exactly `want` now.
fn reads(fd: i64, want: &[u8]) -> bool {
    let mut got = [0u8; 32];
    let n = linux(SYS_READ, [fd as u64, got.as_mut_ptr() as u64, want.len() as u64, 0, 0, 0]);
    n == want.len() as i64 && got[..want.len()] == *want
}

/// Whether `fd` takes all of `bytes` (copied to the stack first).
fn writes(fd: i64, bytes: &[u8]) -> bool {
    let mut copy = [0u8; 32];
    copy[..bytes.len()].copy_from_slice(bytes);
    linux(SYS_WRITE, [fd as u64, copy.as_ptr() as u64, bytes.len() as u64, 0, 0, 0]) == bytes.len() as i64
}

fn read1(fd: i64) -> u8 {
    let mut b = [0u8; 1];
    if linux(SYS_READ, [fd as u64, b.as_mut_ptr() as u64, 1, 0, 0, 0]) != 1 {
        return 0xff;
    }
    b[0]
}

fn write1(fd: i64, b: u8) {
    let b = [b];
    linux(SYS_WRITE, [fd as u64, b.as_ptr() as u64, 1, 0, 0, 0]);
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

/// Looks for `SECRET` in the `len` bytes at `at` (mapped here) and
/// overwrites every copy: what it did (`SAW`, `WROTE`).
fn scrawl(at: u64, len: u64) -> u8 {
    // SAFETY: the caller checked the pages are mapped here; this is the
    // attack: bytes of another process's object.
    let bytes = unsafe { core::slice::from_raw_parts_mut(at as *mut u8, len as usize) };
    let mut did = 0;
    for i in 0..bytes.len().saturating_sub(SECRET.len()) {
        if bytes[i] == SECRET[0] && bytes[i..i + SECRET.len()] == *SECRET {
            bytes[i..i + SECRET.len()].fill(b'X');
            did = SAW | WROTE;
        }
    }
    did
}

/// Whether every page of `[at, at + len)` is mapped here.
fn all_mapped(at: u64, len: u64) -> bool {
    (at & !(PAGE - 1)..at + len).step_by(PAGE as usize).all(|va| libos::selfmap::pte(va).is_some())
}

/// The words in the `len` bytes at `at` (mapped here) that point into
/// the pipes' window, as the bases of the frames there.
fn pipe_words(at: u64, len: u64) -> impl Iterator<Item = u64> {
    (at..at + len).step_by(8).filter_map(|va| {
        // SAFETY: the caller checked the bytes are mapped; read only.
        let w = unsafe { (va as *const u64).read_unaligned() };
        (PIPES..PIPES_END).contains(&w).then_some(w & !(PIPE_SLOT - 1))
    })
}

/// User 1000: waits for the address of root's socket, then attacks the
/// pair; reports what it got on `up`.
fn attacker(down: i64, up: i64) -> ! {
    if linux(SYS_SETGID, [1000, 0, 0, 0, 0, 0]) != 0 || linux(SYS_SETUID, [1000, 0, 0, 0, 0, 0]) != 0 {
        exit(2);
    }
    write1(up, b'u');
    let mut word = [0u8; 8];
    if linux(SYS_READ, [down as u64, word.as_mut_ptr() as u64, 8, 0, 0, 0]) != 8 {
        exit(3);
    }
    let file = u64::from_ne_bytes(word);
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
            for b in pipe_words(sock, size) {
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
    let arena = libos::layout::SHARED..libos::layout::SHARED + libos::layout::SHARED_MAX;
    for va in arena.step_by(PAGE as usize).filter(|&va| all_mapped(va, 2 * PAGE)) {
        found |= scrawl(va, 2 * PAGE);
    }
    write1(up, found);
    write1(up, n as u8);
    read1(down);
    exit(0);
}

/// Frames at `at` in the pipes' window: maps them by name with each
/// capability this process holds for the purpose, or through the pipe
/// frames' claim with made-up tickets; what any of it got.
fn map_attack(at: u64) -> u8 {
    let frame = (at - PIPES) / PIPE_SLOT;
    for cred in [CRED_SELF, libos::shared::cred()] {
        let _ = sys::map_with(ENV_SELF, at, frame, mf::WRITE, CRED_SELF, cred);
    }
    for t in 1..64u64 {
        let _ = libos::obj::pipemem::claim(at, t, libos::obj::pipe::GUARDED_PAGES);
    }
    let pages = libos::obj::pipe::GUARDED_PAGES * PAGE;
    let mut found = 0;
    if (at..at + pages).step_by(PAGE as usize).any(|va| libos::selfmap::pte(va).is_some()) {
        found |= MAPPED;
    }
    if all_mapped(at, pages) {
        found |= scrawl(at, pages);
    }
    found
}

fn main(_: u64) -> i32 {
    if let Err(e) = native::init(libos::linux::syscall) {
        println!("test_unixguard: {e}");
        return 1;
    }
    let mut ok = true;
    let (down, up) = (pipe(), pipe());
    let pid = linux(SYS_FORK, [0; 6]);
    if pid == 0 {
        close(down[1]);
        close(up[0]);
        attacker(down[0], up[1]);
    }
    close(down[0]);
    close(up[1]);
    check(&mut ok, "the attacker became user 1000", read1(up[0]) == b'u');

    let mut sv = [0i32; 2];
    let made = linux(SYS_SOCKETPAIR, [AF_UNIX, SOCK_STREAM, 0, sv.as_mut_ptr() as u64, 0, 0]) == 0;
    check(&mut ok, "root makes a socketpair", made);
    let (a, b) = (sv[0] as i64, sv[1] as i64);
    check(&mut ok, "root sends its secret", writes(a, SECRET));

    let file = libos::fd::get_raw(a).map_or(0, |d| d.file.addr());
    let word = file.to_ne_bytes();
    linux(SYS_WRITE, [down[1] as u64, word.as_ptr() as u64, 8, 0, 0, 0]);
    let found = read1(up[0]);
    let named = read1(up[0]);
    check(&mut ok, "the attacker ran", found != 0xff);
    check(&mut ok, "the attacker found root's socket", found & NO_SOCKET == 0);
    check(&mut ok, "the attacker did not see the secret", found & SAW == 0);
    check(&mut ok, "the attacker could not write the ring", found & WROTE == 0);
    check(&mut ok, "the attacker could not map the socket's frames", found & MAPPED == 0);
    println!("test_unixguard: the socket names {named} places in the pipes' window");
    check(&mut ok, "root reads its bytes unchanged", reads(b, SECRET));
    write1(down[1], b'd');
    check(&mut ok, "user 1000 ended well", wait(pid) == 0);

    // A child inherits the pair and answers through it.
    let child = linux(SYS_FORK, [0; 6]);
    if child == 0 {
        let got = reads(b, b"ping") && writes(b, b"pong");
        exit(if got { 0 } else { 1 });
    }
    check(&mut ok, "root sends to its child", writes(a, b"ping"));
    check(&mut ok, "the child answered", wait(child) == 0 && reads(a, b"pong"));
    close(b);
    check(&mut ok, "root sees the end of file", reads(a, b""));
    close(a);
    if ok {
        println!("unix guard test passed");
        0
    } else {
        println!("unix guard test FAILED");
        1
    }
}

user::entry!(main);
