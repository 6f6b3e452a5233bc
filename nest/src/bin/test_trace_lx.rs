//! Boot test: the tracer around a Linux program (paper 003 §5.3). Booted as
//! `init=test_trace_lx /bin/busybox echo hello nested world`, it runs the
//! library OS's Linux personality, `lxrt` (which reads the same command
//! line), unchanged in an interposed subtree: busybox's Linux calls show
//! as foreign calls, lxrt's own as kernel calls with their results, and
//! the output is the same as untraced.
#![no_std]
#![no_main]

use core::fmt::Write;
use user::{nest, println, spawn};

const MAX_LINE: usize = 256;

/// Keeps the Linux calls of the trace (the library OS's own calls, tens
/// of thousands while it builds its file system, are only counted).
struct LinuxCalls {
    line: [u8; MAX_LINE],
    len: usize,
    native: u64,
    write_seen: bool,
    exit_after_write: bool,
}

impl LinuxCalls {
    fn end_line(&mut self) {
        let line = core::str::from_utf8(&self.line[..self.len]).unwrap_or("");
        if line.contains("linux:") {
            println!("{line}");
            // write(1, buf, 19): "hello nested world\n".
            self.write_seen |= line.contains("linux:write(0x1, ") && line.contains(", 0x13, ");
            self.exit_after_write |= self.write_seen && line.contains("linux:exit_group(0x0");
        } else if line.ends_with(')') || line.contains(") = ") {
            self.native += 1;
        }
        self.len = 0;
    }
}

impl Write for LinuxCalls {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        for &b in s.as_bytes() {
            if b == b'\n' {
                self.end_line();
            } else if self.len < MAX_LINE {
                self.line[self.len] = b;
                self.len += 1;
            }
        }
        Ok(())
    }
}

fn main(_: u64) -> i32 {
    let child = spawn::spawn_stopped("lxrt", 0).unwrap();
    nest::interpose(child, true).unwrap();
    spawn::start(child).unwrap();
    let mut calls =
        LinuxCalls { line: [0; MAX_LINE], len: 0, native: 0, write_seen: false, exit_after_write: false };
    let code = ::nest::trace::run(child, |_, _| None, &mut calls).unwrap();
    println!(
        "traced lxrt: {} kernel calls; busybox's write seen: {}; then exit_group: {}; exit code {code}",
        calls.native, calls.write_seen, calls.exit_after_write
    );
    i32::from(!(calls.write_seen && calls.exit_after_write && calls.native > 100 && code == 0))
}

user::entry!(main);
