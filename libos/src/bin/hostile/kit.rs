//! What the hostile boot tests of issue 25 (`test_fifoguard`,
//! `test_unixguard`, `test_dgramguard`, `test_sysvguard`, `test_fileguard`,
//! `test_ptyguard`) share: Linux
//! calls with their results judged, and the attacker's search of memory
//! for the victim's secret. Each test uses part of it.
#![allow(dead_code, reason = "each hostile test uses part of the kit")]

use libos::linux::nr::{SYS_CLOSE, SYS_EXIT_GROUP, SYS_PIPE2, SYS_READ, SYS_WAIT4, SYS_WRITE};
use libos::native::linux;
use user::{println, sys};

/// What an attacker reports, one bit each: it saw the secret, and wrote
/// over it.
pub const SAW: u8 = 1;
pub const WROTE: u8 = 2;

pub fn close(fd: i64) {
    linux(SYS_CLOSE, [fd as u64, 0, 0, 0, 0, 0]);
}

pub fn exit(code: u64) -> ! {
    linux(SYS_EXIT_GROUP, [code, 0, 0, 0, 0, 0]);
    sys::exit(code as i32);
}

pub fn pipe() -> [i64; 2] {
    let mut p = [0i32; 2];
    if linux(SYS_PIPE2, [p.as_mut_ptr() as u64, 0, 0, 0, 0, 0]) != 0 {
        println!("hostile test: pipe2 failed");
        sys::exit(1);
    }
    [p[0] as i64, p[1] as i64]
}

/// Whether `fd` reads exactly `want` now.
pub fn reads(fd: i64, want: &[u8]) -> bool {
    let mut got = [0u8; 32];
    let n = linux(SYS_READ, [fd as u64, got.as_mut_ptr() as u64, 32, 0, 0, 0]);
    n == want.len() as i64 && got[..want.len()] == *want
}

/// Whether `fd` takes all of `bytes` (copied to the stack first: lxrt's
/// checks know this program's stack, not its read-only data).
pub fn writes(fd: i64, bytes: &[u8]) -> bool {
    let mut copy = [0u8; 32];
    copy[..bytes.len()].copy_from_slice(bytes);
    linux(SYS_WRITE, [fd as u64, copy.as_ptr() as u64, bytes.len() as u64, 0, 0, 0]) == bytes.len() as i64
}

pub fn read1(fd: i64) -> u8 {
    let mut b = [0u8; 1];
    if linux(SYS_READ, [fd as u64, b.as_mut_ptr() as u64, 1, 0, 0, 0]) != 1 {
        return 0xff;
    }
    b[0]
}

pub fn write1(fd: i64, b: u8) {
    let b = [b];
    linux(SYS_WRITE, [fd as u64, b.as_ptr() as u64, 1, 0, 0, 0]);
}

/// The exit code of child `pid` once it has ended; -1 if the wait failed.
pub fn wait(pid: i64) -> i64 {
    let mut status = 0i32;
    let r = linux(SYS_WAIT4, [pid as u64, &raw mut status as u64, 0, 0, 0, 0]);
    if r == pid {
        (status >> 8) as i64
    } else {
        -1
    }
}

/// Looks for `secret` in the `len` bytes at `at` (mapped here) and
/// overwrites every copy: what it did (`SAW`, `WROTE`).
pub fn scrawl(secret: &[u8], at: u64, len: u64) -> u8 {
    // SAFETY: the caller checked the pages are mapped here; this is the
    // attack: bytes of another process's object.
    let bytes = unsafe { core::slice::from_raw_parts_mut(at as *mut u8, len as usize) };
    let mut did = 0;
    for i in 0..bytes.len().saturating_sub(secret.len()) {
        if bytes[i] == secret[0] && bytes[i..i + secret.len()] == *secret {
            bytes[i..i + secret.len()].fill(b'X');
            did = SAW | WROTE;
        }
    }
    did
}

/// Whether every page of `[at, at + len)` is mapped here.
pub fn all_mapped(at: u64, len: u64) -> bool {
    let page = libos::layout::PAGE;
    (at & !(page - 1)..at + len).step_by(page as usize).all(|va| libos::selfmap::pte(va).is_some())
}

/// Every page of the shared arena this process maps, searched for
/// `secret` (`scrawl`).
pub fn scrawl_arena(secret: &[u8]) -> u8 {
    let page = libos::layout::PAGE;
    let arena = libos::layout::SHARED..libos::layout::SHARED + libos::layout::SHARED_MAX;
    arena
        .step_by(page as usize)
        .filter(|&va| all_mapped(va, 2 * page))
        .fold(0, |f, va| f | scrawl(secret, va, 2 * page))
}

/// What an attacker reports: it mapped some of a pipe's frames.
pub const MAPPED: u8 = 8;

/// Maps the pipe frames at `at` by name (`map_with` of the frame its
/// address says) with each capability this process holds for the purpose:
/// its own and the arena's.
pub fn map_by_name(at: u64) {
    use abi::syscall::{map as mf, CRED_SELF, ENV_SELF};
    let frame = (at - libos::layout::PIPES) / libos::layout::PIPE_SLOT;
    for cred in [CRED_SELF, libos::shared::cred()] {
        let _ = sys::map_with(ENV_SELF, at, frame, mf::WRITE, CRED_SELF, cred);
    }
}

/// What the attacks on the pipe frames at `at` got: `MAPPED` if any page
/// is mapped here, and what `scrawl` did for `secret` if all are.
pub fn reached(secret: &[u8], at: u64) -> u8 {
    let page = libos::layout::PAGE;
    let pages = libos::obj::pipe::GUARDED_PAGES * page;
    let mut found = 0;
    if (at..at + pages).step_by(page as usize).any(|va| libos::selfmap::pte(va).is_some()) {
        found |= MAPPED;
    }
    if all_mapped(at, pages) {
        found |= scrawl(secret, at, pages);
    }
    found
}

/// The test's last line, `"<name> test passed"` or `FAILED`, and its exit
/// code.
pub fn verdict(name: &str, ok: bool) -> i32 {
    if ok {
        println!("{name} test passed");
        0
    } else {
        println!("{name} test FAILED");
        1
    }
}

/// What an attacker reports: it claimed a loan of a range.
pub const CLAIMED: u8 = 4;

/// The attacks on the frames at `at` in the pipes' window whose range's
/// ticket is kept where anyone reads it (beside a name): `CLAIM` with
/// that ticket and 64 forged ones for read, write and both, map the
/// frames by name with each capability this process holds for the
/// purpose, or with the ticket as lxrt does; what any of it got
/// (`CLAIMED`, and `reached`'s for `secret`).
pub fn range_attack(secret: &[u8], at: u64, ticket: u64) -> u8 {
    let found = if claims(ticket) { CLAIMED } else { 0 };
    map_by_name(at);
    let _ = libos::obj::pipemem::claim(at, ticket, libos::obj::pipe::GUARDED_PAGES);
    found | reached(secret, at)
}

/// Whether `CLAIM` of a range gave anything, with `ticket` or 64 forged
/// ones (its index, other keys), for read, write or both.
pub fn claims(ticket: u64) -> bool {
    use abi::syscall::rights::{READ, WRITE};
    let forged = (0..64u64).map(|k| ticket & 0xffff | (k + 1) << 16);
    let mut any = false;
    for t in core::iter::once(ticket).chain(forged) {
        for rights in [READ, WRITE, READ | WRITE] {
            any |= sys::range_claim(t, rights).is_ok();
        }
    }
    any
}

/// Every place in the pipes' window that a word of the `len` bytes at
/// `at` (mapped here: an object in the arena, an inode) points to,
/// attacked with `range_attack` and `ticket`: what any of it got, and how
/// many places there were (up to 16).
pub fn attack_words(secret: &[u8], at: u64, len: u64, ticket: u64) -> (u8, usize) {
    let (mut seen, mut n, mut found) = ([0u64; 16], 0, 0);
    for b in pipe_words(at, len) {
        if n < seen.len() && !seen[..n].contains(&b) {
            seen[n] = b;
            n += 1;
            found |= range_attack(secret, b, ticket);
        }
    }
    (found, n)
}

/// The words in the `len` bytes at `at` (mapped here) that point into
/// the pipes' window, as the bases of the frames there.
pub fn pipe_words(at: u64, len: u64) -> impl Iterator<Item = u64> {
    use libos::layout::{PIPES, PIPES_END, PIPE_SLOT};
    (at..at + len).step_by(8).filter_map(|va| {
        // SAFETY: the caller checked the bytes are mapped; read only.
        let w = unsafe { (va as *const u64).read_unaligned() };
        (PIPES..PIPES_END).contains(&w).then_some(w & !(PIPE_SLOT - 1))
    })
}

/// Forks the attacker, which becomes user 1000 (group 1000; exit code 2
/// if it cannot), says `u` up, and runs `attacker(down, up)` with the
/// read end of a pipe from this process and the write end of one to it:
/// its pid, and this process's other ends (down, up).
pub fn fork_attacker(attacker: fn(i64, i64) -> !) -> (i64, i64, i64) {
    use libos::linux::nr::{SYS_FORK, SYS_SETGID, SYS_SETUID};
    let (down, up) = (pipe(), pipe());
    let pid = linux(SYS_FORK, [0; 6]);
    if pid == 0 {
        close(down[1]);
        close(up[0]);
        if linux(SYS_SETGID, [1000, 0, 0, 0, 0, 0]) != 0 || linux(SYS_SETUID, [1000, 0, 0, 0, 0, 0]) != 0 {
            exit(2);
        }
        write1(up[1], b'u');
        attacker(down[0], up[1]);
    }
    close(down[0]);
    close(up[1]);
    (pid, down[1], up[0])
}
