//! A tracer (paper 003 §5.3, like `strace`): runs a subtree interposed and
//! reports each of its system calls with arguments and result. It is an
//! ordinary program's loop over `interpose` and `intercept_wait`
//! (see `docs/nesting.md`).

use abi::nest::{answer, event, Event};
use abi::syscall as sc;
use abi::Error;
use core::fmt::{self, Write};
use user::nest;

/// Names and argument counts of the kernel's calls, by number.
const CALLS: &[(u64, &str, usize)] = &[
    (sc::DEBUG_WRITE, "debug_write", 2),
    (sc::CONSOLE_READ, "console_read", 2),
    (sc::FRAME_ALLOC, "frame_alloc", 3),
    (sc::FRAME_FREE, "frame_free", 2),
    (sc::MAP, "map", 6),
    (sc::UNMAP, "unmap", 3),
    (sc::PROTECT, "protect", 4),
    (sc::ENV_CREATE, "env_create", 1),
    (sc::ENV_DESTROY, "env_destroy", 2),
    (sc::ENV_SET_REGS, "env_set_regs", 3),
    (sc::ENV_GET_REGS, "env_get_regs", 3),
    (sc::ENV_RUN, "env_run", 2),
    (sc::SET_EXCEPTION_HANDLER, "set_exception_handler", 5),
    (sc::YIELD, "yield", 0),
    (sc::EXIT, "exit", 3),
    (sc::SELF_ID, "self_id", 0),
    (sc::SHUTDOWN, "shutdown", 2),
    (sc::MAP_FROM, "map_from", 5),
    (sc::SLICE_ALLOC, "slice_alloc", 3),
    (sc::SLICE_FREE, "slice_free", 2),
    (sc::YIELD_TO, "yield_to", 1),
    (sc::SET_PCT_ENTRY, "set_pct_entry", 5),
    (sc::PCT, "pct", 2),
    (sc::CAP_DERIVE, "cap_derive", 2),
    (sc::CAP_REVOKE, "cap_revoke", 3),
    (sc::CAP_GRANT, "cap_grant", 3),
    (sc::FRAME_SHARE, "frame_share", 3),
    (sc::SLICE_UPCALLS, "slice_upcalls", 3),
    (sc::FRAMES_RECLAIM, "frames_reclaim", 3),
    (sc::SET_REPOSSESSION_VECTOR, "set_repossession_vector", 3),
    (sc::PRED_INSTALL, "pred_install", 5),
    (sc::PRED_FREE, "pred_free", 1),
    (sc::SLEEP, "sleep", 2),
    (sc::MAP_FROM_RANGE, "map_from_range", 6),
    (sc::PROTECT_RANGE, "protect_range", 5),
    (sc::ENV_PUBLISH, "env_publish", 3),
    (sc::INTERRUPTS_TAKE, "interrupts_take", 0),
    (sc::CONSOLE_NOTIFY, "console_notify", 3),
    (sc::ENV_STOP, "env_stop", 2),
    (sc::ENV_STATE_GET, "env_state_get", 3),
    (sc::ENV_STATE_SET, "env_state_set", 3),
    (sc::ENV_MAPPINGS, "env_mappings", 5),
    (sc::ENV_CAPS, "env_caps", 4),
    (sc::INTERPOSE, "interpose", 3),
    (sc::INTERCEPT_ANSWER, "intercept_answer", 4),
    (sc::ENV_LIMIT, "env_limit", 4),
    (sc::INTERCEPT_WAIT, "intercept_wait", 6),
    (sc::ENV_CAP_COPY, "env_cap_copy", 4),
    (sc::ENV_CREATE_SHARED, "env_create_shared", 2),
];

/// Names of the Linux calls busybox makes, for foreign calls (the
/// personality answers them in user space, so their results are not seen).
const LINUX: &[(u64, &str)] = &[
    (0, "read"),
    (1, "write"),
    (2, "open"),
    (3, "close"),
    (4, "stat"),
    (5, "fstat"),
    (8, "lseek"),
    (9, "mmap"),
    (10, "mprotect"),
    (11, "munmap"),
    (12, "brk"),
    (13, "rt_sigaction"),
    (14, "rt_sigprocmask"),
    (16, "ioctl"),
    (20, "writev"),
    (39, "getpid"),
    (56, "clone"),
    (57, "fork"),
    (59, "execve"),
    (60, "exit"),
    (61, "wait4"),
    (63, "uname"),
    (72, "fcntl"),
    (79, "getcwd"),
    (89, "readlink"),
    (102, "getuid"),
    (157, "prctl"),
    (158, "arch_prctl"),
    (218, "set_tid_address"),
    (231, "exit_group"),
    (257, "openat"),
    (273, "set_robust_list"),
    (302, "prlimit64"),
    (318, "getrandom"),
    (334, "rseq"),
];

/// One call as `name(a, b) = result`, the way strace shows it.
struct Call<'a>(&'a Event, Option<u64>);

impl fmt::Display for Call<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ev = self.0;
        let n = if ev.kind == event::FOREIGN {
            match LINUX.iter().find(|l| l.0 == ev.number) {
                Some((_, name)) => write!(f, "linux:{name}(")?,
                None => write!(f, "linux:{}(", ev.number)?,
            }
            6
        } else {
            match CALLS.iter().find(|c| c.0 == ev.number) {
                Some(&(_, name, n)) => {
                    write!(f, "{name}(")?;
                    n
                }
                None => {
                    write!(f, "call_{:#x}(", ev.number)?;
                    6
                }
            }
        };
        for (i, a) in ev.args[..n].iter().enumerate() {
            write!(f, "{}{a:#x}", if i == 0 { "" } else { ", " })?;
        }
        match self.1 {
            None => write!(f, ") = ?"),
            Some(v) if (v as i64) < 0 => match Error::from_result(v as i64) {
                Some(e) => write!(f, ") = {} ({e:?})", v as i64),
                None => write!(f, ") = {}", v as i64),
            },
            Some(v) => write!(f, ") = {v:#x}"),
        }
    }
}

/// Calls waiting for their result at once, at most: one per environment
/// slot (4,096 of them) was a table bigger than a program's stack.
const PENDING: usize = 64;

/// The calls made and not yet seen to return: (slot, id, call).
struct Pending {
    calls: [Option<(usize, u64, Event)>; PENDING],
    /// Which entry a call goes to when all are taken.
    evict: usize,
}

impl Pending {
    /// The entry of the call slot `slot` made, if it waits.
    fn of(&self, slot: usize) -> Option<usize> {
        self.calls.iter().position(|c| c.is_some_and(|(s, ..)| s == slot))
    }

    /// Records a call; when every entry is taken, the one it replaces is
    /// returned, to be reported as a call with no result yet.
    fn put(&mut self, call: (usize, u64, Event)) -> Option<(usize, u64, Event)> {
        let i = self.calls.iter().position(Option::is_none).unwrap_or_else(|| {
            self.evict = (self.evict + 1) % PENDING;
            self.evict
        });
        self.calls[i].replace(call)
    }
}

/// Traces the subtree of `root` (already interposed and started) until
/// `root` exits, writing one line per call to `out`. `policy` may answer
/// a call of an environment (by id) itself (`Some(value)`: the kernel
/// never sees it). Returns the exit code of `root`.
pub fn run(
    root: u64,
    mut policy: impl FnMut(u64, &Event) -> Option<u64>,
    out: &mut dyn Write,
) -> Result<i32, Error> {
    // The calls environments made and have not seen return.
    let mut pending = Pending { calls: [None; PENDING], evict: 0 };
    let code = nest::serve(root, |slot, id, ev| {
        let mine = pending.of(slot);
        if ev.kind == event::RESULT {
            let _ = writeln!(out, "[{id:#x}] {}", Call(ev, Some(ev.value)));
            if let Some(i) = mine {
                pending.calls[i] = None;
            }
            return (answer::PASS, 0);
        }
        if let Some((_, pid, old)) = mine.and_then(|i| pending.calls[i].take()) {
            let _ = writeln!(out, "[{pid:#x}] {}", Call(&old, None));
        }
        match policy(id, ev) {
            Some(v) => {
                let _ = writeln!(out, "[{id:#x}] {} (answered by the tracer)", Call(ev, Some(v)));
                (answer::RETURN, v)
            }
            None => {
                if let Some((_, pid, old)) = pending.put((slot, id, *ev)) {
                    let _ = writeln!(out, "[{pid:#x}] {}", Call(&old, None));
                }
                (answer::PASS, 0)
            }
        }
    })?;
    // Calls that never returned a result (exit, yield, a switch).
    for (_, pid, ev) in pending.calls.iter().flatten() {
        let _ = writeln!(out, "[{pid:#x}] {}", Call(ev, None));
    }
    Ok(code)
}
