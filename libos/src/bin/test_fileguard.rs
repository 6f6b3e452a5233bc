//! Boot test: an open file description is reachable only by the processes
//! that share it (issue 25, `obj::descpage`). Root opens a log file
//! `O_WRONLY|O_APPEND` and writes records to it. A process of user 1000,
//! forked before root opened the file (so it shares nothing with root's
//! description), looks for the description in every page of lxrt's
//! shared memory it maps (the arena, the description pages it inherited)
//! and, where it finds it, clears `O_APPEND`, sets the offset to 0 and
//! makes its reference count huge, so that root's next records would land
//! over its first ones and its close would never free it. Root's file
//! must come out exactly as written, and the attacker must have found
//! nothing.
#![no_std]
#![no_main]

use libos::linux::nr::{
    SYS_FORK, SYS_OPEN, SYS_READ, SYS_SETGID, SYS_SETUID, SYS_STAT, SYS_UNLINK, SYS_WRITE,
};
use libos::native::{self, linux};
use libos::obj::{File, Kind};
#[path = "hostile/kit.rs"]
mod kit;

use core::mem::offset_of;
use kit::{all_mapped, close, exit, read1, wait, write1};
use user::println;
use user::verdict::check;

const O_WRONLY: u64 = 1;
const O_CREAT: u64 = 0o100;
const O_TRUNC: u64 = 0o1000;
const O_APPEND: u32 = 0o2000;
const LOG: &[u8] = b"/tmp/fileguard.log";
/// Records root writes before and after the attack.
const HALF: usize = 100;
/// Every record's length: "record NNNN\n".
const RECORD: usize = 12;

/// What the attacker reports, one bit each: it found root's description,
/// it changed it, it could not find the log's inode.
const FOUND: u8 = 1;
const CHANGED: u8 = 2;
const NO_INODE: u8 = 4;

/// The log's path, on the stack (lxrt's checks know this program's stack,
/// not its read-only data).
fn path() -> [u8; 24] {
    let mut p = [0u8; 24];
    p[..LOG.len()].copy_from_slice(LOG);
    p
}

fn record(i: usize) -> [u8; RECORD] {
    let mut r = *b"record 0000\n";
    let mut n = i;
    for d in (7..11).rev() {
        r[d] = b'0' + (n % 10) as u8;
        n /= 10;
    }
    r
}

/// Every 8-byte-aligned place of `[at, at + len)` (mapped here) that looks
/// like an open description of inode `ino` with `O_APPEND` set, attacked:
/// what it did (`FOUND`, `CHANGED`).
fn attack_range(ino: u32, at: u64, len: u64) -> u8 {
    let size = size_of::<File>() as u64;
    let mut did = 0;
    let mut p = at;
    while p + size <= at + len {
        // SAFETY: the caller checked the pages are mapped; this is the
        // attack, each field read and written alone, by value.
        unsafe {
            let kind = ((p + offset_of!(File, kind) as u64) as *const u8).read();
            let ino_at = (p + offset_of!(File, ino) as u64) as *mut u32;
            let flags_at = (p + offset_of!(File, flags) as u64) as *mut u32;
            let refs_at = (p + offset_of!(File, refs) as u64) as *mut u32;
            let flags = flags_at.read();
            let refs = refs_at.read();
            if kind == Kind::Regular as u8
                && ino_at.read() == ino
                && flags & O_APPEND != 0
                && (1..16).contains(&refs)
            {
                did |= FOUND;
                flags_at.write(flags & !O_APPEND);
                ((p + offset_of!(File, off) as u64) as *mut u64).write(0);
                refs_at.write(1 << 30);
                did |= CHANGED;
            }
        }
        p += 8;
    }
    did
}

/// `attack_range` over every page lxrt shares that this process maps.
fn attack(ino: u32) -> u8 {
    let page = libos::layout::PAGE;
    let mut did = 0;
    for (from, to) in shared_windows() {
        let mut va = from;
        while va < to {
            if all_mapped(va, page) {
                did |= attack_range(ino, va, page);
            }
            va += page;
        }
    }
    did
}

/// Where lxrt keeps state shared between processes that a description may
/// be in: the arena.
fn shared_windows() -> [(u64, u64); 1] {
    [(libos::layout::SHARED, libos::layout::SHARED + libos::layout::SHARED_MAX)]
}

/// User 1000: waits for the word, then attacks root's description;
/// reports what it did on `up`.
fn attacker(down: i64, up: i64) -> ! {
    if linux(SYS_SETGID, [1000, 0, 0, 0, 0, 0]) != 0 || linux(SYS_SETUID, [1000, 0, 0, 0, 0, 0]) != 0 {
        exit(2);
    }
    write1(up, b'u');
    if read1(down) != b'g' {
        exit(3);
    }
    let p = path();
    let mut st = [0u64; 18];
    let mut found = 0;
    if linux(SYS_STAT, [p.as_ptr() as u64, st.as_mut_ptr() as u64, 0, 0, 0, 0]) != 0 {
        found |= NO_INODE;
    }
    found |= attack(st[1] as u32);
    write1(up, found);
    read1(down);
    exit(0);
}

/// Whether the log holds exactly the `2 * HALF` records, in order.
fn log_intact() -> bool {
    let p = path();
    let fd = linux(SYS_OPEN, [p.as_ptr() as u64, 0, 0, 0, 0, 0]);
    let mut all = [0u8; 2 * HALF * RECORD + 1];
    let mut n = 0;
    while n < all.len() {
        let r = linux(SYS_READ, [fd as u64, all[n..].as_mut_ptr() as u64, (all.len() - n) as u64, 0, 0, 0]);
        if r <= 0 {
            break;
        }
        n += r as usize;
    }
    close(fd);
    n == 2 * HALF * RECORD && (0..2 * HALF).all(|i| all[i * RECORD..(i + 1) * RECORD] == record(i))
}

/// Writes records `from..to` through `fd`: whether each went whole.
fn write_records(fd: i64, from: usize, to: usize) -> bool {
    (from..to).all(|i| {
        let r = record(i);
        linux(SYS_WRITE, [fd as u64, r.as_ptr() as u64, RECORD as u64, 0, 0, 0]) == RECORD as i64
    })
}

fn main(_: u64) -> i32 {
    if let Err(e) = native::init(libos::linux::syscall) {
        println!("test_fileguard: {e}");
        return 1;
    }
    let mut ok = true;
    let p = path();
    linux(SYS_UNLINK, [p.as_ptr() as u64, 0, 0, 0, 0, 0]);
    let (pid, down, up) = kit::fork_attacker(attacker);
    check(&mut ok, "the attacker became user 1000", read1(up) == b'u');

    let fd =
        linux(SYS_OPEN, [p.as_ptr() as u64, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND as u64, 0o600, 0, 0, 0]);
    check(&mut ok, "root opens its log", fd >= 0);
    check(&mut ok, "root writes the first half", write_records(fd, 0, HALF));
    // A child shares the description and appends too: sharing still works.
    let child = linux(SYS_FORK, [0; 6]);
    if child == 0 {
        exit(if write_records(fd, HALF, HALF + 1) { 0 } else { 1 });
    }
    check(&mut ok, "a child appended through the shared description", wait(child) == 0);

    write1(down, b'g');
    let found = read1(up);
    check(&mut ok, "the attacker ran", found != 0xff);
    check(&mut ok, "the attacker found the log's inode", found & NO_INODE == 0);
    check(&mut ok, "the attacker did not find root's description", found & FOUND == 0);
    check(&mut ok, "the attacker could not change it", found & CHANGED == 0);
    check(&mut ok, "root writes the second half", write_records(fd, HALF + 1, 2 * HALF));
    close(fd);
    check(&mut ok, "root's log holds exactly its records, in order", log_intact());
    write1(down, b'd');
    check(&mut ok, "user 1000 ended well", wait(pid) == 0);
    linux(SYS_UNLINK, [p.as_ptr() as u64, 0, 0, 0, 0, 0]);
    if ok {
        println!("file guard test passed");
        0
    } else {
        println!("file guard test FAILED");
        1
    }
}

user::entry!(main);
