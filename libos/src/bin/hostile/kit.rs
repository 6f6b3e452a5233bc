//! What the hostile boot tests of issue 25 (`test_fifoguard`, `test_ptyguard`,
//! `test_unixguard`) share: Linux calls with their results judged, and
//! the attacker's search of memory for the victim's secret.

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

/// Forks the attacker, which runs `attacker(down, up)` with the read end
/// of a pipe from this process and the write end of one to it: its pid,
/// and this process's other ends (down, up).
pub fn fork_attacker(attacker: fn(i64, i64) -> !) -> (i64, i64, i64) {
    let (down, up) = (pipe(), pipe());
    let pid = linux(libos::linux::nr::SYS_FORK, [0; 6]);
    if pid == 0 {
        close(down[1]);
        close(up[0]);
        attacker(down[0], up[1]);
    }
    close(down[0]);
    close(up[1]);
    (pid, down[1], up[0])
}
