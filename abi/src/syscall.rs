//! System-call numbers and argument conventions.
//!
//! Calling convention: `syscall` with the number in `rax` and arguments in
//! `rdi, rsi, rdx, r10, r8, r9`. The result comes back in `rax`: a value
//! `>= 0` on success or `-(Error as i64)` on failure. The kernel preserves
//! every register except `rax`, `rcx` and `r11` (the last two are clobbered
//! by the SYSCALL instruction itself).
//!
//! Veneer's own calls are numbered from [`BASE`] so that numbers below it
//! (a Linux binary's `syscall`s, say) are never mistaken for kernel calls:
//! the kernel reflects those to the environment's registered handler.

/// First kernel system-call number.
pub const BASE: u64 = 0x1_0000;

/// Write `len` bytes at `ptr` to the console. Returns `len`.
pub const DEBUG_WRITE: u64 = BASE;
/// Read up to `len` bytes of console input into `ptr` without blocking.
/// Returns the number of bytes read (0 when none are waiting).
pub const CONSOLE_READ: u64 = BASE + 1;
/// `frame_alloc(owner, frame)`: allocate physical frame number `frame`
/// (or any free frame if `frame == FRAME_ANY`), charged to environment
/// `owner` (the caller or one of its descendants). Returns the frame number.
pub const FRAME_ALLOC: u64 = BASE + 2;
/// `frame_free(frame)`: free a frame owned by the caller or a descendant.
/// The frame must not be mapped anywhere.
pub const FRAME_FREE: u64 = BASE + 3;
/// `map(env, va, frame, flags)`: map `frame` at page-aligned `va` in `env`'s
/// address space. Both must be the caller's or a descendant's.
pub const MAP: u64 = BASE + 4;
/// `unmap(env, va)`: remove the mapping at `va` in `env`'s address space.
pub const UNMAP: u64 = BASE + 5;
/// `protect(env, va, flags)`: change the rights of the mapping at `va`.
pub const PROTECT: u64 = BASE + 6;
/// `env_create()`: create a child environment with an empty address space,
/// not yet runnable. Returns its id.
pub const ENV_CREATE: u64 = BASE + 7;
/// `env_destroy(env)`: destroy `env` (the caller, or a descendant) and
/// everything created under it, reclaiming all of their frames.
pub const ENV_DESTROY: u64 = BASE + 8;
/// `env_set_regs(env, &Regs)`: set the saved registers of a descendant.
pub const ENV_SET_REGS: u64 = BASE + 9;
/// `env_get_regs(env, &mut Regs)`: read the saved registers of a descendant.
pub const ENV_GET_REGS: u64 = BASE + 10;
/// `env_run(env)`: make a descendant runnable.
pub const ENV_RUN: u64 = BASE + 11;
/// `set_exception_handler(env, entry, stack_top, save_area)`: where the
/// kernel delivers `env`'s exceptions (see [`crate::exception`]).
/// `entry == 0` removes the handler.
pub const SET_EXCEPTION_HANDLER: u64 = BASE + 12;
/// Give up the rest of the current time slice.
pub const YIELD: u64 = BASE + 13;
/// `exit(code)`: end the calling environment. Its frames and descendants are
/// reclaimed at once; its slot stays, with the code, until the parent
/// destroys it.
pub const EXIT: u64 = BASE + 14;
/// Returns the caller's own environment id.
pub const SELF_ID: u64 = BASE + 15;
/// `shutdown(code)`: power the machine off with an exit code. Only the first
/// environment may call it.
pub const SHUTDOWN: u64 = BASE + 16;

/// `map_from(env, va, src_va, flags)`: map the frame the caller has at its
/// own `src_va` into `env` (the caller or a descendant) at `va`, with
/// `flags` no wider than the caller's own rights there. This is how a
/// process passes on pages it can use but does not own (shared memory it
/// inherited, copy-on-write pages at fork).
pub const MAP_FROM: u64 = BASE + 17;

/// `slice_alloc(env, position)`: give `env` (the caller or a descendant)
/// the time slice at `position` in the slice vector, or any free one if
/// `position == SLICE_ANY`. Returns the position.
pub const SLICE_ALLOC: u64 = BASE + 18;
/// `slice_free(position)`: free a slice owned by the caller or a descendant.
pub const SLICE_FREE: u64 = BASE + 19;
/// `yield_to(env)`: give the rest of the current slice to `env` (directed
/// yield). It must be runnable.
pub const YIELD_TO: u64 = BASE + 20;
/// `set_pct_entry(env, entry, stack)`: where protected control transfers
/// into `env` (the caller or a descendant) start (`entry == 0` closes it).
pub const SET_PCT_ENTRY: u64 = BASE + 21;
/// `pct(target, flags)`: protected control transfer into `target`
/// (paper 001 §4.6). The registers `rdx r8 r9 r10 rbx rbp r12-r15` are the
/// message and reach the target untouched; `rax` holds the caller's id on
/// arrival. If `target` awaits a reply from the caller, it resumes where it
/// called; otherwise it starts at its entry point on its entry stack.
/// `flags & PCT_SYNC`: synchronous — the caller waits for the reply and its
/// slices run the target meanwhile; otherwise asynchronous — only the rest
/// of this slice is donated.
pub const PCT: u64 = BASE + 22;

/// One past the last kernel call.
pub const END: u64 = BASE + 23;

/// `slice_alloc` position meaning "any free slice".
pub const SLICE_ANY: u64 = u64::MAX;
/// `pct` flag: synchronous transfer.
pub const PCT_SYNC: u64 = 1;

/// Argument to `frame_alloc`: any free frame will do.
pub const FRAME_ANY: u64 = u64::MAX;
/// Environment argument meaning "the caller".
pub const ENV_SELF: u64 = 0;

/// Mapping flags for `map` and `protect`.
pub mod map {
    /// The page may be written.
    pub const WRITE: u64 = 1 << 0;
    /// Instructions may be fetched from the page.
    pub const EXEC: u64 = 1 << 1;
    /// Every defined flag.
    pub const ALL: u64 = WRITE | EXEC;
}
