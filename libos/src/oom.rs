//! Running out of memory, as Linux's OOM killer handles it: when a
//! program's page finds no frame to spare, the largest process (by frames
//! charged to it, the first process excepted) is killed with SIGKILL and a
//! console line naming it, and whoever needs memory waits until the victim
//! has ended and given its frames back. One victim at a time: its pid is in
//! the shared arena, so processes short of memory together do not kill
//! several.

use crate::lock;
use abi::syscall::FRAME_ANY;
use abi::tables::{env_state, EnvInfo};
use core::sync::atomic::Ordering;
use user::{kinfo, sys};

/// Free frames a program's page may not take: they stay for lxrt's own
/// needs (a fork's kits and entries, page tables) while a victim dies.
const RESERVE: u64 = 512;

/// Whether this process may fork: memory is left, or another process is
/// larger (the OOM killer would end that one for the child's pages).
pub fn may_fork() -> bool {
    crate::proc::thread::room_to_create() || largest(&me()).id != crate::proc::env()
}

/// A frame for the program's page at `va`: allocated, or, once a victim
/// has given memory back, allocated then. This process may be the victim.
pub fn frame_for(va: u64) -> u64 {
    loop {
        // The victim's state is read before the free count: the kernel
        // publishes an ended process's frames as free before its state.
        let dying = dying();
        let spare = kinfo::free_frames() >= RESERVE;
        if spare {
            if let Ok(f) = sys::frame_alloc(crate::proc::env() as u64, FRAME_ANY) {
                return f;
            }
        }
        let victim = match dying {
            Some(v) => v,
            None => match choose(va, !spare) {
                Some(v) => v,
                None => continue,
            },
        };
        if victim.id == crate::proc::env() {
            crate::proc::exit::exit(crate::proc::signal::SIGKILL as i32);
        }
        wait();
    }
}

/// The victim chosen earlier, if it has not ended yet.
fn dying() -> Option<EnvInfo> {
    let pid = crate::shared::oom_victim().load(Ordering::Acquire);
    kinfo::env_by_id(pid as u64).filter(|e| pid != 0 && live(e))
}

fn live(e: &EnvInfo) -> bool {
    e.state != env_state::FREE && e.state != env_state::EXITED
}

fn me() -> EnvInfo {
    kinfo::env_by_id(crate::proc::env() as u64).unwrap_or_default()
}

/// The largest process by frames charged (the first process only if it is
/// `me`), or `me` if none is larger.
fn largest(me: &EnvInfo) -> EnvInfo {
    kinfo::envs()
        .filter(|e| live(e) && e.parent != 0 && e.published != 0)
        .max_by_key(|e| e.frames)
        .filter(|e| e.frames > me.frames || me.parent == 0)
        .unwrap_or(*me)
}

/// Picks the largest process of the tree (this one if there is no other),
/// names it on the console and kills it. `None` if another process chose a
/// victim first or, when the caller found too few frames free (`short`),
/// memory came back while it looked: the caller tries again. (A caller
/// refused with frames free is over its quota: it chooses at once.)
fn choose(va: u64, short: bool) -> Option<EnvInfo> {
    let me = me();
    let chosen = crate::shared::oom_victim();
    let before = chosen.load(Ordering::Acquire);
    let mut victim = largest(&me);
    // Read after the states `largest` saw: the frames of any process it
    // found ended are counted here.
    let free = kinfo::free_frames();
    if short && free >= RESERVE {
        return None;
    }
    chosen.compare_exchange(before, victim.id, Ordering::AcqRel, Ordering::Acquire).ok()?;
    // Its name is read while it lives: once killed, its entry goes.
    let mut name = cmd_of(victim.id);
    // One we may not signal (not of this tree) cannot be made to end. One
    // that has ended already (its own fault saw it chosen, `dying`) is not
    // refused: its memory is coming back (the chooser once killed itself).
    if victim.id != me.id
        && crate::proc::signal::send(victim.id, crate::proc::signal::SIGKILL).is_err()
        && kinfo::env_by_id(victim.id as u64).is_some_and(|e| live(&e))
    {
        victim = me;
        chosen.store(me.id, Ordering::Release);
        name = cmd_of(me.id);
    }
    let cmd = name.split(|&b| b == 0).next().unwrap_or(b"");
    let base = cmd.rsplit(|&b| b == b'/').next().unwrap_or(b"");
    crate::log::note(format_args!(
        "out of memory: killed process {} ({}), {} KiB; {} frames free when {} needed a page at {va:#x}",
        victim.id,
        core::str::from_utf8(base).unwrap_or("?"),
        victim.frames * 4,
        free,
        me.id
    ));
    Some(victim)
}

/// Process `id`'s command line as its process-table entry holds it (empty
/// if the entry cannot be read).
fn cmd_of(id: u32) -> [u8; 64] {
    crate::proc::table::get(id).map_or([0; 64], |t| t.cmd)
}

/// Lets the victim run and end. A call in progress gives up the lock
/// meanwhile (the victim's exit takes it), as a call waiting on a pipe does.
fn wait() {
    let held = lock::held();
    lock::release();
    sys::yield_now();
    if held {
        lock::reacquire();
    }
}
