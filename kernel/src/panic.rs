//! Kernel panics: message, location and a backtrace of return addresses,
//! then QEMU exits with the failure code.

use crate::arch::cpu;

/// Highest number of frames printed.
const MAX_FRAMES: usize = 24;

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    crate::log::print(format_args!("\nKERNEL PANIC: {}\n", info.message()));
    if let Some(loc) = info.location() {
        crate::log::print(format_args!("  at {}:{}:{}\n", loc.file(), loc.line(), loc.column()));
    }
    backtrace(cpu::frame_pointer());
    cpu::qemu_exit(crate::EXIT_FAILURE)
}

/// Walks the saved-rbp chain (the kernel is built with frame pointers),
/// stopping at the first pointer that is not inside the kernel image.
pub fn backtrace(mut rbp: u64) {
    crate::log::print(format_args!("  backtrace (resolve with addr2line -e kernel):\n"));
    for _ in 0..MAX_FRAMES {
        if rbp < crate::mm::KERNEL_BASE || !rbp.is_multiple_of(8) {
            break;
        }
        // SAFETY: rbp is 8-aligned and inside the always-mapped kernel
        // image (its stack is in .bss), so both words are readable.
        let (next, ret) = unsafe { (*(rbp as *const u64), *((rbp + 8) as *const u64)) };
        if ret == 0 {
            break;
        }
        crate::log::print(format_args!("    {ret:#018x}\n"));
        rbp = next;
    }
}
