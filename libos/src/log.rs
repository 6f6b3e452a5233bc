//! Console output for programs, and lxrt's own notes (each unsupported
//! Linux call once, by name). A note never lands in the middle of a
//! program's output line: it waits until the console is at a line start,
//! so a test can drop `lxrt:` lines and compare the rest byte for byte.

use alloc::vec::Vec;
use user::sys;

static mut PENDING: Vec<u8> = Vec::new();
static mut AT_LINE_START: bool = true;

fn pending() -> &'static mut Vec<u8> {
    // SAFETY: private to this process; one thread.
    unsafe { &mut (*(&raw mut PENDING)) }
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
    // SAFETY: as in `pending`.
    unsafe { AT_LINE_START = b.ends_with(b"\n") };
    flush();
}

/// Prints queued notes if the console is at a line start.
pub fn flush() {
    // SAFETY: as in `pending`.
    if unsafe { AT_LINE_START } && !pending().is_empty() {
        write_raw(pending());
        pending().clear();
    }
}

/// Queues one note line.
pub fn note(args: core::fmt::Arguments) {
    use core::fmt::Write;
    struct Buf;
    impl Write for Buf {
        fn write_str(&mut self, s: &str) -> core::fmt::Result {
            pending().extend_from_slice(s.as_bytes());
            Ok(())
        }
    }
    let _ = writeln!(Buf, "lxrt: {args}");
    flush();
}

/// Notes an unsupported feature `what` once per process.
pub fn once(what: &str, key: u64) {
    static mut SEEN: Vec<u64> = Vec::new();
    // SAFETY: private to this process; one thread.
    let seen = unsafe { &mut (*(&raw mut SEEN)) };
    if !seen.contains(&key) {
        seen.push(key);
        note(format_args!("unsupported: {what}"));
    }
}

/// Reports an unimplemented Linux call the first time it is made.
pub fn unsupported_call(name: &str, nr: u64) {
    let logged = &mut crate::shared::get().logged;
    let (w, b) = ((nr / 64) as usize % logged.len(), nr % 64);
    if nr < 512 && logged[w] & (1 << b) == 0 {
        logged[w] |= 1 << b;
        note(format_args!("unsupported Linux call {name} ({nr}): -ENOSYS"));
    }
}
