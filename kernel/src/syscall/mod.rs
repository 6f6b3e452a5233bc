//! The system-call table. Every handler validates every argument and
//! answers bad input with a specific `abi::Error`; calls are grouped by the
//! resource they act on.

mod caps;
mod console;
mod cpu;
mod envs;
mod memory;
mod preds;

use crate::state::kernel;
use abi::exception::vector;
use abi::syscall as sc;
use abi::Error;

type Call = unsafe extern "sysv64" fn(u64, u64, u64, u64, u64, u64) -> i64;

/// Indexed by `number - abi::syscall::BASE`; the entry stub calls straight
/// through it.
#[unsafe(no_mangle)]
pub static TABLE: [Call; (sc::END - sc::BASE) as usize] = [
    console::debug_write,
    console::console_read,
    memory::frame_alloc,
    memory::frame_free,
    memory::map,
    memory::unmap,
    memory::protect,
    envs::env_create,
    envs::env_destroy,
    envs::env_set_regs,
    envs::env_get_regs,
    envs::env_run,
    envs::set_exception_handler,
    cpu::yield_,
    cpu::exit,
    console::self_id,
    console::shutdown,
    memory::map_from,
    cpu::slice_alloc,
    cpu::slice_free,
    cpu::yield_to,
    cpu::set_pct_entry,
    crate::arch::pct::pct_fast,
    caps::cap_derive,
    caps::cap_revoke,
    caps::cap_grant,
    memory::frame_share,
    cpu::slice_upcalls,
    memory::frames_reclaim,
    memory::set_repossession_vector,
    preds::pred_install,
    preds::pred_free,
    preds::sleep,
    memory::map_from_range,
    memory::protect_range,
    envs::env_publish,
    cpu::interrupts_take,
    console::console_notify,
];

/// The general path of protected control transfer, where `pct_fast` sends
/// what it does not handle.
pub use cpu::pct as pct_general;

/// A handler's result as the value for `rax`.
fn ret(r: Result<u64, Error>) -> i64 {
    match r {
        Ok(v) => v as i64,
        Err(e) => e.as_result(),
    }
}

/// Called for numbers outside the kernel's range, with every register in
/// the frame: reflected to the environment's handler as the pseudo-vector
/// `SYSCALL` (the kernel knows no other system-call ABI), or refused.
pub extern "C" fn reflect() {
    let k = kernel();
    let c = k.current;
    if k.envs[c].exc.save == 0 {
        k.envs[c].tf.rax = Error::NoSuchCall.as_result() as u64;
    } else if !k.upcall(c, vector::SYSCALL, 0) {
        crate::kprintln!("env {:#x} made a system call inside its exception handler", k.envs[c].id);
        k.exit_current(abi::tables::FAULT_EXIT_BASE - vector::SYSCALL as i32);
    }
}
