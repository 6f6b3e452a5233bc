//! Boot test: a pseudo-terminal's state is mapped only into the processes
//! that hold one of its ends (issue 25, `obj::pty`). Root opens a pair and
//! types a secret line at its master, as a terminal emulator passes on a
//! password typed to `login`. A process of user 1000, forked before the
//! pair was made (it holds no end), may not open the slave by name; it
//! looks for the secret in every page of the shared arena it maps and
//! overwrites it, then goes for the pair where the pty table (in the
//! arena) says it is: claims its range with the ticket kept there or with
//! forged ones, maps its frames by name, as lxrt's opener does. Root must
//! read its line unchanged from the slave, and the attacker must have seen
//! and reached nothing. Then root passes the master to it over a Unix
//! socket (`SCM_RIGHTS`: the end carries the pair's ticket, as a pipe's
//! does): it receives it and types a line that root reads at the slave. A
//! child root forks after the pair was made and that becomes user 1000 (a
//! login shell on the terminal) still reads and writes the slave it
//! inherited; a root process that closed both ends (and so unmapped the
//! pair) opens the slave by name again.
#![no_std]
#![no_main]

use libos::linux::nr::{SYS_FORK, SYS_IOCTL, SYS_OPEN, SYS_SETGID, SYS_SETUID};
use libos::native::{self, linux};
#[path = "hostile/kit.rs"]
mod kit;
#[path = "hostile/rights.rs"]
mod rights;

use kit::{close, exit, read1, reads, wait, write1, writes, CLAIMED, MAPPED, SAW, WROTE};
use user::println;
use user::verdict::check;

const O_RDWR: u64 = 2;
const O_NOCTTY: u64 = 0o400;
const O_NONBLOCK: u64 = 0o4000;
const EACCES: i64 = -13;
const TIOCGPTN: u64 = 0x8004_5430;
const TIOCSPTLCK: u64 = 0x4004_5431;
/// The line typed at the master, as the slave reads it back.
const SECRET: &[u8; 17] = b"root-secret-0123\n";

/// What the attacker reports, one bit each.
const OPENED: u8 = 16;
const NO_PAIR: u8 = 32;

/// `open` of `name` (NUL-terminated), copied to the stack (lxrt's checks
/// know this program's stack, not its read-only data).
fn open(name: &[u8], how: u64) -> i64 {
    let mut p = [0u8; 16];
    p[..name.len()].copy_from_slice(name);
    linux(SYS_OPEN, [p.as_ptr() as u64, how, 0, 0, 0, 0])
}

/// `/dev/pts/N`, NUL-terminated.
fn slave_path(n: u32) -> [u8; 16] {
    let mut p = [0u8; 16];
    let prefix = b"/dev/pts/";
    p[..prefix.len()].copy_from_slice(prefix);
    let mut digits = [0u8; 4];
    let (mut v, mut k) = (n, 0);
    loop {
        digits[k] = b'0' + (v % 10) as u8;
        k += 1;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    for i in 0..k {
        p[prefix.len() + i] = digits[k - 1 - i];
    }
    p
}

/// The socket over which root passes the master to the attacker (made
/// before the fork: the attacker holds the other end).
static mut PASS: [i64; 2] = [-1; 2];

/// User 1000, holding no end of the pair: waits for the pair's number,
/// then attacks it; reports what it got on `up`. Then it receives the
/// master root passes it, and types a line at it.
fn attacker(down: i64, up: i64) -> ! {
    let n = read1(down);
    if n == 0xff {
        exit(3);
    }
    let mut found = 0;
    if open(&slave_path(u32::from(n)), O_RDWR | O_NOCTTY | O_NONBLOCK) != EACCES {
        found |= OPENED;
    }
    found |= range_attack(u32::from(n));
    found |= kit::scrawl_arena(SECRET);
    write1(up, found);
    // SAFETY: written once before the fork; read only after.
    let sock = unsafe { PASS[1] };
    let mut b = [0u8; 1];
    let (got, master) = rights::recv(sock, &mut b);
    let typed = got == 1 && master >= 0 && writes(master, b"from-1000\n");
    write1(up, typed as u8);
    exit(0);
}

/// The pair's frames, where the pty table names them with the range's
/// ticket beside (`kit::range_attack`).
fn range_attack(n: u32) -> u8 {
    let Some((at, ticket)) = libos::obj::pty::named(n) else { return NO_PAIR };
    if !libos::obj::pipemem::guarded(at) {
        return NO_PAIR;
    }
    kit::range_attack(SECRET, at, ticket)
}

/// Whether what master `fd` has to read contains `word`.
fn says(fd: i64, word: &[u8]) -> bool {
    let mut got = [0u8; 64];
    let n = linux(libos::linux::nr::SYS_READ, [fd as u64, got.as_mut_ptr() as u64, 64, 0, 0, 0]);
    n > 0 && got[..n as usize].windows(word.len()).any(|w| w == word)
}

fn main(_: u64) -> i32 {
    if let Err(e) = native::init(libos::linux::syscall) {
        println!("test_ptyguard: {e}");
        return 1;
    }
    let mut ok = true;
    let pass = rights::socketpair();
    // SAFETY: before the fork, the only thread.
    unsafe { PASS = pass };
    let (pid, down, up) = kit::fork_attacker(attacker);
    check(&mut ok, "the attacker became user 1000", read1(up) == b'u');

    let master = open(b"/dev/ptmx\0", O_RDWR | O_NOCTTY);
    check(&mut ok, "root opens /dev/ptmx", master >= 0);
    let (mut n, unlock) = (0u32, 0i32);
    let got = linux(SYS_IOCTL, [master as u64, TIOCGPTN, &raw mut n as u64, 0, 0, 0]) == 0
        && linux(SYS_IOCTL, [master as u64, TIOCSPTLCK, &raw const unlock as u64, 0, 0, 0]) == 0;
    check(&mut ok, "root unlocks the pair and learns its number", got && n < 255);
    let slave = open(&slave_path(n), O_RDWR | O_NOCTTY);
    check(&mut ok, "root opens the slave", slave >= 0);
    check(&mut ok, "root types the secret at the master", writes(master, SECRET));

    write1(down, n as u8);
    let found = read1(up);
    check(&mut ok, "the attacker ran", found != 0xff);
    check(&mut ok, "the attacker found the pair beside its number", found & NO_PAIR == 0);
    check(&mut ok, "the attacker may not open the slave", found & OPENED == 0);
    check(&mut ok, "the attacker did not see the secret", found & SAW == 0);
    check(&mut ok, "the attacker could not write the pair", found & WROTE == 0);
    check(&mut ok, "the attacker could not claim the pair's range", found & CLAIMED == 0);
    check(&mut ok, "the attacker could not map the pair's frames", found & MAPPED == 0);
    check(&mut ok, "root reads its line unchanged", reads(slave, SECRET));
    check(&mut ok, "root passes the master to user 1000", rights::send(pass[0], b"m", master) == 1);
    check(&mut ok, "user 1000 received the master and typed at it", read1(up) == 1);
    check(&mut ok, "root reads user 1000's line at the slave", reads(slave, b"from-1000\n"));
    check(&mut ok, "the attacker ended well", wait(pid) == 0);

    // A login shell: forked holding the slave, then user 1000.
    let shell = linux(SYS_FORK, [0; 6]);
    if shell == 0 {
        close(master);
        if linux(SYS_SETGID, [1000, 0, 0, 0, 0, 0]) != 0 || linux(SYS_SETUID, [1000, 0, 0, 0, 0, 0]) != 0 {
            exit(2);
        }
        exit(if reads(slave, b"ls\n") && writes(slave, b"ok") { 0 } else { 1 });
    }
    check(&mut ok, "root types a line for the shell", writes(master, b"ls\n"));
    check(&mut ok, "user 1000's shell read the line and answered", wait(shell) == 0);
    check(&mut ok, "root reads the shell's answer at the master", says(master, b"ok"));

    // A root process that let go of the pair (its last close unmaps it)
    // opens the slave by name again: it claims the frames with the ticket
    // beside the number, which the rule lets root do.
    let again = linux(SYS_FORK, [0; 6]);
    if again == 0 {
        close(master);
        close(slave);
        let at = libos::obj::pty::named(n).map_or(0, |(at, _)| at);
        if at == 0 || libos::obj::pipemem::mapped(at) {
            exit(1);
        }
        let s = open(&slave_path(n), O_RDWR | O_NOCTTY);
        exit(if s >= 0 && libos::obj::pipemem::mapped(at) && writes(s, b"back") { 0 } else { 2 });
    }
    let code = wait(again);
    check(&mut ok, "a process's last close of the pair unmapped it", code != 1);
    check(&mut ok, "a root process opened the slave by name again", code == 0);
    check(&mut ok, "root reads its line at the master", says(master, b"back"));
    close(slave);
    close(master);
    if ok {
        println!("pty guard test passed");
        0
    } else {
        println!("pty guard test FAILED");
        1
    }
}

user::entry!(main);
