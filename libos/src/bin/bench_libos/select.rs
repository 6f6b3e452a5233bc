//! Paper 002's Figure 8 (§4.6.12, §5.1): processes ping-pong messages
//! through their own `cat`, calling `native::select` before every read (A)
//! or reading at once (B).

use super::procs::{close, exit, fork, pipe, transfer, wait_status};
use super::rdtsc;
use libos::linux::nr::SYS_NANOSLEEP;
use libos::native::{self, linux};

/// Processes that each ping-pong through their own `cat`.
pub const WORKERS: u64 = 5;

/// An external `cat`: copies `from` to `to` until end of file.
fn cat(from: i64, to: i64) {
    let mut buf = [0u8; 4096];
    loop {
        let n = native::read(from, &mut buf);
        if n <= 0 {
            return;
        }
        transfer(to, &mut buf[..n as usize], true);
    }
}

/// Waits until `fd` is readable (select with one descriptor, no timeout).
fn select_read(fd: i64) {
    let mut set = [1u64 << fd];
    let r = native::select(fd as usize + 1, &mut set, &mut [], None);
    assert!(r == 1 && set[0] == 1 << fd, "select: {r}");
}

/// One process of Figure 8: `per` 200-byte then `per` 5-byte messages to
/// its own cat and back. Exit status 0, or 1 if waiting installed more
/// than two predicates (the fast path must install nothing): one over the
/// reply ring (select, and a blocked read, sleep on it) and one for
/// waiting for the child (`wait4` sleeps on the empty one).
fn through_cat(per: u64, use_select: bool) -> u64 {
    let (to_r, to_w) = pipe();
    let (from_r, from_w) = pipe();
    let pid = fork();
    if pid == 0 {
        close(&[to_w, from_r]);
        cat(to_r, from_w);
        close(&[to_r, from_w]);
        exit(0);
    }
    close(&[to_r, from_w]);
    let mut buf = [7u8; 200];
    for size in [200, 5] {
        for _ in 0..per {
            transfer(to_w, &mut buf[..size], true);
            if use_select {
                select_read(from_r);
            }
            transfer(from_r, &mut buf[..size], false);
        }
    }
    close(&[to_w]);
    let cat_status = wait_status(pid);
    close(&[from_r]);
    (cat_status != 0 || libos::predicate::installs() > 2) as u64
}

/// Figure 8: n counts round trips over all five processes.
pub fn select_experiment(n: u64, use_select: bool) -> Result<u64, &'static str> {
    let per = (n / (2 * WORKERS)).max(1);
    let mut pids = [0i64; WORKERS as usize];
    let t = rdtsc();
    for p in pids.iter_mut() {
        *p = fork();
        if *p == 0 {
            exit(through_cat(per, use_select));
        }
    }
    let failed = pids.iter().any(|&p| wait_status(p) != 0);
    let total = rdtsc() - t;
    if failed {
        Err("a process failed (or installed more than two predicates)")
    } else {
        Ok(total)
    }
}

/// Before timing select: a wait on an empty pipe times out no earlier
/// than asked, and a wait ends when another process writes; both sleep on
/// one predicate, installed once.
pub fn select_check() -> Result<(), &'static str> {
    let (r, w) = pipe();
    let mut set = [1u64 << r];
    let before = libos::predicate::installs();
    let t = libos::time::now_ns();
    let got = native::select(r as usize + 1, &mut set, &mut [], Some(20_000_000));
    if got != 0 || set[0] != 0 || libos::time::now_ns() - t < 20_000_000 {
        return Err("select on an empty pipe did not time out after 20 ms");
    }
    let pid = fork();
    if pid == 0 {
        let pause = [0i64, 30_000_000];
        linux(SYS_NANOSLEEP, [&raw const pause as u64, 0, 0, 0, 0, 0]);
        transfer(w, &mut [1], true);
        exit(0);
    }
    set = [1u64 << r];
    let got = native::select(r as usize + 1, &mut set, &mut [], Some(5_000_000_000));
    // Both waits slept on the same predicate, installed by the first.
    let installed = libos::predicate::installs() - before;
    wait_status(pid);
    close(&[r, w]);
    match (got, installed) {
        (1, 1) => Ok(()),
        (1, _) => Err("the two waits did not share one installed predicate"),
        _ => Err("select did not wake when the pipe was written"),
    }
}
