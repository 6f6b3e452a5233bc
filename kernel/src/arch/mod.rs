//! x86-64 specifics: boot, descriptor tables, entry stubs, timer and clock
//! calibration, FPU. Only the register images (`frame`) are compiled on
//! the host.

/// Leaves the kernel by SYSRETQ into the environment whose frame the
/// register `base` (`"rcx"` or `"rsp"`) points to, restoring the registers
/// a system call preserves (the callee-saved ones must already hold the
/// frame's values); rcx and r11 carry rip and rflags, as the ABI allows.
/// Assembly text for the two exits that use it (the system-call stub and
/// `resume_frame`), inside `frame_asm!`.
#[cfg(target_os = "none")]
macro_rules! sysret {
    ("rcx") => {
        concat!(sysret!(restore "rcx"), "movq {rsp}(%rcx), %rsp\n movq {rip}(%rcx), %rcx\n swapgs\n sysretq\n")
    };
    ("rsp") => {
        concat!(sysret!(restore "rsp"), "movq {rip}(%rsp), %rcx\n movq {rsp}(%rsp), %rsp\n swapgs\n sysretq\n")
    };
    (restore $base:literal) => {
        concat!(
            "movq {rflags}(%", $base, "), %r11\n",
            "movq {rdi}(%", $base, "), %rdi\n",
            "movq {rsi}(%", $base, "), %rsi\n",
            "movq {rdx}(%", $base, "), %rdx\n",
            "movq {r8}(%", $base, "), %r8\n",
            "movq {r9}(%", $base, "), %r9\n",
            "movq {r10}(%", $base, "), %r10\n",
        )
    };
}

/// Claims the environment's exception save area for a delivery (paper
/// 001 §4.4): loads its address from the frame-relative operand `save`
/// (the `ExcTarget::save` word) into `reg` and marks it busy, or jumps to
/// `fail` when there is none or its handler is still busy. Assembly text
/// for the two deliveries that write the area themselves (`exc_fast` and
/// the reflection stub), inside `frame_asm!`.
#[cfg(target_os = "none")]
macro_rules! claim_save_area {
    ($reg:literal, $save:literal, $fail:literal) => {
        concat!(
            concat!("movq ", $save, "(%rsp), %", $reg, "\n"),
            concat!("testq %", $reg, ", %", $reg, "\n"),
            concat!("jz ", $fail, "\n"),
            concat!("cmpq $0, {f_busy}(%", $reg, ")\n"),
            concat!("jne ", $fail, "\n"),
            concat!("movq $1, {f_busy}(%", $reg, ")\n"),
        )
    };
}

/// `global_asm!` (AT&T syntax) with every field of the trap frame as a
/// `const` operand named after it (`{rax}`, `{rip}`, ...), the per-CPU
/// block's `{kstack_top}` and `{cur_tf}`, the fields of an exception save
/// area the delivery stubs write (`{f_busy}`, `{f_rip}`, ...) and the
/// rflags bits a handler is entered without (`{handler_clears}`), all taken by `offset_of!` — so
/// no stub writes an offset by hand. The caller's own operands follow its
/// template, without a trailing comma.
#[cfg(target_os = "none")]
macro_rules! frame_asm {
    ($($body:tt)*) => {
        core::arch::global_asm!(
            // Names every operand once, so a stub need not use them all.
            "/* {r15} {r14} {r13} {r12} {r11} {r10} {r9} {r8} {rbp} {rdi} {rsi} {rdx} {rcx} {rbx} {rax} {vector} {error} {rip} {cs} {rflags} {rsp} {ss} {kstack_top} {cur_tf} */",
            "/* {f_busy} {f_vector} {f_error} {f_addr} {f_rax} {f_rcx} {f_rip} {f_rflags} {f_rsp} {handler_clears} */",
            $($body)*,
            r15 = const core::mem::offset_of!($crate::arch::frame::TrapFrame, r15),
            r14 = const core::mem::offset_of!($crate::arch::frame::TrapFrame, r14),
            r13 = const core::mem::offset_of!($crate::arch::frame::TrapFrame, r13),
            r12 = const core::mem::offset_of!($crate::arch::frame::TrapFrame, r12),
            r11 = const core::mem::offset_of!($crate::arch::frame::TrapFrame, r11),
            r10 = const core::mem::offset_of!($crate::arch::frame::TrapFrame, r10),
            r9 = const core::mem::offset_of!($crate::arch::frame::TrapFrame, r9),
            r8 = const core::mem::offset_of!($crate::arch::frame::TrapFrame, r8),
            rbp = const core::mem::offset_of!($crate::arch::frame::TrapFrame, rbp),
            rdi = const core::mem::offset_of!($crate::arch::frame::TrapFrame, rdi),
            rsi = const core::mem::offset_of!($crate::arch::frame::TrapFrame, rsi),
            rdx = const core::mem::offset_of!($crate::arch::frame::TrapFrame, rdx),
            rcx = const core::mem::offset_of!($crate::arch::frame::TrapFrame, rcx),
            rbx = const core::mem::offset_of!($crate::arch::frame::TrapFrame, rbx),
            rax = const core::mem::offset_of!($crate::arch::frame::TrapFrame, rax),
            vector = const core::mem::offset_of!($crate::arch::frame::TrapFrame, vector),
            error = const core::mem::offset_of!($crate::arch::frame::TrapFrame, error),
            rip = const core::mem::offset_of!($crate::arch::frame::TrapFrame, rip),
            cs = const core::mem::offset_of!($crate::arch::frame::TrapFrame, cs),
            rflags = const core::mem::offset_of!($crate::arch::frame::TrapFrame, rflags),
            rsp = const core::mem::offset_of!($crate::arch::frame::TrapFrame, rsp),
            ss = const core::mem::offset_of!($crate::arch::frame::TrapFrame, ss),
            kstack_top = const core::mem::offset_of!($crate::arch::percpu::PerCpu, kstack_top),
            cur_tf = const core::mem::offset_of!($crate::arch::percpu::PerCpu, cur_tf),
            f_busy = const core::mem::offset_of!(abi::exception::ExceptionFrame, busy),
            f_vector = const core::mem::offset_of!(abi::exception::ExceptionFrame, vector),
            f_error = const core::mem::offset_of!(abi::exception::ExceptionFrame, error_code),
            f_addr = const core::mem::offset_of!(abi::exception::ExceptionFrame, fault_addr),
            f_rax = const $crate::arch::frame::EXC_REGS + core::mem::offset_of!(abi::exception::Regs, rax),
            f_rcx = const $crate::arch::frame::EXC_REGS + core::mem::offset_of!(abi::exception::Regs, rcx),
            f_rip = const $crate::arch::frame::EXC_REGS + core::mem::offset_of!(abi::exception::Regs, rip),
            f_rflags = const $crate::arch::frame::EXC_REGS + core::mem::offset_of!(abi::exception::Regs, rflags),
            f_rsp = const $crate::arch::frame::EXC_REGS + core::mem::offset_of!(abi::exception::Regs, rsp),
            handler_clears = const $crate::upcall::HANDLER_CLEARS,
            options(att_syntax)
        );
    };
}

pub mod frame;

#[cfg(target_os = "none")]
pub mod apic;
#[cfg(target_os = "none")]
pub mod boot;
#[cfg(target_os = "none")]
pub mod clock;
#[cfg(target_os = "none")]
pub mod cpu;
#[cfg(target_os = "none")]
pub mod fpu;
#[cfg(target_os = "none")]
pub mod gdt;
#[cfg(target_os = "none")]
pub mod idt;
#[cfg(target_os = "none")]
pub mod idtr;
#[cfg(target_os = "none")]
pub mod pct;
#[cfg(target_os = "none")]
pub mod percpu;
#[cfg(target_os = "none")]
pub mod rtc;
#[cfg(target_os = "none")]
pub mod serial;
#[cfg(target_os = "none")]
pub mod syscall;
#[cfg(target_os = "none")]
pub mod trap;
