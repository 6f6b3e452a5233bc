//! Console output through the kernel's debug console.

use core::fmt::{self, Write};

pub struct Console;

impl Write for Console {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        crate::sys::debug_write(s.as_bytes()).map(|_| ()).map_err(|_| fmt::Error)
    }
}

#[doc(hidden)]
pub fn print(args: fmt::Arguments) {
    let _ = Console.write_fmt(args);
}

#[macro_export]
macro_rules! print {
    ($($arg:tt)*) => { $crate::print::print(format_args!($($arg)*)) };
}

#[macro_export]
macro_rules! println {
    () => { $crate::print!("\n") };
    ($($arg:tt)*) => { $crate::print::print(format_args!("{}\n", format_args!($($arg)*))) };
}
