//! Console output for programs, and lxrt's own notes (each unsupported
//! Linux call once, by name). A note never lands in the middle of a
//! program's output line: it waits until the console is at a line start,
//! so a test can drop `lxrt:` lines and compare the rest byte for byte.

use alloc::vec::Vec;
use user::sys;

/// A process's notes.
pub struct Notes {
    /// Lines waiting for the console to reach a line start.
    pending: Vec<u8>,
    at_line_start: bool,
    /// The features `once` has reported.
    seen: Vec<u64>,
}

impl Notes {
    pub const NONE: Notes = Notes { pending: Vec::new(), at_line_start: true, seen: Vec::new() };
}

static NOTES: crate::scoped::Scoped<Notes> = crate::scoped::Scoped::new("the notes", Notes::NONE);

#[inline]
fn with_notes<R>(f: impl FnOnce(&mut Notes) -> R) -> R {
    NOTES.with(f)
}

fn write_raw(b: &[u8]) {
    for chunk in b.chunks(1 << 16) {
        let _ = sys::debug_write(chunk);
    }
}

/// Writes a program's output to the console.
pub fn console_write(b: &[u8]) {
    if b.is_empty() {
        return;
    }
    write_raw(b);
    with_notes(|n| n.at_line_start = b.ends_with(b"\n"));
    flush();
}

/// Prints queued notes if the console is at a line start.
pub fn flush() {
    with_notes(|n| {
        if n.at_line_start && !n.pending.is_empty() {
            write_raw(&n.pending);
            n.pending.clear();
        }
    })
}

/// Queues one note line.
pub fn note(args: core::fmt::Arguments) {
    use core::fmt::Write;
    struct Buf(Vec<u8>);
    impl Write for Buf {
        fn write_str(&mut self, s: &str) -> core::fmt::Result {
            self.0.extend_from_slice(s.as_bytes());
            Ok(())
        }
    }
    // Formatted first: `args` may call code that borrows the process.
    let mut line = Buf(Vec::new());
    let _ = writeln!(line, "lxrt: {args}");
    with_notes(|n| n.pending.extend_from_slice(&line.0));
    flush();
}

/// Notes an unsupported feature `what` once per process.
pub fn once(what: &str, key: u64) {
    let new = with_notes(|n| {
        let new = !n.seen.contains(&key);
        if new {
            n.seen.push(key);
        }
        new
    });
    if new {
        note(format_args!("unsupported: {what}"));
    }
}

/// Reports an unimplemented Linux call the first time it is made.
pub fn unsupported_call(name: &str, nr: u64) {
    if nr < 512 && !crate::shared::logged(nr) {
        note(format_args!("unsupported Linux call {name} ({nr}): -ENOSYS"));
    }
}
