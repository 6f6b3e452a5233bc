//! The kernel binary: everything lives in the library; this file only makes
//! the bare-metal build an executable.
#![cfg_attr(target_os = "none", no_std, no_main)]

#[cfg(target_os = "none")]
use kernel as _;

#[cfg(not(target_os = "none"))]
fn main() {
    eprintln!("The Veneer kernel runs only on x86_64-unknown-none: use `cargo xtask run`.");
    std::process::exit(1);
}
