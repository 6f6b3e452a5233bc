//! Boot test: nesters composed (paper 003 §5: "each nester composes with
//! the others in any order"). The tracer (`nest::trace`) runs around the
//! demand pager (`nest::pager`), which runs around a limiter (a quota of
//! 16 frames more than the program starts with, off the path:
//! `nest::offpath`), which runs a native program:
//!
//! - `counter`: the lines it prints, collected by the tracer, equal a bare
//!   run's (collected by a plain interposer), byte for byte;
//! - `pagee`: it touches twice the pages its quota allows and completes,
//!   the pager paging for it through the limiter's quota.
//!
//! The trace must show every level's calls: the pager's `intercept_wait`s,
//! the limiter's `env_limit`, the program's `debug_write`s (answered by the
//! tracer, which collects them) or the pager's `frame_alloc`s for `pagee`.
//! The roles are this program's, by argument: `PAGER | program` and
//! `LIMITER | program`.
#![no_std]
#![no_main]

use abi::nest::{answer, Event};
use core::fmt::Write;
use nest::capture::Capture;
use nest::pager::Pager;
use user::{nest as calls, println, spawn, sys};

const PAGER: u64 = 1 << 32;
const LIMITER: u64 = 2 << 32;
/// The programs at the bottom.
const COUNTER: u64 = 0;
const PAGEE: u64 = 1;
const LINES: u64 = 20;
/// `pagee`'s region (`nest/src/bin/pagee.rs`) and its pages: twice the
/// quota's slack.
const REGION: u64 = 0x2000_0000_0000;
const SLACK: u64 = 16;
const PAGES: u64 = 2 * SLACK;
/// What the pager role adds to its child's exit code when it evicted.
const EVICTED: i32 = 1000;

type Output = Capture<4096>;

/// The trace, line by line: how many, which environments, which calls.
struct Seen {
    line: [u8; 160],
    len: usize,
    lines: usize,
    envs: [u64; 8],
    /// Lines naming each of `NEEDLES`.
    found: [usize; NEEDLES.len()],
}

const NEEDLES: [&str; 5] =
    ["intercept_wait(", "env_limit(", "debug_write(", "(answered by the tracer)", "] frame_alloc("];

impl Default for Seen {
    fn default() -> Self {
        Seen { line: [0; 160], len: 0, lines: 0, envs: [0; 8], found: [0; NEEDLES.len()] }
    }
}

impl Seen {
    fn end_line(&mut self) {
        let line = core::str::from_utf8(&self.line[..self.len]).unwrap_or("");
        self.lines += 1;
        for (n, needle) in NEEDLES.iter().enumerate() {
            self.found[n] += line.contains(needle) as usize;
        }
        let id = line.strip_prefix("[0x").and_then(|l| l.split(']').next());
        if let Some(id) = id.and_then(|i| u64::from_str_radix(i, 16).ok()) {
            if !self.envs.contains(&id) {
                if let Some(free) = self.envs.iter_mut().find(|e| **e == 0) {
                    *free = id;
                }
            }
        }
        self.len = 0;
    }

    fn distinct_envs(&self) -> usize {
        self.envs.iter().filter(|&&e| e != 0).count()
    }

    fn has(&self, needle: &str) -> usize {
        NEEDLES.iter().position(|n| *n == needle).map_or(0, |i| self.found[i])
    }
}

impl Write for Seen {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        for &b in s.as_bytes() {
            if b == b'\n' {
                self.end_line();
            } else if self.len < self.line.len() {
                self.line[self.len] = b;
                self.len += 1;
            }
        }
        Ok(())
    }
}

fn program(which: u64) -> (&'static str, u64) {
    if which == PAGEE {
        ("pagee", PAGES)
    } else {
        ("counter", LINES)
    }
}

/// The limiter's role: the program under a quota of `SLACK` frames more
/// than it starts with, waited for off its path.
fn limiter(which: u64) -> i32 {
    let (name, arg) = program(which);
    let child = spawn::spawn_stopped(name, arg).unwrap();
    calls::env_limit(child, calls::subtree_frames(child) + SLACK, 8).unwrap();
    spawn::start(child).unwrap();
    nest::offpath::wait_end(child).unwrap_or(-1)
}

/// The pager's role: pages the region for everything under it.
fn pager(which: u64) -> i32 {
    let child = spawn::spawn_stopped("test_compose", LIMITER | which).unwrap();
    calls::interpose(child, true).unwrap();
    spawn::start(child).unwrap();
    let mut pager = Pager::new(REGION, PAGES);
    let code = calls::serve(child, |_, env, ev: &Event| pager.answer(env, ev)).unwrap_or(-1);
    let _ = sys::env_destroy(child);
    match pager.failed {
        Some(_) => -2,
        None => code + if pager.evictions > 0 { EVICTED } else { 0 },
    }
}

/// `counter` alone, its output collected by a plain interposer.
fn bare(out: &mut Output) -> i32 {
    let (name, arg) = program(COUNTER);
    let child = spawn::spawn_stopped(name, arg).unwrap();
    calls::interpose(child, true).unwrap();
    spawn::start(child).unwrap();
    let code =
        calls::serve(child, |_, env, ev: &Event| out.take(env, ev).unwrap_or((answer::PASS, 0))).unwrap();
    sys::env_destroy(child).unwrap();
    code
}

/// The whole stack over `which`, traced; the program's output collected
/// by the tracer.
fn composed(which: u64, out: &mut Output, seen: &mut Seen) -> i32 {
    let child = spawn::spawn_stopped("test_compose", PAGER | which).unwrap();
    calls::interpose(child, true).unwrap();
    spawn::start(child).unwrap();
    let policy = |env, ev: &Event| match out.take(env, ev) {
        Some((answer::RETURN, v)) => Some(v),
        _ => None,
    };
    let code = nest::trace::run(child, policy, seen).unwrap();
    sys::env_destroy(child).unwrap();
    code
}

fn main(arg: u64) -> i32 {
    match arg & !0xFFFF_FFFF {
        PAGER => return pager(arg & 0xFFFF_FFFF),
        LIMITER => return limiter(arg & 0xFFFF_FFFF),
        _ => {}
    }
    let mut failures = 0;
    let mut check = |what: &str, ok: bool| {
        println!("compose: {what}: {}", if ok { "ok" } else { "FAILED" });
        failures += !ok as i32;
    };

    let mut alone = Output::default();
    let code = bare(&mut alone);
    check("counter alone", code == 0 && alone.lines() == LINES as usize);
    let mut out = Output::default();
    let mut seen = Seen::default();
    let code = composed(COUNTER, &mut out, &mut seen);
    println!(
        "compose: tracer > pager > limiter > counter: exit {code}, {} trace lines from {} environments",
        seen.lines,
        seen.distinct_envs()
    );
    check("counter under the stack exits as alone", code == 0);
    check("its output equals the bare run's", out.text() == alone.text());
    check("the trace shows the pager's waits", seen.has("intercept_wait(") > 0);
    check("the trace shows the limiter's quota", seen.has("env_limit(") > 0);
    let writes = seen.has("(answered by the tracer)");
    check(
        "the trace shows every line written",
        seen.has("debug_write(") >= LINES as usize && writes >= LINES as usize,
    );
    check("three environments traced", seen.distinct_envs() >= 3);

    let mut out = Output::default();
    let mut seen = Seen::default();
    let code = composed(PAGEE, &mut out, &mut seen);
    println!(
        "compose: tracer > pager > limiter > pagee: exit {code}, {} trace lines from {} environments",
        seen.lines,
        seen.distinct_envs()
    );
    check("pagee completes, paged through the limiter's quota", code == EVICTED);
    check("the trace shows the pager's frames", seen.has("] frame_alloc(") >= PAGES as usize);
    failures
}

user::entry!(main);
