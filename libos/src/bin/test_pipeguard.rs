//! Boot test: a pipe is reachable only by the processes holding an end
//! of it (issue 25; paper 000 §3.3 software regions, §5.2 ExOS's
//! protected pipes). Root makes two pipes and a child that echoes what
//! comes down one back up the other. A process of user 1000, forked from
//! root (so it inherited the ends and the pipes' addresses and frames),
//! closes its ends and then attacks: it writes random words over every
//! page of the shared arena it can write and over the pipes' old pages if
//! it still can, and tries to map the pipes' frames back by name with
//! every capability it holds: eight passes before the exchange starts,
//! then on and on all through it. Root's pipes must still deliver
//! exactly the bytes written, in order. (Before the pipes had frames of
//! their own, the rings were in the arena and the first pass changed or
//! crashed them.)
#![no_std]
#![no_main]

use abi::syscall::{map as mf, CRED_SELF, ENV_SELF};
use libos::layout::{PAGE, SHARED, SHARED_MAX};
use libos::linux::nr::{SYS_CLOSE, SYS_FORK, SYS_PIPE2, SYS_READ, SYS_SETGID, SYS_SETUID, SYS_WRITE};
use libos::native::{self, linux};
use user::rng::Rng;
use user::verdict::check;
use user::{kinfo, println, sys};

const ROUNDS: usize = 200;

/// Message `i`'s length and its byte `j`.
fn len(i: usize) -> usize {
    (i * 397) % 3000 + 1
}
fn byte(i: usize, j: usize) -> u8 {
    (i * 31 + j * 7 + 3) as u8
}

fn read_exact(fd: i64, buf: &mut [u8]) -> bool {
    let mut got = 0;
    while got < buf.len() {
        let r =
            linux(SYS_READ, [fd as u64, buf[got..].as_mut_ptr() as u64, (buf.len() - got) as u64, 0, 0, 0]);
        if r <= 0 {
            return false;
        }
        got += r as usize;
    }
    true
}

fn write_all(fd: i64, buf: &[u8]) -> bool {
    linux(SYS_WRITE, [fd as u64, buf.as_ptr() as u64, buf.len() as u64, 0, 0, 0]) == buf.len() as i64
}

fn close(fd: i64) {
    linux(SYS_CLOSE, [fd as u64, 0, 0, 0, 0, 0]);
}

/// The pages (address, frame) behind the descriptions of `fds`, as this
/// process has them mapped now.
fn pages_of(fds: &[i64]) -> [(u64, u64); 4] {
    let mut out = [(0, 0); 4];
    for (o, &fd) in out.iter_mut().zip(fds) {
        if let Ok(d) = libos::fd::get_raw(fd) {
            let va = d.file.addr() & !(PAGE - 1);
            *o = (va, libos::selfmap::pte(va).map_or(0, abi::pte::frame_of));
        }
    }
    out
}

fn scribble_page(va: u64, rng: &mut Rng) {
    if libos::selfmap::pte(va).is_some_and(|e| e & abi::pte::WRITABLE != 0) {
        for w in 0..PAGE / 8 {
            // SAFETY: the attack: a page this process has mapped writable.
            unsafe { core::ptr::write_volatile((va + w * 8) as *mut u64, rng.next_u64()) };
        }
    }
}

/// What the attacker shows in its environment's published word once its
/// first passes are done (a library call would run over what it wrote).
const READY: u64 = 0x5ca1_ab1e;
const FIRST_PASSES: u64 = 8;

/// The attacker: drops its ends, becomes user 1000, and from then on makes
/// no library call (it would run over what it wrote); it runs until root
/// ends it.
fn attacker(fds: &[i64], seed: u64) -> ! {
    let pages = pages_of(fds);
    for &fd in fds {
        close(fd);
    }
    if linux(SYS_SETGID, [1000, 0, 0, 0, 0, 0]) != 0 || linux(SYS_SETUID, [1000, 0, 0, 0, 0, 0]) != 0 {
        sys::exit(3);
    }
    // lxrt's handler would run over what we write at our next slice.
    let _ = sys::slice_upcalls(ENV_SELF, false);
    let arena = libos::shared::cred();
    let mut rng = Rng::new(seed);
    let mut pass = 0;
    loop {
        for va in (SHARED..SHARED + SHARED_MAX).step_by(PAGE as usize) {
            scribble_page(va, &mut rng);
        }
        for &(va, frame) in &pages {
            if va == 0 || frame == 0 {
                continue;
            }
            for cred in [CRED_SELF, arena] {
                let _ = sys::map_with(ENV_SELF, va, frame, mf::WRITE, CRED_SELF, cred);
            }
            scribble_page(va, &mut rng);
        }
        pass += 1;
        if pass == FIRST_PASSES {
            let _ = sys::env_publish(ENV_SELF, READY);
        }
    }
}

/// The echo child: sends every message back.
fn echo(from: i64, to: i64) -> ! {
    let mut buf = [0u8; 3000];
    for i in 0..ROUNDS {
        let b = &mut buf[..len(i)];
        if !read_exact(from, b) || !write_all(to, b) {
            sys::exit(2);
        }
    }
    sys::exit(0);
}

fn pipe() -> [i64; 2] {
    let mut p = [0i32; 2];
    let r = linux(SYS_PIPE2, [p.as_mut_ptr() as u64, 0, 0, 0, 0, 0]);
    if r != 0 {
        println!("test_pipeguard: pipe2: {r}");
        sys::exit(1);
    }
    [p[0] as i64, p[1] as i64]
}

fn fork() -> (i64, u64) {
    let pid = linux(SYS_FORK, [0; 6]);
    let env = if pid > 0 { libos::proc::pid::env(pid as u32).unwrap_or(0) as u64 } else { 0 };
    (pid, env)
}

/// Whether the attacker is alive and past its first passes.
fn attacking(env: u64) -> bool {
    ended(env).is_none() && kinfo::env_by_id(env).is_some_and(|e| e.published == READY)
}

fn ended(env: u64) -> Option<i32> {
    kinfo::env_by_id(env).filter(|e| e.state == abi::tables::env_state::EXITED).map(|e| e.exit_code)
}

fn main(_: u64) -> i32 {
    if let Err(e) = native::init(libos::linux::syscall) {
        println!("test_pipeguard: {e}");
        return 1;
    }
    let down = pipe();
    let up = pipe();
    let mut ok = true;
    let (pid, echo_env) = fork();
    if pid == 0 {
        close(down[1]);
        close(up[0]);
        echo(down[0], up[1]);
    }
    close(down[0]);
    close(up[1]);
    let (pid, attack) = fork();
    if pid == 0 {
        attacker(&[down[1], up[0]], 0x9e37_79b9_7f4a_7c15);
    }
    check(&mut ok, "forks", echo_env != 0 && attack != 0);
    // Its first passes are all done before a byte is sent.
    while ended(attack).is_none() && !attacking(attack) {
        sys::yield_now();
    }
    check(&mut ok, "the attacker ran its first passes", attacking(attack));
    println!("test_pipeguard: the arena was overwritten; sending");
    let mut msg = [0u8; 3000];
    let mut back = [0u8; 3000];
    let mut same = true;
    for i in 0..ROUNDS {
        let n = len(i);
        for (j, b) in msg[..n].iter_mut().enumerate() {
            *b = byte(i, j);
        }
        if !write_all(down[1], &msg[..n]) || !read_exact(up[0], &mut back[..n]) || back[..n] != msg[..n] {
            println!("test_pipeguard: message {i} of {n} bytes came back wrong");
            same = false;
            break;
        }
    }
    check(&mut ok, "every message came back exactly, in order", same);
    check(&mut ok, "the attacker was at it all along", attacking(attack));
    let _ = sys::env_destroy(attack);
    while ended(echo_env).is_none() {
        sys::yield_now();
    }
    check(&mut ok, "the echo child read and wrote them all", ended(echo_env) == Some(0));
    if ok {
        println!("pipe guard test passed");
        0
    } else {
        1
    }
}

user::entry!(main);
