//! Signals, as far as lxrt goes so far: dispositions are recorded
//! (`rt_sigaction`), a signal a process raises on itself (SIGPIPE) or
//! finds pending in its process-table slot (sent with `kill`, checked at
//! every Linux call) takes its default action or is ignored. Running a
//! program's own handler needs a signal frame on its stack, which is not
//! done yet: such a signal is logged and treated as ignored.

use super::table;

pub const SIGKILL: u32 = 9;
pub const SIGPIPE: u32 = 13;
pub const SIGCHLD: u32 = 17;
pub const SIGCONT: u32 = 18;
pub const SIGURG: u32 = 23;
pub const SIGWINCH: u32 = 28;

const SIG_DFL: u64 = 0;
const SIG_IGN: u64 = 1;

/// `struct sigaction` as the kernel ABI has it.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct Action {
    pub handler: u64,
    pub flags: u64,
    pub restorer: u64,
    pub mask: u64,
}

static mut ACTIONS: [Action; 65] = [Action { handler: 0, flags: 0, restorer: 0, mask: 0 }; 65];
static mut MASK: u64 = 0;

pub fn actions() -> &'static mut [Action; 65] {
    // SAFETY: private to this process; one thread.
    unsafe { &mut (*(&raw mut ACTIONS)) }
}

pub fn mask() -> &'static mut u64 {
    // SAFETY: as above.
    unsafe { &mut (*(&raw mut MASK)) }
}

fn ignored_by_default(sig: u32) -> bool {
    matches!(sig, SIGCHLD | SIGCONT | SIGURG | SIGWINCH)
}

/// Acts on signal `sig` delivered to this process.
pub fn raise_self(sig: u32) {
    let a = actions()[sig as usize];
    match a.handler {
        SIG_IGN => {}
        SIG_DFL if ignored_by_default(sig) => {}
        SIG_DFL => super::exit::exit(sig as i32 & 0x7f),
        _ => crate::log::once("signal handler (not run)", 1000 + sig as u64),
    }
}

/// Whether a signal this process does not block is waiting for it.
pub fn pending() -> bool {
    table::by_pid(super::pid()).is_some_and(|s| s.pending & !*mask() != 0)
}

/// Acts on signals other processes left in our slot.
pub fn check_pending() {
    let Some(s) = table::by_pid(super::pid()) else {
        return;
    };
    let p = s.pending & !*mask();
    if p == 0 {
        return;
    }
    s.pending &= !p;
    for sig in 1..64 {
        if p & (1 << sig) != 0 {
            raise_self(sig);
        }
    }
}

/// exec: caught signals go back to their default action.
pub fn reset_on_exec() {
    for a in actions().iter_mut() {
        if a.handler > SIG_IGN {
            *a = Action::default();
        }
    }
}
