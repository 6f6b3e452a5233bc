//! Linux process ids. A process is an environment, but Linux programs
//! expect init to be PID 1 and pids to be small, positive `int`s that are
//! not reused soon; environment ids are `generation * 4096 + slot`
//! (`abi::tables::env_slot`), the first process's typically 0x1001. So a
//! process's pid is its environment id counted from the first process's,
//! plus one, modulo `PID_SPACE`:
//!
//!   pid = 1 + (env - first) mod PID_SPACE
//!
//! The first process is 1, the next slots 2, 3, ...; the kernel takes
//! slots in turn, so a slot is reused only after the others, with pid +
//! 4096, and a pid comes back only after `PID_SPACE / 4096` rounds of the
//! whole table (32,768 processes or threads made, as with Linux's default
//! `pid_max`). `PID_SPACE` is a multiple of 4096, so a pid
//! names its slot (`(pid - 1 + first) mod 4096`) and no two live processes
//! share a pid; the inverse looks at that slot and checks. Everything is a
//! function of the environment id and the first process's id, which every
//! process inherits (lxrt's statics are copied at fork), so all processes
//! agree without sharing anything, and the kernel's environment table stays
//! the truth about which process lives.

use abi::tables::{env_slot, env_state, ENV_SLOTS};
use user::kinfo;

/// Pids run from 1 to this: Linux's default `pid_max`. The kernel takes
/// environment slots in turn, so pids grow by about one per process or
/// thread made, as Linux's do, and wrap here (before, slots were reused
/// lowest first and a pid grew by the table's size per reuse: 3074, 314372).
pub const PID_SPACE: u32 = 1 << 15;

const _: () = assert!((PID_SPACE as usize).is_multiple_of(ENV_SLOTS), "a pid must name its slot");

/// The first process's environment id (inherited
/// by every process at fork).
fn first() -> u32 {
    crate::env::first()
}

/// The first process (the caller) is environment `env`: pid 1.
pub fn set_first(env: u32) {
    crate::env::set_first(env);
}

/// The pid of environment `env`.
pub fn of(env: u32) -> u32 {
    1 + env.wrapping_sub(first()) % PID_SPACE
}

/// The environment that has `pid` now (live or a zombie), if any.
pub fn env(pid: u32) -> Option<u32> {
    if pid == 0 || pid > PID_SPACE {
        return None;
    }
    let slot = (env_slot(first()) + pid as usize - 1) % ENV_SLOTS;
    let e = kinfo::env(slot);
    (e.state != env_state::FREE && e.id != 0 && of(e.id) == pid).then_some(e.id)
}
