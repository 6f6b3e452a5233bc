//! Nesting (paper 003): a child's whole state as plain data, and a parent
//! standing between its children and the kernel (`docs/nesting.md`).

use crate::exception::Regs;

/// The version of [`EnvState`] this ABI describes; `env_state_set` refuses
/// a record of another version (`BadFlags`).
pub const ENV_STATE_VERSION: u32 = 1;

/// Everything about an environment that is not in its memory, its
/// capability list or the exposed tables (frames charged to it, slices it
/// owns), as one record (`env_state_get`, `env_state_set`). Nothing that
/// names a kernel object is an absolute kernel reference: the PCT guard is
/// a slot of the environment's own list, the sleep predicate one of its own
/// predicates, the environment waited on an id.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct EnvState {
    pub version: u32,
    /// What it does when run (`abi::tables::env_state`): `RUNNABLE`,
    /// `SLEEPING` (on `sleep_pred` until `sleep_until`) or `WAITING` (for
    /// `waiting_on`'s reply). `env_stop` keeps this while it is held.
    pub run: u32,
    pub regs: Regs,
    /// 1 if it is inside a system call: it resumes with SYSRET, so only
    /// `rax`, `rsp`, `rip`, `rflags` and the callee-saved registers come
    /// back (the call clobbers the others). `env_state_set` with 0 restores
    /// every register.
    pub in_syscall: u64,
    pub fs_base: u64,
    pub gs_base: u64,
    /// Its exception entry point, stack and save area (0: no handler).
    pub exc_entry: u64,
    pub exc_stack: u64,
    pub exc_save: u64,
    /// Its protected-control-transfer entry (0: closed), stack, and the
    /// slot of its own list holding the entry's guard (`NO_GUARD`: none;
    /// [`GUARD_ELSEWHERE`]: a capability it does not hold).
    pub pct_entry: u64,
    pub pct_stack: u64,
    pub pct_guard: u64,
    /// Its `slice_upcalls` mode (0, `UPCALLS_BOTH`, `UPCALLS_STARTS`).
    pub slice_upcalls: u64,
    /// Interrupt bits queued for it, and who sent the last ones.
    pub interrupts: u64,
    pub interrupt_from: u64,
    /// Its wait inside the kernel, as data (see `run`).
    pub sleep_pred: u64,
    pub sleep_until: u64,
    pub waiting_on: u64,
    /// The word it shows in the exposed environment table.
    pub published: u64,
    /// The event it is held on for its interposer (see [`Event`]).
    pub event: Event,
    /// Its FXSAVE image (x87, MMX, SSE registers, MXCSR).
    pub fxsave: [u8; 512],
}

impl Default for EnvState {
    fn default() -> Self {
        EnvState {
            version: 0,
            run: 0,
            regs: Regs::default(),
            in_syscall: 0,
            fs_base: 0,
            gs_base: 0,
            exc_entry: 0,
            exc_stack: 0,
            exc_save: 0,
            pct_entry: 0,
            pct_stack: 0,
            pct_guard: 0,
            slice_upcalls: 0,
            interrupts: 0,
            interrupt_from: 0,
            sleep_pred: 0,
            sleep_until: 0,
            waiting_on: 0,
            published: 0,
            event: Event::default(),
            fxsave: [0; 512],
        }
    }
}

/// `EnvState::pct_guard`: the guard is a capability the environment does
/// not itself hold (its creator's, say); `env_state_set` refuses it.
pub const GUARD_ELSEWHERE: u64 = u64::MAX - 1;

/// What an interposed environment did that its interposer must answer
/// (`kind == NONE`: nothing pending).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Event {
    pub kind: u64,
    /// The interposer it is for: the nearest ancestor that interposed on
    /// the environment (others see it but leave it to that one).
    pub to: u64,
    /// The system-call number.
    pub number: u64,
    /// Its six argument registers (`rdi rsi rdx r10 r8 r9`).
    pub args: [u64; 6],
    /// For `RESULT`: what the call returned (`rax`).
    pub value: u64,
}

/// `Event::kind` values.
pub mod event {
    pub const NONE: u64 = 0;
    /// A kernel system call (its number is `>= syscall::BASE`).
    pub const SYSCALL: u64 = 1;
    /// A foreign system call the kernel would reflect to the environment's
    /// own handler (a Linux binary's `syscall`).
    pub const FOREIGN: u64 = 2;
    /// A kernel call let through has returned `value`, without switching
    /// environments (a call that switched, such as `yield`, has no result
    /// event). `answer::RETURN` replaces the value.
    pub const RESULT: u64 = 3;
    /// A fault (`number` = the vector, `args[0]` = the error code,
    /// `args[1]` = the faulting address of a page fault), before the
    /// kernel delivers it to the environment's own handler.
    /// `answer::PASS` delivers it (or ends the environment if it cannot
    /// take it); `answer::RETURN` resumes the faulting instruction (the
    /// interposer has fixed the cause: mapped the page, say).
    pub const EXCEPTION: u64 = 4;
}

/// One mapping of an address space (`env_mappings`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Mapping {
    pub va: u64,
    pub frame: u64,
    /// `syscall::map` flags.
    pub flags: u64,
}

/// One capability of a list (`env_caps`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct CapInfo {
    pub slot: u64,
    /// `syscall::rights` bits.
    pub rights: u64,
    /// [`cap_kind`].
    pub kind: u64,
    /// For `DERIVED`: the slot of the same list holding what it was derived
    /// from ([`NO_SLOT`] if the list does not hold that any more, or for
    /// the other kinds), so a list is recreated by names relative to itself.
    pub from: u64,
}

/// `CapInfo::from`: none.
pub const NO_SLOT: u64 = u64::MAX;

/// `CapInfo::kind` values: how the capability relates to the environment.
pub mod cap_kind {
    /// Its own root (its guard).
    pub const OWN: u64 = 0;
    /// A loan from someone else (`cap_grant`, a PCT grant).
    pub const LOAN: u64 = 1;
    /// Derived from one of its own.
    pub const DERIVED: u64 = 2;
}

/// One wakeup predicate of an environment as data (`env_pred_get`,
/// `env_pred_install`); its instructions travel beside it.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct PredInfo {
    /// Its id ([`PRED_ANY`] to `env_pred_install`: any free one).
    pub id: u64,
    /// How many eBPF instructions it has.
    pub insns: u64,
    /// How many of `regions` it reads: addresses in the environment's own
    /// space, so the record stays true wherever that space is rebuilt.
    pub nregions: u64,
    pub regions: [crate::syscall::Region; crate::syscall::PRED_REGIONS],
}

/// `PredInfo::id` for `env_pred_install`: the kernel picks the id.
pub const PRED_ANY: u64 = u64::MAX;

/// `intercept_answer` modes.
pub mod answer {
    /// Let the call through: the kernel carries it out as if uninterposed
    /// (a result: returned as it is).
    pub const PASS: u64 = 0;
    /// The call returns the given value without the kernel acting on it.
    pub const RETURN: u64 = 1;
    /// The environment stays held, without its event, which is given back
    /// as what it stands for (as `env_state_set` gives a record's): a call
    /// not yet made is made again when it is released (and seen again), a
    /// result is returned as it is, an exception's instruction re-runs (a
    /// trap's, `#DB` or `#BP`, is done: it goes on after it). Its
    /// interposer may then change its state and release it (`env_run`):
    /// the debugger stub (`nest::debug`).
    pub const HOLD: u64 = 2;
}
