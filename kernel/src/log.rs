//! The kernel log: formatted lines on the serial console.

use core::fmt::{self, Write};

struct Console;

impl Write for Console {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        for b in s.bytes() {
            if b == b'\n' {
                crate::arch::serial::write_byte(b'\r');
            }
            crate::arch::serial::write_byte(b);
        }
        Ok(())
    }
}

#[doc(hidden)]
pub fn print(args: fmt::Arguments) {
    let _ = Console.write_fmt(args);
}

/// Writes raw bytes from an environment to the console.
pub fn write_bytes(bytes: &[u8]) {
    for &b in bytes {
        if b == b'\n' {
            crate::arch::serial::write_byte(b'\r');
        }
        crate::arch::serial::write_byte(b);
    }
}

/// Prints a line prefixed with `veneer:`.
#[macro_export]
macro_rules! kprintln {
    ($($arg:tt)*) => {
        $crate::log::print(format_args!("veneer: {}\n", format_args!($($arg)*)))
    };
}
