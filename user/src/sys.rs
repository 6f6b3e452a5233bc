//! Raw system calls (see `abi::syscall` for the convention).

use abi::exception::Regs;
use abi::syscall as sc;
use abi::Error;
use core::arch::asm;

/// Makes system call `n`. Clobbers what a System V function call may.
#[inline(always)]
pub fn call(n: u64, a: [u64; 6]) -> i64 {
    let r: i64;
    // SAFETY: SYSCALL enters the kernel, which validates every argument and
    // preserves the callee-saved registers; the clobbers list the rest.
    unsafe {
        asm!("syscall",
            inlateout("rax") n as i64 => r,
            inlateout("rdi") a[0] => _, inlateout("rsi") a[1] => _, inlateout("rdx") a[2] => _,
            inlateout("r10") a[3] => _, inlateout("r8") a[4] => _, inlateout("r9") a[5] => _,
            lateout("rcx") _, lateout("r11") _,
            options(nostack));
    }
    r
}

/// Makes system call `n`, which takes no arguments.
#[inline(always)]
pub fn call0(n: u64) -> i64 {
    let r: i64;
    // SAFETY: as in `call`; the argument registers are only clobbered.
    unsafe {
        asm!("syscall",
            inlateout("rax") n as i64 => r,
            lateout("rdi") _, lateout("rsi") _, lateout("rdx") _,
            lateout("r10") _, lateout("r8") _, lateout("r9") _,
            lateout("rcx") _, lateout("r11") _,
            options(nostack));
    }
    r
}

/// Makes system call `n` with one argument.
#[inline(always)]
pub fn call1(n: u64, a: u64) -> i64 {
    let r: i64;
    // SAFETY: as in `call`.
    unsafe {
        asm!("syscall",
            inlateout("rax") n as i64 => r,
            inlateout("rdi") a => _, lateout("rsi") _, lateout("rdx") _,
            lateout("r10") _, lateout("r8") _, lateout("r9") _,
            lateout("rcx") _, lateout("r11") _,
            options(nostack));
    }
    r
}

fn result(r: i64) -> Result<u64, Error> {
    if r >= 0 {
        Ok(r as u64)
    } else {
        Err(Error::from_result(r).unwrap_or(Error::NoSuchCall))
    }
}

pub fn debug_write(b: &[u8]) -> Result<u64, Error> {
    result(call(
        sc::DEBUG_WRITE,
        [b.as_ptr() as u64, b.len() as u64, 0, 0, 0, 0],
    ))
}
pub fn console_read(b: &mut [u8]) -> Result<u64, Error> {
    result(call(
        sc::CONSOLE_READ,
        [b.as_mut_ptr() as u64, b.len() as u64, 0, 0, 0, 0],
    ))
}
pub fn frame_alloc(owner: u64, frame: u64) -> Result<u64, Error> {
    result(call(sc::FRAME_ALLOC, [owner, frame, 0, 0, 0, 0]))
}
pub fn frame_free(frame: u64) -> Result<u64, Error> {
    result(call(sc::FRAME_FREE, [frame, 0, 0, 0, 0, 0]))
}
pub fn map(env: u64, va: u64, frame: u64, flags: u64) -> Result<u64, Error> {
    result(call(sc::MAP, [env, va, frame, flags, 0, 0]))
}
pub fn map_from(env: u64, va: u64, src: u64, flags: u64) -> Result<u64, Error> {
    result(call(sc::MAP_FROM, [env, va, src, flags, 0, 0]))
}
pub fn slice_alloc(env: u64, pos: u64) -> Result<u64, Error> {
    result(call(sc::SLICE_ALLOC, [env, pos, 0, 0, 0, 0]))
}
pub fn slice_free(pos: u64) -> Result<u64, Error> {
    result(call(sc::SLICE_FREE, [pos, 0, 0, 0, 0, 0]))
}
pub fn yield_to(env: u64) -> Result<u64, Error> {
    result(call1(sc::YIELD_TO, env))
}
pub fn set_pct_entry(env: u64, entry: u64, stack: u64) -> Result<u64, Error> {
    result(call(sc::SET_PCT_ENTRY, [env, entry, stack, 0, 0, 0]))
}
pub fn unmap(env: u64, va: u64) -> Result<u64, Error> {
    result(call(sc::UNMAP, [env, va, 0, 0, 0, 0]))
}
pub fn protect(env: u64, va: u64, flags: u64) -> Result<u64, Error> {
    result(call(sc::PROTECT, [env, va, flags, 0, 0, 0]))
}
pub fn env_create() -> Result<u64, Error> {
    result(call0(sc::ENV_CREATE))
}
pub fn env_destroy(env: u64) -> Result<u64, Error> {
    result(call(sc::ENV_DESTROY, [env, 0, 0, 0, 0, 0]))
}
pub fn env_set_regs(env: u64, r: &Regs) -> Result<u64, Error> {
    result(call(
        sc::ENV_SET_REGS,
        [env, r as *const Regs as u64, 0, 0, 0, 0],
    ))
}
pub fn env_get_regs(env: u64, r: &mut Regs) -> Result<u64, Error> {
    result(call(
        sc::ENV_GET_REGS,
        [env, r as *mut Regs as u64, 0, 0, 0, 0],
    ))
}
pub fn env_run(env: u64) -> Result<u64, Error> {
    result(call(sc::ENV_RUN, [env, 0, 0, 0, 0, 0]))
}
pub fn set_exception_handler(env: u64, entry: u64, stack: u64, save: u64) -> Result<u64, Error> {
    result(call(
        sc::SET_EXCEPTION_HANDLER,
        [env, entry, stack, save, 0, 0],
    ))
}
pub fn yield_now() {
    call0(sc::YIELD);
}
pub fn exit(code: i32) -> ! {
    call(sc::EXIT, [code as u64, 0, 0, 0, 0, 0]);
    unreachable!("exit returned")
}
pub fn self_id() -> u64 {
    call0(sc::SELF_ID) as u64
}
pub fn shutdown(code: u64) -> Result<u64, Error> {
    result(call(sc::SHUTDOWN, [code, 0, 0, 0, 0, 0]))
}
