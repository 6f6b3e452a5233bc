//! Boot test: a System V message queue's messages and a semaphore set's
//! values are reachable only by the users their `ipc_perm` admits (issue
//! 25, `linux::ipc`). Root makes a 0600 queue with a secret message in it
//! and a 0600 set of four semaphores with values of its choosing. A
//! process of user 1000 is refused `msgget`, `msgrcv`, `msgsnd`, `semop`
//! and `semctl` (EACCES), then goes around the calls: it looks for the
//! message and the values in every page of the shared arena it maps and
//! overwrites them; and it tries each object's frame range with the
//! ticket the arena keeps beside the key (claim it, map the frames by
//! name, or with the ticket as lxrt does). Root must receive its exact
//! message and read its exact values. Then `IPC_SET` must reach the rule:
//! user 1000 sends to root's 0666 queue, which root then makes 0600 and
//! sends a second secret to; user 1000 is refused, and the frames it had
//! mapped before no longer hold the queue. (User 1000 posts root's 0666
//! semaphore, and sends to that queue while it is 0666.)
#![no_std]
#![no_main]

use libos::linux::nr::{SYS_MSGCTL, SYS_MSGGET, SYS_MSGRCV, SYS_MSGSND, SYS_SEMCTL, SYS_SEMGET, SYS_SEMOP};
use libos::native::{self, linux};
#[path = "hostile/kit.rs"]
mod kit;

use kit::{exit, read1, wait, write1, MAPPED, SAW, WROTE};
use libos::linux::{ipc, ipcmsg, ipcsem};
use user::println;
use user::verdict::check;

const IPC_CREAT: u64 = 0o1000;
const IPC_NOWAIT: u64 = 0o4000;
const IPC_RMID: u64 = 0;
const IPC_SET: u64 = 1;
const IPC_STAT: u64 = 2;
const GETALL: u64 = 13;
const SETALL: u64 = 17;
const SETVAL: u64 = 16;
const GETVAL: u64 = 12;
const EACCES: i64 = -13;
const SECRET: &[u8; 16] = b"root-secret-0123";
const SECRET2: &[u8; 16] = b"root-secret-4567";
const QKEY: u64 = 0x5e_c0_01;
const SKEY: u64 = 0x5e_c0_02;
/// Root's queue that anyone may use, until root makes it 0600.
const OPEN_KEY: u64 = 0x5e_c0_03;
/// Root's semaphore set that anyone may use.
const OPEN_SKEY: u64 = 0x5e_c0_04;
/// Root's semaphores' values: none is a value lxrt or a program would
/// leave lying about.
const VALUES: [u16; 4] = [12345, 23456, 31234, 7777];
const MTYPE: i64 = 5;

/// What the attacker reports, one bit each (beside `SAW` and `WROTE`, and
/// those shifted by 2 for the values).
const GOT_ID: u8 = 32;
const CALLED: u8 = 16;
const CLAIMED: u8 = 64;
const REACHED: u8 = 128;

/// A message as `msgsnd` and `msgrcv` take it.
#[repr(C)]
struct Msg {
    mtype: i64,
    text: [u8; 32],
}

fn msgget(key: u64, flags: u64) -> i64 {
    linux(SYS_MSGGET, [key, flags, 0, 0, 0, 0])
}

fn msgsnd(q: i64, mtype: i64, text: &[u8]) -> i64 {
    let mut m = Msg { mtype, text: [0; 32] };
    m.text[..text.len()].copy_from_slice(text);
    linux(SYS_MSGSND, [q as u64, &raw const m as u64, text.len() as u64, IPC_NOWAIT, 0, 0])
}

/// `msgrcv` of the first message, not waiting: its length and message.
fn msgrcv(q: i64) -> (i64, Msg) {
    let mut m = Msg { mtype: 0, text: [0; 32] };
    let n = linux(SYS_MSGRCV, [q as u64, &raw mut m as u64, 32, 0, IPC_NOWAIT, 0]);
    (n, m)
}

fn semget(key: u64, n: u64, flags: u64) -> i64 {
    linux(SYS_SEMGET, [key, n, flags, 0, 0, 0])
}

fn semctl(s: i64, num: u64, cmd: u64, arg: u64) -> i64 {
    linux(SYS_SEMCTL, [s as u64, num, cmd, arg, 0, 0])
}

/// `semop` of one operation on semaphore `num`, not waiting.
fn semop(s: i64, num: u16, op: i16) -> i64 {
    let sop: [i16; 3] = [num as i16, op, IPC_NOWAIT as i16];
    linux(SYS_SEMOP, [s as u64, sop.as_ptr() as u64, 1, 0, 0, 0])
}

fn getall(s: i64) -> [u16; 4] {
    let mut v = [0u16; 4];
    semctl(s, 0, GETALL, v.as_mut_ptr() as u64);
    v
}

/// Looks for root's semaphore values (as lxrt keeps them: 32-bit values
/// 16 bytes apart) in every page of the arena this process maps, and
/// overwrites each find: what it did (`SAW`, `WROTE`).
fn scrawl_values() -> u8 {
    let page = libos::layout::PAGE;
    let arena = libos::layout::SHARED..libos::layout::SHARED + libos::layout::SHARED_MAX;
    let mut did = 0;
    for va in arena.step_by(page as usize).filter(|&va| kit::all_mapped(va, 2 * page)) {
        for at in (va..va + page).step_by(4) {
            // SAFETY: the attack: two mapped pages of the arena, read and
            // written as 32-bit words.
            let word = |i: u64| unsafe { &mut *((at + 16 * i) as *mut u32) };
            if (0..2).all(|i| *word(i) == u32::from(VALUES[i as usize])) {
                (0..4).for_each(|i| *word(i) = 1);
                did |= SAW | WROTE;
            }
        }
    }
    did
}

/// User 1000: waits for the word, then attacks root's queue and set;
/// reports what it got on `up`.
fn attacker(down: i64, up: i64) -> ! {
    if read1(down) != b'g' {
        exit(3);
    }
    // The calls: an id may be had (Linux checks nothing for no access
    // asked), but no access with it.
    let mut found = 0;
    let (q, s) = (msgget(QKEY, 0), semget(SKEY, 0, 0));
    if q < 0 || s < 0 {
        found |= GOT_ID;
    }
    let refused = msgget(QKEY, 0o600) == EACCES
        && semget(SKEY, 0, 0o600) == EACCES
        && msgrcv(q).0 == EACCES
        && msgsnd(q, 1, b"forged") == EACCES
        && semop(s, 0, 1) == EACCES
        && semctl(s, 0, GETVAL, 0) == EACCES
        && semctl(s, 0, SETVAL, 1) == EACCES;
    if !refused {
        found |= CALLED;
    }
    // Around the calls: the arena, every page of it this process maps.
    found |= kit::scrawl_arena(SECRET);
    found |= scrawl_values() << 2;
    // The frames, where the arena says they are.
    found |= range_attack(ipcmsg::table(), q, SECRET) | range_attack(ipcsem::table(), s, SECRET);
    let open_q = msgget(OPEN_KEY, 0);
    if msgsnd(open_q, 1, b"hello") != 0 || semop(semget(OPEN_SKEY, 0, 0), 0, 1) != 0 {
        found |= GOT_ID;
    }
    let before = place(ipcmsg::table(), open_q).0;
    write1(up, found);
    // Root has made its open queue 0600 and sent its second secret there.
    if read1(down) != b'h' {
        exit(3);
    }
    // The frames it mapped while it was allowed (before any call, which
    // would let them go), then the new ones, then the calls.
    let mut after = 0;
    if kit::all_mapped(before, libos::layout::PAGE) {
        after |= kit::scrawl(SECRET2, before, ipc::MAX_PAGES * libos::layout::PAGE);
    }
    after |= range_attack(ipcmsg::table(), open_q, SECRET2);
    if msgrcv(open_q).0 != EACCES || msgsnd(open_q, 1, b"forged") != EACCES {
        after |= CALLED;
    }
    write1(up, after);
    exit(0);
}

/// Where the arena says object `id` of `t` is: its frames' address and
/// the range's ticket.
fn place(t: Result<&'static mut ipc::Table, libos::errno::Errno>, id: i64) -> (u64, u64) {
    let Ok(t) = t else { return (0, 0) };
    let s = &t.slots[(id as u64 % 32768) as usize % ipc::SLOTS];
    (s.at, s.ticket)
}

/// Object `id`'s frames, where the arena names them with the range's
/// ticket beside: claim the range with that ticket or forged ones, map
/// the frames by name with each capability this process holds for the
/// purpose, or with the ticket as lxrt does; what any of it got
/// (`CLAIMED`, `REACHED` for any page mapped, and what `scrawl` did for
/// `secret` in them).
fn range_attack(t: Result<&'static mut ipc::Table, libos::errno::Errno>, id: i64, secret: &[u8]) -> u8 {
    let (at, ticket) = place(t, id);
    if !libos::obj::pipemem::guarded(at) {
        return 0;
    }
    let mut found = if kit::claims(ticket) { CLAIMED } else { 0 };
    kit::map_by_name(at);
    let _ = libos::obj::pipemem::claim(at, ticket, ipc::MAX_PAGES);
    let _ = libos::obj::pipemem::claim(at, ticket, 1);
    let page = libos::layout::PAGE;
    if kit::reached(secret, at) & MAPPED != 0 || libos::selfmap::pte(at).is_some() {
        found |= REACHED;
    }
    if kit::all_mapped(at, page) {
        found |= kit::scrawl(secret, at, page);
    }
    found
}

fn main(_: u64) -> i32 {
    if let Err(e) = native::init(libos::linux::syscall) {
        println!("test_sysvguard: {e}");
        return 1;
    }
    let mut ok = true;
    // Left by an earlier run, if any.
    for q in [msgget(QKEY, 0), msgget(OPEN_KEY, 0)] {
        linux(SYS_MSGCTL, [q as u64, IPC_RMID, 0, 0, 0, 0]);
    }
    for s in [semget(SKEY, 0, 0), semget(OPEN_SKEY, 0, 0)] {
        semctl(s, 0, IPC_RMID, 0);
    }
    let (pid, down, up) = kit::fork_attacker(attacker);
    check(&mut ok, "the attacker became user 1000", read1(up) == b'u');

    let q = msgget(QKEY, IPC_CREAT | 0o600);
    check(&mut ok, "root makes its queue", q >= 0);
    check(&mut ok, "root sends its secret", msgsnd(q, MTYPE, SECRET) == 0);
    let s = semget(SKEY, 4, IPC_CREAT | 0o600);
    check(&mut ok, "root makes its semaphores", s >= 0);
    // On the stack: lxrt's checks know this program's stack, not its
    // read-only data.
    let values = VALUES;
    check(&mut ok, "root sets their values", semctl(s, 0, SETALL, values.as_ptr() as u64) == 0);

    let open_q = msgget(OPEN_KEY, IPC_CREAT | 0o666);
    let open_s = semget(OPEN_SKEY, 1, IPC_CREAT | 0o666);
    check(&mut ok, "root makes a queue and a semaphore anyone may use", open_q >= 0 && open_s >= 0);
    write1(down, b'g');
    let found = read1(up);
    check(&mut ok, "the attacker ran", found != 0xff);
    check(
        &mut ok,
        "the attacker had the ids (no access asked), sent to the open queue and posted the open semaphore",
        found & GOT_ID == 0,
    );
    check(&mut ok, "root sees the post", semctl(open_s, 0, GETVAL, 0) == 1);
    semctl(open_s, 0, IPC_RMID, 0);
    check(&mut ok, "the attacker was refused every call (EACCES)", found & CALLED == 0);
    check(&mut ok, "the attacker did not see the message", found & SAW == 0);
    check(&mut ok, "the attacker could not write the message", found & WROTE == 0);
    check(&mut ok, "the attacker did not see the values", found & SAW << 2 == 0);
    check(&mut ok, "the attacker could not write the values", found & WROTE << 2 == 0);
    check(&mut ok, "the attacker could not claim the ranges", found & CLAIMED == 0);
    check(&mut ok, "the attacker could not map the frames", found & REACHED == 0);
    let (n, m) = msgrcv(q);
    check(&mut ok, "root receives its exact message", n == 16 && m.mtype == MTYPE && m.text[..16] == *SECRET);
    check(&mut ok, "root reads its exact values", getall(s) == VALUES);

    // IPC_SET reaches the rule.
    let mut ds = [0u8; 120];
    let stat = linux(SYS_MSGCTL, [open_q as u64, IPC_STAT, ds.as_mut_ptr() as u64, 0, 0, 0]);
    // ipc64_perm's mode is at byte 20.
    ds[20..24].copy_from_slice(&0o600u32.to_ne_bytes());
    let set = linux(SYS_MSGCTL, [open_q as u64, IPC_SET, ds.as_ptr() as u64, 0, 0, 0]);
    check(&mut ok, "root makes its open queue 0600", stat == 0 && set == 0);
    check(&mut ok, "root sends a second secret there", msgsnd(open_q, MTYPE, SECRET2) == 0);
    write1(down, b'h');
    let after = read1(up);
    check(&mut ok, "user 1000 is refused the queue now (EACCES)", after & CALLED == 0);
    check(&mut ok, "its old mapping no longer holds the queue", after & (SAW | WROTE) == 0);
    check(&mut ok, "nor can it claim or map the new frames", after & (CLAIMED | REACHED) == 0);
    check(&mut ok, "user 1000 ended well", wait(pid) == 0);
    let (n, m) = msgrcv(open_q);
    check(&mut ok, "root receives user 1000's message", n == 5 && m.text[..5] == *b"hello");
    let (n, m) = msgrcv(open_q);
    check(&mut ok, "root receives its second secret unchanged", n == 16 && m.text[..16] == *SECRET2);
    linux(SYS_MSGCTL, [open_q as u64, IPC_RMID, 0, 0, 0, 0]);

    linux(SYS_MSGCTL, [q as u64, IPC_RMID, 0, 0, 0, 0]);
    semctl(s, 0, IPC_RMID, 0);
    if ok {
        println!("sysv guard test passed");
        0
    } else {
        println!("sysv guard test FAILED");
        1
    }
}

user::entry!(main);
