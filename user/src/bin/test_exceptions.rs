//! Boot test: each forwarded exception type reaches this environment's own
//! handler with the right cause (and faulting address), and the handler
//! resumes the faulting code without entering the kernel.
//!
//! Alignment-check (#AC) and SIMD (#XM) exceptions are forwarded the same
//! way, but QEMU's software emulation never raises them, so they are not
//! exercised here.
#![no_std]
#![no_main]

use abi::exception::{vector, ExceptionFrame};
use abi::syscall::{map as mf, ENV_SELF, FRAME_ANY};
use core::arch::asm;
use user::{println, sys};

static mut SEEN: [u64; 32] = [0; 32];
static mut LAST_ADDR: u64 = 0;

const PF_PAGE: u64 = 0x5000_0000_0000;

fn handler(f: &mut ExceptionFrame) -> bool {
    // SAFETY: single-threaded; the handler runs between instructions of main.
    unsafe {
        SEEN[f.vector as usize] += 1;
        LAST_ADDR = f.fault_addr;
    }
    match f.vector {
        // Faults: skip the faulting instruction (each test uses a 2-byte one).
        vector::DIVIDE | vector::INVALID_OPCODE | vector::GENERAL_PROTECTION => f.regs.rip += 2,
        vector::X87 => {
            // The handler shares the FPU with the interrupted code: clear
            // the pending x87 exception, then skip the fwait.
            // SAFETY: fnclex only clears x87 status flags.
            unsafe { asm!("fnclex") };
            f.regs.rip += 1;
        }
        vector::DEBUG => f.regs.rflags &= !(1 << 8),
        vector::BREAKPOINT => {} // a trap: rip is already past int3
        vector::PAGE_FAULT => {
            // Resolve by mapping a fresh frame at the faulting page.
            let f2 = sys::frame_alloc(ENV_SELF, FRAME_ANY).unwrap();
            sys::map(ENV_SELF, f.fault_addr & !4095, f2, mf::WRITE).unwrap();
        }
        _ => return false,
    }
    true
}

fn seen(v: u64) -> u64 {
    // SAFETY: read after the handler has run, single-threaded.
    unsafe { SEEN[v as usize] }
}

fn check(name: &str, v: u64, ok: bool) -> bool {
    let good = seen(v) == 1 && ok;
    println!("{name}: delivered {} time(s), {}", seen(v), if good { "ok" } else { "WRONG" });
    good
}

fn main(_: u64) -> i32 {
    user::exc::install(handler).unwrap();
    let mut all = true;

    // #DE: 2-byte `div ecx` with ecx = 0.
    let q: u32;
    // SAFETY: the handler skips the faulting div; registers are declared.
    unsafe {
        asm!("xor edx, edx", "mov eax, 7", "xor ecx, ecx", "div ecx", out("eax") q, out("edx") _, out("ecx") _)
    };
    all &= check("divide error", vector::DIVIDE, q == 7);

    // #BP from int3 (a trap: resumes after it).
    // SAFETY: the handler returns to the next instruction.
    unsafe { asm!("int3") };
    all &= check("breakpoint", vector::BREAKPOINT, true);

    // #UD from ud2.
    // SAFETY: the handler skips ud2.
    unsafe { asm!("ud2") };
    all &= check("invalid opcode", vector::INVALID_OPCODE, true);

    // #GP from a privileged instruction (1-byte hlt, then a nop: the
    // handler skips both).
    // SAFETY: the handler skips hlt and the nop.
    unsafe { asm!("hlt", "nop") };
    all &= check("general protection", vector::GENERAL_PROTECTION, true);

    // #PF: write to an unmapped page; the handler maps it and the write
    // is retried and lands.
    let p = PF_PAGE as *mut u64;
    // SAFETY: the handler maps the page before the store is retried.
    unsafe { core::ptr::write_volatile(p.add(3), 0xfeed) };
    // SAFETY: the page is mapped now.
    let v = unsafe { core::ptr::read_volatile(p.add(3)) };
    // SAFETY: read after the handler ran, single-threaded.
    let addr = unsafe { LAST_ADDR };
    all &= check("page fault", vector::PAGE_FAULT, v == 0xfeed && addr == PF_PAGE + 24);

    // #DB: single-step trap after setting TF.
    // SAFETY: the handler clears TF; flags are restored by popfq.
    unsafe { asm!("pushfq", "or qword ptr [rsp], 0x100", "popfq", "nop") };
    all &= check("debug (single step)", vector::DEBUG, true);

    // #MF: unmask x87 divide-by-zero, divide by zero, then fwait reports it.
    // SAFETY: the handler clears the exception and skips the fwait; the
    // control word is restored.
    unsafe {
        asm!(
            "sub rsp, 8", "fnstcw [rsp]", "mov ax, [rsp]", "and ax, ~0x4", "mov [rsp+2], ax",
            "fldcw [rsp+2]", "fld1", "fldz", "fdivp st(1), st", "fwait", "fstp st(0)",
            "fldcw [rsp]", "add rsp, 8",
            out("ax") _,
        )
    };
    all &= check("x87 floating point", vector::X87, true);

    if all {
        println!("all exceptions forwarded and resumed");
        0
    } else {
        1
    }
}

user::entry!(main);
