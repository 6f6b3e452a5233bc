//! Boot test: a FIFO's ring is mapped only into the processes that hold
//! it open (issue 25, `obj::fifo`). Root makes a 0600 FIFO and holds it
//! open; another root process opens it and writes a secret. A process of
//! user 1000, which may not open the FIFO, looks for the ring where the
//! FIFO's inode says it is (the inode table is in the shared arena, which
//! every process maps writable), reads the secret there and overwrites it;
//! it then tries the FIFO's frame range with the ticket the inode keeps
//! beside the name: claim it, map its frames by name or with the ticket.
//! Root must read its bytes unchanged, and the attacker must have seen
//! and reached nothing. What user 1000 may do still works: it reads
//! root's 0644 FIFO, and opens root's 0666 one first for root to join.
//! A FIFO holds 64 open descriptions at once.
#![no_std]
#![no_main]

use libos::linux::nr::{
    SYS_CHMOD, SYS_FORK, SYS_MKNOD, SYS_OPEN, SYS_READ, SYS_SETGID, SYS_SETUID, SYS_STAT, SYS_UNLINK,
};
use libos::native::{self, linux};
#[path = "hostile/kit.rs"]
mod kit;
#[path = "hostile/named.rs"]
mod named;

use kit::{all_mapped, close, exit, read1, reads, wait, write1, writes, MAPPED, SAW, WROTE};
use named::CLAIMED;
use user::println;
use user::verdict::check;

const O_WRONLY: u64 = 1;
const O_RDWR: u64 = 2;
const O_NONBLOCK: u64 = 0o4000;
const S_IFIFO: u64 = 0o010000;
const EACCES: i64 = -13;
const ENFILE: i64 = -23;
const EAGAIN: i64 = -11;
const SECRET: &[u8; 16] = b"root-secret-0123";

/// What the attacker reports, one bit each.
const OPENED: u8 = 16;
const NO_INODE: u8 = 32;
const NO_RING: u8 = 64;

/// The FIFO under attack, root's, 0600.
const GUARDED: &[u8] = b"/tmp/fifoguard";
/// Root's FIFO that others may read (0644), which root holds open.
const SHARED: &[u8] = b"/tmp/fifoshare";
/// Root's FIFO anyone may use (0666), first opened by user 1000.
const FIRST: &[u8] = b"/tmp/fifofirst";

/// FIFO `name`'s path, on the stack (lxrt's checks know this program's
/// stack, not its read-only data).
fn path(name: &[u8]) -> [u8; 16] {
    let mut p = [0u8; 16];
    p[..name.len()].copy_from_slice(name);
    p
}

/// `open` of FIFO `name`, nonblocking, with access mode `how`.
fn open(name: &[u8], how: u64) -> i64 {
    let p = path(name);
    linux(SYS_OPEN, [p.as_ptr() as u64, how | O_NONBLOCK, 0, 0, 0, 0])
}

/// Whether `fd` is a working read end with nothing to read yet (a writer
/// is open).
fn reads_nothing(fd: i64) -> bool {
    let mut got = [0u8; 4];
    linux(SYS_READ, [fd as u64, got.as_mut_ptr() as u64, 4, 0, 0, 0]) == EAGAIN
}

/// User 1000: waits for the word, then attacks the FIFO; reports what it
/// got on `up`.
fn attacker(down: i64, up: i64) -> ! {
    if linux(SYS_SETGID, [1000, 0, 0, 0, 0, 0]) != 0 || linux(SYS_SETUID, [1000, 0, 0, 0, 0, 0]) != 0 {
        exit(2);
    }
    write1(up, b'u');
    if read1(down) != b'g' {
        exit(3);
    }
    let p = path(GUARDED);
    let mut found = 0;
    if open(GUARDED, O_RDWR) != EACCES {
        found |= OPENED;
    }
    let mut st = [0u64; 18];
    if linux(SYS_STAT, [p.as_ptr() as u64, st.as_mut_ptr() as u64, 0, 0, 0, 0]) != 0 {
        found |= NO_INODE;
    }
    let ino = st[1] as libos::fs::Ino;
    let node = libos::fs::node::get(ino);
    // The ring the inode names, wherever it is, if this process maps it.
    let ring = node.data as u64;
    let span = size_of::<libos::obj::pipe::Pipe>() as u64;
    if ring != 0 && all_mapped(ring, span) {
        found |= kit::scrawl(SECRET, ring, span);
    }
    found |= range_attack(ino);
    // Anywhere else in the arena this process can write.
    found |= kit::scrawl_arena(SECRET);
    write1(up, found);
    // What user 1000 may do: read root's 0644 FIFO through the ring root
    // made, and be the first to open root's 0666 one, for root to join.
    let r = open(SHARED, 0);
    let mut legit = if r >= 0 && reads(r, b"shared") { 0 } else { 1 };
    close(r);
    let first = open(FIRST, O_RDWR);
    legit |= if first >= 0 && writes(first, b"first") { 0 } else { 2 };
    write1(up, legit);
    // Holds it open until root has read.
    read1(down);
    exit(0);
}

/// The FIFO's frames, where the inode names them with the range's ticket
/// beside (`named::range_attack`).
fn range_attack(ino: libos::fs::Ino) -> u8 {
    let n = libos::fs::node::get(ino);
    let (at, ticket) = (n.data as u64, n.ticket);
    if !libos::obj::pipemem::guarded(at) {
        return NO_RING;
    }
    named::range_attack(SECRET, at, ticket)
}

fn main(_: u64) -> i32 {
    if let Err(e) = native::init(libos::linux::syscall) {
        println!("test_fifoguard: {e}");
        return 1;
    }
    let mut ok = true;
    for (name, mode) in [(GUARDED, 0o600), (SHARED, 0o644), (FIRST, 0o666)] {
        let p = path(name);
        linux(SYS_UNLINK, [p.as_ptr() as u64, 0, 0, 0, 0, 0]);
        // Not masked: the mode is set after by `chmod`.
        let made = linux(SYS_MKNOD, [p.as_ptr() as u64, S_IFIFO | mode, 0, 0, 0, 0]) == 0
            && linux(SYS_CHMOD, [p.as_ptr() as u64, mode, 0, 0, 0, 0]) == 0;
        check(&mut ok, "mkfifo", made);
    }
    let (pid, down, up) = kit::fork_attacker(attacker);
    check(&mut ok, "the attacker became user 1000", read1(up) == b'u');

    // Root holds the FIFO open; another root process writes the secret.
    let fd = open(GUARDED, O_RDWR);
    check(&mut ok, "root opens its FIFO", fd >= 0);
    let shared = open(SHARED, O_RDWR);
    check(&mut ok, "root opens its shared FIFO and writes", shared >= 0 && writes(shared, b"shared"));
    let writer = linux(SYS_FORK, [0; 6]);
    if writer == 0 {
        close(fd);
        let w = open(GUARDED, O_WRONLY);
        exit(if w >= 0 && writes(w, SECRET) { 0 } else { 1 });
    }
    check(&mut ok, "another root process opened the FIFO and wrote", wait(writer) == 0);

    write1(down, b'g');
    let found = read1(up);
    check(&mut ok, "the attacker ran", found != 0xff);
    check(&mut ok, "the attacker found the FIFO's inode", found & NO_INODE == 0);
    check(&mut ok, "the attacker found the ring's place beside the name", found & NO_RING == 0);
    check(&mut ok, "the attacker may not open the FIFO", found & OPENED == 0);
    check(&mut ok, "the attacker did not see the secret", found & SAW == 0);
    check(&mut ok, "the attacker could not write the ring", found & WROTE == 0);
    check(&mut ok, "the attacker could not claim the FIFO's range", found & CLAIMED == 0);
    check(&mut ok, "the attacker could not map the FIFO's frames", found & MAPPED == 0);
    check(&mut ok, "root reads its bytes unchanged", reads(fd, SECRET));
    close(fd);
    let legit = read1(up);
    check(&mut ok, "user 1000 read root's 0644 FIFO", legit & 1 == 0);
    check(&mut ok, "user 1000 opened root's 0666 FIFO first and wrote", legit & 2 == 0);
    let first = open(FIRST, 0);
    check(&mut ok, "root joined it and read user 1000's bytes", first >= 0 && reads(first, b"first"));
    write1(down, b'd');
    check(&mut ok, "user 1000 ended well", wait(pid) == 0);
    close(first);
    // A FIFO's open descriptions live in its frames: 64 at once, the 65th
    // ENFILE, and a closed one's entry is used again.
    let more: [i64; 64] = core::array::from_fn(|_| open(SHARED, 0));
    check(&mut ok, "63 more opens beside root's own", more[..63].iter().all(|&fd| fd >= 0));
    check(&mut ok, "the 65th open description: ENFILE", more[63] == ENFILE);
    close(more[0]);
    let again = open(SHARED, 0);
    check(&mut ok, "a closed description's entry is used again", again >= 0 && reads_nothing(again));
    close(again);
    more[1..63].iter().for_each(|&fd| close(fd));
    close(shared);
    for name in [GUARDED, SHARED, FIRST] {
        let p = path(name);
        linux(SYS_UNLINK, [p.as_ptr() as u64, 0, 0, 0, 0, 0]);
    }
    if ok {
        println!("fifo guard test passed");
        0
    } else {
        println!("fifo guard test FAILED");
        1
    }
}

user::entry!(main);
