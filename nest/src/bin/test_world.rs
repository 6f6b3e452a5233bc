//! Boot test: nested Linux worlds. Booted as `init=test_world /bin/busybox
//! sh -c SCRIPT`, where the script lists `/tmp`, writes `/tmp/w` and prints
//! its pid, it runs the script in a world (`world`), then in a world nested
//! in a world, each interposed on to collect what it prints. Each world
//! starts its pids at 1 and has a file system of its own: neither sees the
//! file the other wrote. A world whose memory quota is too small for the
//! library OS fails inside its limit, and everything it held comes back.
#![no_std]
#![no_main]

use abi::nest::{answer, Event};
use abi::tables::env_state;
use nest::capture::Capture;
use user::{kinfo, nest as calls, print, println, spawn};

type Output = Capture<8192>;

/// Runs a `world` with `arg`, interposed on; returns its exit code.
fn world(arg: u64, out: &mut Output) -> Option<i32> {
    let w = spawn::spawn_stopped("world", arg).ok()?;
    calls::interpose(w, true).ok()?;
    spawn::start(w).ok()?;
    let mut ev = Event::default();
    let mut reply = (0, 0, 0);
    while let Some(id) = calls::intercept_wait(w, &mut ev, reply.0, reply.1, reply.2).ok()? {
        let (mode, value) = out.take(id, &ev).unwrap_or((answer::PASS, 0));
        reply = (id, mode, value);
    }
    let code = kinfo::env_by_id(w).filter(|e| e.state == env_state::EXITED).map(|e| e.exit_code);
    let _ = user::sys::env_destroy(w);
    code
}

/// Whether `text` has the line `line`.
fn has_line(text: &[u8], line: &str) -> bool {
    text.split(|&b| b == b'\n').any(|l| l == line.as_bytes())
}

fn main(_: u64) -> i32 {
    let mut failures = 0;
    let mut check = |what: &str, ok: bool| {
        println!("{what}: {}", if ok { "ok" } else { "FAILED" });
        failures += !ok as i32;
    };
    for (depth, what) in [(1u64, "a world in a world"), (0, "a world")] {
        let mut out = Output::default();
        let code = world(depth << 32, &mut out);
        print!("{}", core::str::from_utf8(out.text()).unwrap_or("(not text)\n"));
        check(what, code == Some(0));
        check("  its first process is pid 1", has_line(out.text(), "pid 1"));
        check("  its /tmp was empty (its own file system)", !has_line(out.text(), "w"));
        let notes = out.text().split(|&b| b == b'\n').filter(|l| l.starts_with(b"lxrt: ")).count();
        check("  the library OS's notes went to the console, not its output", notes == 0);
    }
    let before = kinfo::free_plus_own();
    let mut out = Output::default();
    let code = world(64, &mut out);
    println!("a world of 64 frames ended with {code:?}");
    check("a world over its memory quota fails inside it", code.is_some_and(|c| c != 0));
    check("  and gives everything back", kinfo::free_plus_own() == before);
    failures
}

user::entry!(main);
