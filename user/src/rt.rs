//! Program start and panics. A program is `user::entry!(main)` with
//! `fn main(arg: u64) -> i32`; `arg` is the word the parent put in `rdi`
//! (0 for the first environment).

/// Defines `_start` for a program whose main function is `$main`.
#[macro_export]
macro_rules! entry {
    ($main:path) => {
        #[unsafe(no_mangle)]
        extern "C" fn user_main(arg: u64) -> i32 {
            $main(arg)
        }
        core::arch::global_asm!(
            ".globl _start",
            "_start:",
            "xor ebp, ebp",
            "and rsp, -16",
            "call user_main",
            "mov edi, eax",
            "call {exit}",
            "ud2",
            exit = sym $crate::rt::exit_with,
        );
    };
}

pub extern "C" fn exit_with(code: i32) -> ! {
    crate::sys::exit(code)
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    crate::println!("panic: {}", info);
    crate::sys::exit(101)
}

/// The precompiled `core` for this target refers to the unwinding
/// personality routine; programs here abort on panic and never unwind, so
/// it is never called.
#[unsafe(no_mangle)]
extern "C" fn rust_eh_personality() {}
