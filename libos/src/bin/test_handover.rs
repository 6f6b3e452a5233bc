//! Boot test: `hand_over` (issue 26), a pipe's write copied straight into
//! the buffer of a reader blocked on the empty ring. Root opens its own
//! hand-over record by hand and two children attack it: one forked before
//! the pipe existed (it holds no end, so maps none of its frames) and one
//! holding both ends. Refused, with nothing copied and the record left as
//! it was: a length of 0 or past the most, the caller itself, no such
//! environment, another pipe's key, a source the caller has not mapped, a
//! non-holder, a buffer its owner has unmapped (as a reader whose buffer
//! goes mid-call) or may not write, a record filled already or closed, an
//! ended owner. A holder's call fills it once. Then real pipes: messages
//! of 1 byte to 64 KiB echoed by a child reading 64 KiB at a time come
//! back exactly, in order, whether or not they were handed over (one copy)
//! or put through the ring.
#![no_std]
#![no_main]

use abi::exception::handover::{DONE, MAX, NONE, OPEN};
use abi::Error::{self, *};
use core::sync::atomic::Ordering;
use libos::linux::nr::{SYS_CLOSE, SYS_FORK, SYS_PIPE2, SYS_READ, SYS_WRITE};
use libos::native::{self, linux};
use user::verdict::Checks;
use user::{kinfo, println, sys};

static T: Checks = Checks::new("test_handover");

/// The record's buffer and what the holder copies into it.
const LEN: usize = 12_000;
/// Far from anything lxrt maps.
const NOWHERE: u64 = 0x3500_0000_0000;
/// `pipe2`'s flag.
const O_NONBLOCK: u64 = 0o4000;

fn pattern(i: usize) -> u8 {
    (i * 13 + 5) as u8
}

fn pipe() -> [i64; 2] {
    pipe_with(0)
}

/// A pipe with `pipe2` flags `flags`.
fn pipe_with(flags: u64) -> [i64; 2] {
    let mut p = [0i32; 2];
    let r = linux(SYS_PIPE2, [p.as_mut_ptr() as u64, flags, 0, 0, 0, 0]);
    assert_eq!(r, 0, "pipe2");
    [p[0] as i64, p[1] as i64]
}

fn fork() -> (i64, u64) {
    let pid = linux(SYS_FORK, [0; 6]);
    let env = if pid > 0 { libos::proc::pid::env(pid as u32).unwrap_or(0) as u64 } else { 0 };
    (pid, env)
}

fn ended(env: u64) -> Option<i32> {
    kinfo::env_by_id(env).filter(|e| e.state == abi::tables::env_state::EXITED).map(|e| e.exit_code)
}

/// Root's reads never wait in the library (a wait closes an open record):
/// its end is nonblocking, and it yields until `env` sends its byte or
/// ends.
fn await_byte(fd: i64, env: u64) -> bool {
    let mut b = [0u8; 1];
    loop {
        if linux(SYS_READ, [fd as u64, b.as_mut_ptr() as u64, 1, 0, 0, 0]) == 1 {
            return true;
        }
        if ended(env).is_some() || kinfo::env_by_id(env).is_none() {
            return false;
        }
        sys::yield_now();
    }
}

/// Writes `bytes` from the stack (lxrt takes buffers only from program
/// memory, not the library's own image, where a constant would be).
fn send(fd: i64, bytes: &[u8]) {
    let mut b = [0u8; 8];
    b[..bytes.len()].copy_from_slice(bytes);
    let b = core::hint::black_box(&b[..bytes.len()]);
    linux(SYS_WRITE, [fd as u64, b.as_ptr() as u64, b.len() as u64, 0, 0, 0]);
}

/// A short blocking read (never long enough to open a record).
fn receive(fd: i64, bytes: &mut [u8]) {
    linux(SYS_READ, [fd as u64, bytes.as_mut_ptr() as u64, bytes.len() as u64, 0, 0, 0]);
}

/// The key of the pipe behind descriptor `fd`: its frames' first page.
fn key_of(fd: i64) -> u64 {
    libos::obj::pipemem::base(libos::fd::get_raw(fd).expect("fd").file.addr())
}

/// Opens this thread's record for `len` bytes at `dst`.
fn open(key: u64, dst: u64, len: u64) {
    let h = libos::entry::handover();
    h.key.store(key, Ordering::Relaxed);
    h.dst.store(dst, Ordering::Relaxed);
    h.len.store(len, Ordering::Relaxed);
    h.state.store(OPEN, Ordering::Release);
}

fn state() -> (u64, u64) {
    let h = libos::entry::handover();
    (h.state.load(Ordering::Acquire), h.len.load(Ordering::Relaxed))
}

/// The child forked before the pipe: it maps none of its frames. The key
/// comes down `go`.
fn outsider(root: u64, go: i64) -> ! {
    let src = [7u8; 64];
    let mut key = [0u8; 8];
    receive(go, &mut key);
    let r = sys::hand_over(root, src.as_ptr() as u64, 64, u64::from_le_bytes(key));
    sys::exit(if r == Err(NotPermitted) { 0 } else { 1 });
}

/// The holder: one step per word root publishes, its answers checked here
/// (its exit status: how many were wrong).
fn holder(root: u64, key: u64, other_key: u64, ctl: i64, ack: i64) -> ! {
    let mut src = [0u8; LEN + 500];
    for (i, b) in src.iter_mut().enumerate() {
        *b = pattern(i);
    }
    let s = src.as_ptr() as u64;
    let me = sys::self_id();
    let mut wrong = 0;
    let mut want = |what: &str, got: Result<u64, Error>, w: Result<u64, Error>| {
        if got != w {
            println!("test_handover: holder: {what}: got {got:?}, want {w:?}");
            wrong += 1;
        }
    };
    let step = || {
        send(ack, &[1]);
        receive(ctl, &mut [0]);
    };
    step();
    // Root's record is open for LEN bytes at a good buffer.
    want("no bytes", sys::hand_over(root, s, 0, key), Err(BadLength));
    want("past the most", sys::hand_over(root, s, MAX + 1, key), Err(BadLength));
    want("itself", sys::hand_over(me, s, 64, key), Err(NotPermitted));
    want("no such environment", sys::hand_over(999_999, s, 64, key), Err(BadEnv));
    want("another pipe's key", sys::hand_over(root, s, 64, other_key), Err(BadState));
    want("an unmapped source", sys::hand_over(root, NOWHERE, 64, key), Err(BadPointer));
    want("a source running off the map", sys::hand_over(root, NOWHERE - 32, 64, key), Err(BadPointer));
    want("the holder fills it", sys::hand_over(root, s, src.len() as u64, key), Ok(LEN as u64));
    want("once", sys::hand_over(root, s, 64, key), Err(BadState));
    step();
    // Root's record names a buffer it has not mapped.
    want("an unmapped buffer", sys::hand_over(root, s, 64, key), Err(BadPointer));
    step();
    // Its buffer is its code: readable, not writable.
    want("a read-only buffer", sys::hand_over(root, s, 64, key), Err(BadPointer));
    step();
    // Closed.
    want("a closed record", sys::hand_over(root, s, 64, key), Err(BadState));
    send(ack, &[1]);
    sys::exit(wrong);
}

/// The echo child of the pipe part: reads up to 64 KiB at a time.
fn echo(from: i64, to: i64) -> ! {
    let mut buf = [0u8; 65536];
    loop {
        let n = linux(SYS_READ, [from as u64, buf.as_mut_ptr() as u64, buf.len() as u64, 0, 0, 0]);
        if n <= 0 {
            sys::exit(if n == 0 { 0 } else { 2 });
        }
        if linux(SYS_WRITE, [to as u64, buf.as_ptr() as u64, n as u64, 0, 0, 0]) != n {
            sys::exit(3);
        }
    }
}

fn calls(root: u64) {
    let go = pipe();
    let (pid, outsider_env) = fork();
    if pid == 0 {
        outsider(root, go[0]);
    }
    let p = pipe();
    let q = pipe();
    let ctl = pipe();
    let ack = pipe_with(O_NONBLOCK);
    let (key, other_key) = (key_of(p[0]), key_of(q[0]));
    let (pid, holder_env) = fork();
    if pid == 0 {
        holder(root, key, other_key, ctl[0], ack[1]);
    }
    T.check("forks", outsider_env != 0 && holder_env != 0);
    let mut buf = [0u8; LEN];
    open(key, buf.as_mut_ptr() as u64, LEN as u64);
    send(go[1], &key.to_le_bytes());
    while ended(outsider_env).is_none() {
        sys::yield_now();
    }
    T.check("a process without the pipe is refused", ended(outsider_env) == Some(0));
    T.check("and left the record open", state() == (OPEN, LEN as u64));
    T.check("and the buffer untouched", buf.iter().all(|&b| b == 0));

    T.check("the holder is ready", await_byte(ack[0], holder_env));
    send(ctl[1], &[1]);
    T.check("the holder's first calls", await_byte(ack[0], holder_env));
    T.check("filled once, with the count", state() == (DONE, LEN as u64));
    T.check("every byte", buf.iter().enumerate().all(|(i, &b)| b == pattern(i)));

    open(key, NOWHERE, LEN as u64);
    send(ctl[1], &[1]);
    T.check("the unmapped buffer's call", await_byte(ack[0], holder_env));
    T.check("the unmapped buffer's record left open", state() == (OPEN, LEN as u64));

    open(key, main as *const () as u64, 64);
    send(ctl[1], &[1]);
    T.check("the read-only buffer's call", await_byte(ack[0], holder_env));
    T.check("the read-only buffer's record left open", state() == (OPEN, 64));

    libos::entry::handover().state.store(NONE, Ordering::Release);
    send(ctl[1], &[1]);
    T.check("the closed record's call", await_byte(ack[0], holder_env));
    while ended(holder_env).is_none() {
        sys::yield_now();
    }
    T.check("every refusal as it should be", ended(holder_env) == Some(0));
    let src = [1u8; 64];
    let gone = sys::hand_over(holder_env, src.as_ptr() as u64, 64, key);
    T.check("an ended owner is refused", gone == Err(BadState) || gone == Err(BadEnv));
    for fd in [go, p, q, ctl, ack].into_iter().flatten() {
        linux(SYS_CLOSE, [fd as u64, 0, 0, 0, 0, 0]);
    }
}

/// Message `i`'s length: 1 byte to 64 KiB, mostly long.
fn msg_len(i: usize) -> usize {
    [8192, 65536, 4096, 1, 20_000, 5000, 65535, 300, 12_288][i % 9]
}

fn pipes() {
    let down = pipe();
    let up = pipe();
    let (pid, echo_env) = fork();
    if pid == 0 {
        linux(SYS_CLOSE, [down[1] as u64, 0, 0, 0, 0, 0]);
        linux(SYS_CLOSE, [up[0] as u64, 0, 0, 0, 0, 0]);
        echo(down[0], up[1]);
    }
    linux(SYS_CLOSE, [down[0] as u64, 0, 0, 0, 0, 0]);
    linux(SYS_CLOSE, [up[1] as u64, 0, 0, 0, 0, 0]);
    let before = libos::obj::handover::given_count();
    let mut msg = [0u8; 65536];
    let mut back = [0u8; 65536];
    let mut same = true;
    for i in 0..90 {
        let n = msg_len(i);
        for (j, b) in msg[..n].iter_mut().enumerate() {
            *b = (i * 31 + j * 7) as u8;
        }
        let w = linux(SYS_WRITE, [down[1] as u64, msg.as_ptr() as u64, n as u64, 0, 0, 0]);
        let mut got = 0;
        while w == n as i64 && got < n {
            let r =
                linux(SYS_READ, [up[0] as u64, back[got..].as_mut_ptr() as u64, (n - got) as u64, 0, 0, 0]);
            if r <= 0 {
                break;
            }
            got += r as usize;
        }
        if got != n || back[..n] != msg[..n] {
            println!("test_handover: message {i} of {n} bytes came back wrong ({got})");
            same = false;
            break;
        }
    }
    T.check("every message came back exactly, in order", same);
    let given = libos::obj::handover::given_count() - before;
    // How many went by hand-over depends on scheduling (the record is open
    // only while the reader yields to the writer, not while it sleeps):
    // reported, not checked; `calls` checks the call itself.
    println!("test_handover: {given} writes handed over");
    linux(SYS_CLOSE, [down[1] as u64, 0, 0, 0, 0, 0]);
    while ended(echo_env).is_none() {
        sys::yield_now();
    }
    T.check("the echo child saw the end", ended(echo_env) == Some(0));
    linux(SYS_CLOSE, [up[0] as u64, 0, 0, 0, 0, 0]);
}

fn main(_: u64) -> i32 {
    if let Err(e) = native::init(libos::linux::syscall) {
        println!("test_handover: {e}");
        return 1;
    }
    calls(sys::self_id());
    pipes();
    T.verdict()
}

user::entry!(main);
