//! The process table, in the shared arena so any process can read it (a
//! `ps` is just a read of it, as in ExOS, paper 000 §5.2.1).
//!
//! What is enforced: nothing beyond what the shared arena itself gives. By
//! convention a process writes only its own slot (state, exit status,
//! command) and its parent only frees a dead child's slot; a buggy process
//! could scribble over others. Exit status is also cross-checked against
//! the kernel's environment table, which no process can forge: a waiter
//! that finds a child's environment gone without a recorded status reports
//! it as killed (SIGKILL).

use crate::shared;

pub const SLOTS: usize = 128;

pub const FREE: u8 = 0;
pub const RUNNING: u8 = 1;
pub const ZOMBIE: u8 = 2;

#[repr(C)]
#[derive(Clone, Copy)]
pub struct Slot {
    pub pid: u32,
    pub ppid: u32,
    /// The Veneer environment running it.
    pub env: u32,
    pub state: u8,
    /// Linux wait status once a zombie.
    pub status: i32,
    pub pgid: u32,
    /// Signals sent to it and not yet acted on (bit n = signal n).
    pub pending: u64,
    pub cmd: [u8; 48],
}

#[repr(C)]
pub struct ProcTable {
    pub next_pid: u32,
    pub slots: [Slot; SLOTS],
}

pub fn table() -> &'static mut ProcTable {
    &mut shared::get().procs
}

pub fn by_pid(pid: u32) -> Option<&'static mut Slot> {
    // The slot found last is tried first: every Linux call looks up the
    // caller's own slot (for pending signals), and that one rarely moves.
    let hint = LAST.load(core::sync::atomic::Ordering::Relaxed);
    let slots = &mut table().slots;
    if slots.get(hint).is_some_and(|s| s.state != FREE && s.pid == pid) {
        return slots.get_mut(hint);
    }
    let i = slots.iter().position(|s| s.state != FREE && s.pid == pid)?;
    LAST.store(i, core::sync::atomic::Ordering::Relaxed);
    slots.get_mut(i)
}

/// Index of the slot `by_pid` found last (a hint, checked before use).
static LAST: core::sync::atomic::AtomicUsize = core::sync::atomic::AtomicUsize::new(0);

/// A new slot with a fresh pid.
pub fn alloc(ppid: u32, env: u32, pgid: u32) -> Option<&'static mut Slot> {
    let t = table();
    t.next_pid += 1;
    let pid = t.next_pid;
    let s = t.slots.iter_mut().find(|s| s.state == FREE)?;
    *s = Slot {
        pid,
        ppid,
        env,
        state: RUNNING,
        status: 0,
        pgid: if pgid == 0 { pid } else { pgid },
        pending: 0,
        cmd: [0; 48],
    };
    Some(s)
}

pub fn set_cmd(s: &mut Slot, argv: &[alloc::vec::Vec<u8>]) {
    s.cmd = [0; 48];
    let mut n = 0;
    for a in argv {
        for &b in a.iter().chain(b" ") {
            if n < s.cmd.len() {
                s.cmd[n] = b;
                n += 1;
            }
        }
    }
}
