//! Boot test: the tracer (paper 003 §5.3) over a native program's subtree.
//! Every system call shows with its arguments and result; calls the
//! tracer answers itself (a kernel call and a foreign one) never reach the
//! kernel, and the traced program sees the tracer's answers. The traced
//! program interposes on its own child: the tracer sees it do so; the
//! child's calls go first to it, the nearer interposer, and what it lets
//! through reaches the tracer before the kernel (it cannot pass its
//! child's calls around the tracer).
#![no_std]
#![no_main]

use abi::nest::{event, Event};
use abi::syscall as sc;
use core::fmt::Write;
use user::{nest, print, println, spawn, sys};

/// The trace, kept to be checked.
struct Buf {
    bytes: [u8; 32768],
    len: usize,
}

impl Write for Buf {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        let end = self.len + s.len();
        self.bytes.get_mut(self.len..end).ok_or(core::fmt::Error)?.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// The tracer's own answers: the tracee's first `self_id` (later ones,
/// which its own interposer loop needs, get the truth) and Linux `getpid`.
fn policy(first_id: &mut bool, ev: &Event) -> Option<u64> {
    match (ev.kind, ev.number) {
        (event::SYSCALL, sc::SELF_ID) if core::mem::take(first_id) => Some(0x7ace),
        (event::FOREIGN, 39) => Some(0x99),
        _ => None,
    }
}

fn main(_: u64) -> i32 {
    let child = spawn::spawn_stopped("tracee", 0).unwrap();
    nest::interpose(child, true).unwrap();
    spawn::start(child).unwrap();
    let mut buf = Buf { bytes: [0; 32768], len: 0 };
    let mut first_id = true;
    let code = ::nest::trace::run(child, |_, ev| policy(&mut first_id, ev), &mut buf).unwrap();
    let trace = core::str::from_utf8(&buf.bytes[..buf.len]).unwrap();
    print!("{trace}");
    let me = |line: &str| format_line(child, line);
    // What the tracee printed, and so `debug_write`'s result.
    let said = "tracee: hello\n".len();
    let wrote = me_with(0, format_args!(") = {said:#x}"));
    let wrote_end = &wrote.as_str()[6..];
    let want = [
        me("self_id() = 0x7ace (answered by the tracer)"),
        me("frame_free(0xfffffffffffffffe, 0x0) = -4 (BadFrame)"),
        me("env_publish(0x0, 0x2a, 0x0) = 0x0"),
        me("linux:getpid(0x0, 0x0, 0x0, 0x0, 0x0, 0x0) = 0x99 (answered by the tracer)"),
        me("exit(0x0, 0x0, 0x0) = ?"),
    ];
    let mut seen = [false; 5];
    let write_start = me("debug_write(");
    let mut write_seen = false;
    let (mut foreign_lines, mut answers_seen) = (false, false);
    for line in trace.lines() {
        for (w, s) in want.iter().zip(seen.iter_mut()) {
            *s |= line == w.as_str();
        }
        write_seen |= line.starts_with(write_start.as_str()) && line.ends_with(wrote_end);
        foreign_lines |= !line.starts_with(me("").as_str());
        answers_seen |= line.starts_with(me("intercept_wait(").as_str());
    }
    let mut failures = 0;
    for (w, s) in want.iter().zip(seen) {
        println!("expected line {:?}: {}", w.as_str(), if s { "seen" } else { "MISSING" });
        failures += !s as i32;
    }
    println!(
        "expected line {:?}...{:?}: {}",
        write_start.as_str(),
        wrote_end,
        if write_seen { "seen" } else { "MISSING" }
    );
    failures += !write_seen as i32;
    println!(
        "the tracee's own interposer calls traced: {answers_seen}; its child's calls, let through by it, traced: \
         {foreign_lines}; tracee exited with {code}"
    );
    failures += !answers_seen as i32 + !foreign_lines as i32 + (code != 0) as i32;
    let _ = sys::env_destroy(child);
    failures
}

/// A fixed-size line of text.
struct Line {
    bytes: [u8; 128],
    len: usize,
}

impl Line {
    fn as_str(&self) -> &str {
        core::str::from_utf8(&self.bytes[..self.len]).unwrap_or("")
    }
}

impl Write for Line {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        let end = self.len + s.len();
        self.bytes.get_mut(self.len..end).ok_or(core::fmt::Error)?.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

fn me_with(id: u64, rest: core::fmt::Arguments) -> Line {
    let mut l = Line { bytes: [0; 128], len: 0 };
    let _ = write!(l, "[{id:#x}] {rest}");
    l
}

fn format_line(id: u64, rest: &str) -> Line {
    me_with(id, format_args!("{rest}"))
}

user::entry!(main);
