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
//! nothing. The search is shown to work: it finds the description of a
//! file root opened before the fork, which the attacker shares. Last, a
//! process forked before root opened the log again receives that
//! description over `SCM_RIGHTS` and appends a record through it.
#![no_std]
#![no_main]

use libos::linux::nr::{
    SYS_FORK, SYS_OPEN, SYS_READ, SYS_RECVMSG, SYS_SENDMSG, SYS_SOCKETPAIR, SYS_STAT, SYS_UNLINK, SYS_WRITE,
};
use libos::native::{self, linux};
use libos::obj::{File, Kind};
#[path = "hostile/kit.rs"]
mod kit;

use core::mem::offset_of;
use kit::{close, exit, read1, wait, write1};
use user::println;
use user::verdict::check;

const O_WRONLY: u64 = 1;
const O_CREAT: u64 = 0o100;
const O_TRUNC: u64 = 0o1000;
const O_APPEND: u32 = 0o2000;
const LOG: &[u8] = b"/tmp/fileguard.log";
/// A file root opens (`O_APPEND`) before forking the attacker.
const SHARED_LOG: &[u8] = b"/tmp/fileguard.old";
/// Records root writes before and after the attack.
const HALF: usize = 100;
/// Every record's length: "record NNNN\n".
const RECORD: usize = 12;

/// What the attacker reports, one bit each: it found root's description,
/// it changed it, it could not find the log's inode.
const FOUND: u8 = 1;
const CHANGED: u8 = 2;
const NO_INODE: u8 = 4;
const FOUND_SHARED: u8 = 8;

/// A file's path, on the stack (lxrt's checks know this program's stack,
/// not its read-only data).
fn path(name: &[u8]) -> [u8; 24] {
    let mut p = [0u8; 24];
    p[..name.len()].copy_from_slice(name);
    p
}

/// The inode number of file `name`, 0 if `stat` fails.
fn ino_of(name: &[u8]) -> u32 {
    let p = path(name);
    let mut st = [0u64; 18];
    if linux(SYS_STAT, [p.as_ptr() as u64, st.as_mut_ptr() as u64, 0, 0, 0, 0]) != 0 {
        return 0;
    }
    st[1] as u32
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
/// like an open description of inode `ino` with `O_APPEND` set, attacked
/// if `change`: what it did (`FOUND`, `CHANGED`).
fn attack_range(ino: u32, at: u64, len: u64, change: bool) -> u8 {
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
                if !change {
                    p += 8;
                    continue;
                }
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

/// `attack_range` over every page this process maps where lxrt keeps
/// state a description may be in: the arena, and the description pages
/// it inherited (the descriptions root opened before the fork).
fn attack(ino: u32, change: bool) -> u8 {
    use libos::layout::{DESCS, DESCS_END, DESCS_HIGH, DESCS_HIGH_END, PAGE, SHARED, SHARED_MAX};
    let mut did = 0;
    for (from, to) in [(SHARED, SHARED + SHARED_MAX), (DESCS, DESCS_END), (DESCS_HIGH, DESCS_HIGH_END)] {
        let mut at = from;
        while let Some(va) = libos::selfmap::next_mapped(at, to) {
            did |= attack_range(ino, va, PAGE, change);
            at = va + PAGE;
        }
    }
    did
}

/// User 1000: waits for the word, then attacks root's description;
/// reports what it did on `up`.
fn attacker(down: i64, up: i64) -> ! {
    if read1(down) != b'g' {
        exit(3);
    }
    let (ino, shared) = (ino_of(LOG), ino_of(SHARED_LOG));
    let mut found = if ino == 0 || shared == 0 { NO_INODE } else { attack(ino, true) };
    if attack(shared, false) & FOUND != 0 {
        found |= FOUND_SHARED;
    }
    write1(up, found);
    read1(down);
    exit(0);
}

/// Records in the log at the end: two halves and the passed one's.
const ALL: usize = 2 * HALF + 1;

/// Whether the log holds exactly the `ALL` records, in order.
fn log_intact() -> bool {
    let p = path(LOG);
    let fd = linux(SYS_OPEN, [p.as_ptr() as u64, 0, 0, 0, 0, 0]);
    let mut all = [0u8; ALL * RECORD + 1];
    let mut n = 0;
    while n < all.len() {
        let r = linux(SYS_READ, [fd as u64, all[n..].as_mut_ptr() as u64, (all.len() - n) as u64, 0, 0, 0]);
        if r <= 0 {
            break;
        }
        n += r as usize;
    }
    close(fd);
    n == ALL * RECORD && (0..ALL).all(|i| all[i * RECORD..(i + 1) * RECORD] == record(i))
}

/// A `msghdr` with one byte of data and room for one descriptor's
/// `SCM_RIGHTS` message (`cmsg`: length, level, type, the descriptor).
fn rights_msg(byte: &mut [u8; 1], iov: &mut [u64; 2], cmsg: &mut [u64; 3]) -> [u64; 7] {
    *iov = [byte.as_mut_ptr() as u64, 1];
    [0, 0, iov.as_mut_ptr() as u64, 1, cmsg.as_mut_ptr() as u64, 20, 0]
}

/// Sends descriptor `fd` over socket `s` (`SOL_SOCKET`, `SCM_RIGHTS`).
fn send_fd(s: i64, fd: i64) -> bool {
    let (mut byte, mut iov, mut cmsg) = ([b'f'], [0; 2], [20, 1 | 1 << 32, fd as u64]);
    let msg = rights_msg(&mut byte, &mut iov, &mut cmsg);
    linux(SYS_SENDMSG, [s as u64, msg.as_ptr() as u64, 0, 0, 0, 0]) == 1
}

/// The descriptor that came over socket `s`, or -1.
fn recv_fd(s: i64) -> i64 {
    let (mut byte, mut iov, mut cmsg) = ([0], [0; 2], [0; 3]);
    let mut msg = rights_msg(&mut byte, &mut iov, &mut cmsg);
    let ok =
        linux(SYS_RECVMSG, [s as u64, msg.as_mut_ptr() as u64, 0, 0, 0, 0]) == 1 && cmsg[1] == 1 | 1 << 32;
    if ok {
        cmsg[2] as u32 as i64
    } else {
        -1
    }
}

/// A process forked now, before root opens the log again, receives that
/// description over a socket and appends the last record through it:
/// whether it did.
fn passed_append() -> bool {
    let mut sv = [0i32; 2];
    if linux(SYS_SOCKETPAIR, [1, 1, 0, sv.as_mut_ptr() as u64, 0, 0]) != 0 {
        return false;
    }
    let (a, b) = (sv[0] as i64, sv[1] as i64);
    let receiver = linux(SYS_FORK, [0; 6]);
    if receiver == 0 {
        close(a);
        let fd = recv_fd(b);
        exit(if fd >= 0 && write_records(fd, ALL - 1, ALL) { 0 } else { 1 });
    }
    close(b);
    let p = path(LOG);
    let fd = linux(SYS_OPEN, [p.as_ptr() as u64, O_WRONLY | O_APPEND as u64, 0, 0, 0, 0]);
    let sent = fd >= 0 && send_fd(a, fd);
    close(fd);
    close(a);
    wait(receiver) == 0 && sent
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
    let p = path(LOG);
    let old = path(SHARED_LOG);
    let creat = O_WRONLY | O_CREAT | O_TRUNC | O_APPEND as u64;
    let shared = linux(SYS_OPEN, [old.as_ptr() as u64, creat, 0o600, 0, 0, 0]);
    check(&mut ok, "root opens a file before the fork", shared >= 0);
    let (pid, down, up) = kit::fork_attacker(attacker);
    check(&mut ok, "the attacker became user 1000", read1(up) == b'u');

    let fd = linux(SYS_OPEN, [p.as_ptr() as u64, creat, 0o600, 0, 0, 0]);
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
    check(&mut ok, "the attacker found the logs' inodes", found & NO_INODE == 0);
    check(&mut ok, "the attacker found the description it shares", found & FOUND_SHARED != 0);
    check(&mut ok, "the attacker did not find root's description", found & FOUND == 0);
    check(&mut ok, "the attacker could not change it", found & CHANGED == 0);
    check(&mut ok, "root writes the second half", write_records(fd, HALF + 1, 2 * HALF));
    close(fd);
    check(
        &mut ok,
        "a description passed over SCM_RIGHTS is used by a process forked before",
        passed_append(),
    );
    check(&mut ok, "root's log holds exactly its records, in order", log_intact());
    write1(down, b'd');
    check(&mut ok, "user 1000 ended well", wait(pid) == 0);
    close(shared);
    linux(SYS_UNLINK, [p.as_ptr() as u64, 0, 0, 0, 0, 0]);
    linux(SYS_UNLINK, [old.as_ptr() as u64, 0, 0, 0, 0, 0]);
    kit::verdict("file guard", ok)
}

user::entry!(main);
