//! Fault injection (paper 004 §4), compiled only with the `inject`
//! feature: the boot tests' driver images carry out `drvapi::op::INJECT_*`
//! requests as the bugs they stand for; the default images do not know
//! them.

use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Carries out a fault-injection request (`drvapi::op::INJECT_*`): the
/// status to answer `r` with when it was one, or when an injected lie
/// answers every request.
pub fn inject(r: &drvapi::Request) -> Option<i32> {
    use drvapi::op;
    match r.op {
        // SAFETY: none: this is the injected bug. The kernel's protection
        // domain is what stops the write (or, unisolated, does not).
        op::INJECT_WILD_WRITE => unsafe { (r.sector as *mut u8).write_volatile(0xBD) },
        op::INJECT_STACK_OVERFLOW => {
            core::hint::black_box(deeper(r.sector));
        }
        op::INJECT_LIVELOCK => spin(),
        op::INJECT_CLI_LIVELOCK => {
            // SAFETY: none: this is the injected bug (ring 0 may turn
            // interrupts off); the kernel's NMI watchdog must end it.
            unsafe { core::arch::asm!("cli", options(nomem, nostack)) };
            spin()
        }
        op::INJECT_WILD_CALL => {
            // SAFETY: none: this is the injected bug (a corrupted function
            // pointer); the fault it takes is what the kernel must stop.
            let f: extern "C" fn() = unsafe { core::mem::transmute(r.sector as usize) };
            f()
        }
        op::INJECT_IRQ_LIVELOCK => IRQ_LIVELOCK.store(true, Ordering::Relaxed),
        op::INJECT_BAD_STACK => bad_stack(r.sector, r.len != 0),
        op::INJECT_PRIVILEGED => privileged(r.sector),
        // A dropped request is taken and never ended.
        op::INJECT_LIE => LIE.store(r.sector, Ordering::Relaxed),
        _ if LIE.load(Ordering::Relaxed) == op::LIE_FULL => return Some(drvapi::status::NO_SPACE),
        _ if take_lie(op::LIE_REFUSE) => return Some(drvapi::status::IO_ERROR),
        _ => return None,
    }
    Some(drvapi::status::OK)
}

/// The lie armed by `INJECT_LIE` (0: none).
static LIE: AtomicU64 = AtomicU64::new(0);

/// Whether the one-time lie `lie` is armed; disarmed.
fn take_lie(lie: u64) -> bool {
    LIE.compare_exchange(lie, 0, Ordering::Relaxed, Ordering::Relaxed).is_ok()
}

/// Reports request `tag` ended with `status` and `len` bytes moved (once:
/// half of them under `LIE_SHORT`, an I/O error under `LIE_ERROR`,
/// "invalid" under `LIE_INVALID`).
pub fn complete(tag: u64, status: i32, len: usize) {
    use drvapi::{op, status as st};
    let len = if take_lie(op::LIE_SHORT) { len / 2 } else { len };
    let status = match () {
        _ if take_lie(op::LIE_ERROR) => st::IO_ERROR,
        _ if take_lie(op::LIE_INVALID) => st::INVALID,
        _ => status,
    };
    (crate::kernel().complete)(tag, status, len)
}

/// Runs on a stack at `rsp` (the injected corrupted stack pointer): waits
/// for the next interrupt, or calls the kernel (`call`).
fn bad_stack(rsp: u64, call: bool) -> ! {
    let log = crate::kernel().log as usize;
    // SAFETY: none: this is the injected bug. Whatever the stack holds is
    // never used again: the kernel must stop the driver.
    unsafe {
        if call {
            core::arch::asm!("mov rsp, {s}", "call {f}", "2: jmp 2b", s = in(reg) rsp, f = in(reg) log,
                in("rdi") 0, in("rsi") 0, options(noreturn))
        } else {
            core::arch::asm!("mov rsp, {s}", "sti", "2: jmp 2b", s = in(reg) rsp, options(noreturn))
        }
    }
}

/// Runs `sysret` or `int 14` (`INJECT_PRIVILEGED`).
fn privileged(how: u64) {
    // SAFETY: none: this is the injected bug; the kernel must stop the
    // driver at the trap that follows.
    unsafe {
        if how == drvapi::op::PRIVILEGED_SYSRET {
            core::arch::asm!("sysretq", in("rcx") 0x1000, in("r11") 0x202, options(noreturn))
        }
        core::arch::asm!("int 14", options(nomem, nostack))
    }
}

/// Armed by `INJECT_WILD_DMA`: the next buffer the device writes is
/// given to it at this physical address instead of its own.
static WILD_DMA: AtomicU64 = AtomicU64::new(0);

/// The wrong address armed for the buffer the device writes, taken
/// (only ask for a buffer the device writes: the request's header is
/// shared first and must keep its address).
pub(crate) fn wild_dma_address() -> Option<u64> {
    Some(WILD_DMA.swap(0, Ordering::Relaxed)).filter(|&a| a != 0)
}

/// `INJECT_WILD_DMA` turned into what the driver does with it: a read of
/// one sector of sector 0 into the lent buffer, whose device address the
/// next `share` replaces with `r.sector`. Other requests are unchanged.
pub fn wild_dma(r: &drvapi::Request) -> drvapi::Request {
    if r.op != drvapi::op::INJECT_WILD_DMA {
        return *r;
    }
    WILD_DMA.store(r.sector, Ordering::Relaxed);
    drvapi::Request { op: drvapi::op::READ, sector: 0, len: 512, ..*r }
}

/// Armed by `INJECT_IRQ_LIVELOCK`: the next interrupt handler loops.
static IRQ_LIVELOCK: AtomicBool = AtomicBool::new(false);

/// Called first by each driver's interrupt handler (the injected livelock).
pub fn on_interrupt() {
    if IRQ_LIVELOCK.load(Ordering::Relaxed) {
        spin();
    }
}

/// Loops forever (the injected livelock); only the kernel's watchdog ends it.
fn spin() -> ! {
    loop {
        core::hint::spin_loop();
    }
}

/// Recurses without end (the injected stack overflow).
#[allow(unconditional_recursion)]
fn deeper(n: u64) -> u64 {
    let frame = core::hint::black_box([n; 32]);
    deeper(frame[1] + 1) + frame[2]
}
