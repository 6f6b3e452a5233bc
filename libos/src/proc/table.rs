//! The process table: readable by every process (paper 000 §5.2.1: `ps`
//! is just a read of it), each entry writable only by its owner.
//!
//! A process is one environment, named here by the environment's id (its
//! Linux pid is derived from it: `pid.rs`). Its entry is one page in a frame charged to its environment, published in
//! the kernel's environment table (`env_publish`) and guarded
//! (`frame_share`) by a read-only capability every process holds. Others
//! map it read-only, by frame name, into a window indexed by environment
//! slot; the owner maps it writable. The kernel thus enforces that only the
//! process itself and its ancestors, which own its environment (a parent's
//! `setpgid` on its child, as Linux allows), can write it. Everything else
//! a process's state depends on comes from the kernel's table, which nobody
//! can forge: whether it lives, its parent, its exit status.
//!
//! A parent keeps its children's entries mapped until it reaps them, so a
//! zombie's entry (its process group, its command) outlives its frames'
//! owner: the kernel frees a frame only when its last mapping goes.

use crate::layout::{PAGE, PROCS};
use crate::scoped::Scoped;
use abi::syscall::{map as mf, rights, CRED_SELF, ENV_SELF, FRAME_ANY};
use abi::tables::{env_slot, env_state, EnvInfo};
use user::{kinfo, sys};

/// Marks a page as a process-table entry (other environments may publish
/// other words).
const MAGIC: u64 = u64::from_le_bytes(*b"lxproc\0\x01");

#[repr(C)]
#[derive(Clone, Copy)]
pub struct Entry {
    magic: u64,
    /// Its environment and its parent's (0 for the first process).
    pub env: u32,
    pub parent: u32,
    /// Its process group and session, as Linux pids (a group outlives its
    /// leader, so it is named by number).
    pub pgid: u32,
    pub sid: u32,
    /// Job control: stopped now (by signal `stop_sig`), and how many times
    /// it has stopped and been continued (a parent's `wait4` reports each
    /// change once).
    pub stopped: u8,
    pub stop_sig: u8,
    /// Set while its parent is held for it (`vfork.rs`): until it execs or
    /// ends.
    pub vfork: u8,
    pub stops: u32,
    pub conts: u32,
    /// CPU time of its reaped children and theirs, in nanoseconds.
    pub children_ns: u64,
    pub cmd: [u8; 64],
    /// Its nice value and scheduling policy (Linux's numbers: kept and
    /// shown, not acted on), and the name it gave itself
    /// (`PR_SET_NAME`; empty: the program's, from `cmd`).
    pub nice: i8,
    pub policy: u8,
    pub name: [u8; 16],
}

/// This process's view of the table (`proc::Process::ptable`).
pub struct View {
    /// The capability slot for mapping others' entries, and the one a
    /// child being forked receives it in.
    cred: u64,
    child_cred: u64,
}

impl View {
    pub const INITIAL: View = View { cred: 0, child_cred: 0 };
}

#[inline]
fn with_view<R>(f: impl FnOnce(&mut View) -> R) -> R {
    super::with_process(|p| f(&mut p.ptable))
}

/// The capability slot that lets this process map others' entries
/// (read-only) and send them signals.
pub fn cred() -> u64 {
    with_view(|v| v.cred)
}

/// The frame mapped at window slot `slot` (0: none), read from the page
/// table itself: a copy in the process state (4,096 words) cost every fork
/// its copying and its clearing in the child.
fn mapped(slot: usize) -> u32 {
    crate::selfmap::pte(PROCS + slot as u64 * PAGE).map_or(0, |e| abi::pte::frame_of(e) as u32)
}

fn window(env: u32) -> u64 {
    PROCS + env_slot(env) as u64 * PAGE
}

/// A copy of this process's own entry.
pub fn mine() -> Entry {
    // SAFETY: mapped at its window slot before any code runs that calls
    // this (`init_first`, `forked_child`); volatile, as a parent may write
    // it between our reads (`setpgid` on a child).
    unsafe { core::ptr::read_volatile(window(super::env()) as *const Entry) }
}

/// Guards the only `&mut` to our own entry.
static OWN: Scoped<()> = Scoped::new("this process's entry", ());

/// Runs `f` on this process's own entry; panics if it is running already.
pub fn update_mine<R>(f: impl FnOnce(&mut Entry) -> R) -> R {
    OWN.with(|_| {
        // SAFETY: mapped writable as for `mine`; the guard makes this the
        // only reference to it.
        f(unsafe { &mut *(window(super::env()) as *mut Entry) })
    })
}

/// The entry of environment `env`, if it is (or was, for our zombies) a
/// process.
pub fn get(env: u32) -> Option<&'static Entry> {
    let info = kinfo::env_by_id(env as u64)?;
    let frame = u32::try_from(info.published).ok().filter(|&f| f != 0)?;
    let slot = env_slot(env);
    let va = window(env);
    let now = mapped(slot);
    if now != frame {
        if now != 0 {
            let _ = sys::unmap(ENV_SELF, va);
        }
        sys::map_with(ENV_SELF, va, frame as u64, 0, CRED_SELF, cred()).ok()?;
    }
    // SAFETY: a page mapped at `va` just above; entries are plain data.
    let e = unsafe { &*(va as *const Entry) };
    (e.magic == MAGIC && e.env == env).then_some(e)
}

/// The entry of process `pid` (a Linux pid), if it is one.
pub fn by_pid(pid: u32) -> Option<&'static Entry> {
    get(super::pid::env(pid)?)
}

/// Unmaps environment `env`'s entry (a reaped child), so its frame can go.
pub fn forget(env: u32) {
    let slot = env_slot(env);
    if mapped(slot) != 0 {
        let _ = sys::unmap(ENV_SELF, window(env));
    }
}

/// Every process the kernel's table shows, live or exited, with its entry.
pub fn all() -> impl Iterator<Item = (EnvInfo, &'static Entry)> {
    kinfo::envs().filter_map(|info| entry_of(&info).map(|e| (info, e)))
}

/// The entry of the process in the kernel's table entry `info`, if it is
/// one (`all`'s test, for a scan that looks at every environment).
pub fn entry_of(info: &EnvInfo) -> Option<&'static Entry> {
    if info.state == env_state::FREE || info.published == 0 {
        return None;
    }
    get(info.id)
}

/// Whether environment `env` lives (has not exited).
pub fn alive(env: u32) -> bool {
    kinfo::env_by_id(env as u64).is_some_and(|e| e.state != env_state::EXITED && e.state != env_state::FREE)
}

/// The Linux parent pid of the process in `e`: 0 for init, 1 (init) for an
/// orphan whose parent has ended, as Linux reparents it.
pub fn ppid(e: &Entry) -> u32 {
    match e.parent {
        0 => 0,
        p if alive(p) => super::pid::of(p),
        _ => 1,
    }
}

/// Makes an entry for environment `env` (this one, or a child being
/// forked), filled by `fill`: mapped writable at its window slot here (a
/// parent may write its child's entry) and, for a child, in the child.
fn create(env: u64, fill: impl FnOnce(&mut Entry)) -> Result<(), abi::Error> {
    let id = if env == ENV_SELF { sys::self_id() } else { env } as u32;
    let va = window(id);
    // Whatever entry of an earlier user of the slot we had mapped goes.
    forget(id);
    let frame = sys::frame_alloc(env, FRAME_ANY)?;
    let made = (|| {
        sys::frame_share(frame, cred())?;
        sys::map(ENV_SELF, va, frame, mf::WRITE)?;
        // SAFETY: the page was just mapped writable at `va`.
        let e = unsafe { &mut *(va as *mut Entry) };
        // Like Linux's init, the first process starts in group and session
        // 0 (until it makes its own); a child's are its parent's.
        *e = Entry {
            magic: MAGIC,
            env: id,
            parent: 0,
            pgid: 0,
            sid: 0,
            stopped: 0,
            stop_sig: 0,
            vfork: 0,
            stops: 0,
            conts: 0,
            children_ns: 0,
            cmd: [0; 64],
            nice: 0,
            policy: 0,
            name: [0; 16],
        };
        fill(e);
        if env != ENV_SELF {
            sys::map(env, va, frame, mf::WRITE)?;
        }
        // Only holders of the capability (processes of this tree) may send
        // it signals (interrupting transfers); plain transfers stay closed.
        sys::set_pct_entry_guarded(env, 0, 0, cred())?;
        sys::env_publish(env, frame)
    })();
    if let Err(e) = made {
        forget(id);
        let _ = sys::frame_free(frame);
        return Err(e);
    }
    Ok(())
}

/// The first process: derives the capability that lets every process read
/// entries, and makes its own.
pub fn init_first() -> Result<(), abi::Error> {
    let cred = sys::cap_derive(CRED_SELF, rights::READ | rights::GRANT)?;
    with_view(|v| v.cred = cred);
    create(ENV_SELF, |_| {})
}

/// Fork, in the parent: makes child `env`'s entry (a copy of ours with the
/// child's pid and us as parent) and grants the child the capability. The
/// entry stays mapped here until the child is reaped.
/// `held`: we wait for it to exec or end (`vfork.rs`).
pub fn fork_entry(env: u64, held: bool) -> Result<(), abi::Error> {
    let me = mine();
    create(env, |e| {
        (e.parent, e.pgid, e.sid, e.cmd, e.vfork) = (me.env, me.pgid, me.sid, me.cmd, held as u8);
        (e.nice, e.policy, e.name) = (me.nice, me.policy, me.name);
    })?;
    // The child reads it from its copy of our state.
    let granted = sys::cap_grant(env, cred())?;
    with_view(|v| v.child_cred = granted);
    Ok(())
}

/// First thing in a forked child: the capability it was granted is the
/// one it maps entries with (its window holds only its own entry, which
/// the parent mapped there: the page table says so, `mapped`).
pub fn forked_child() {
    with_view(|v| v.cred = v.child_cred);
}

/// Changes a child's entry (we own its environment, and keep its entry
/// mapped writable from fork until we reap it).
pub fn write_child(env: u32, f: impl FnOnce(&mut Entry)) -> Result<(), abi::Error> {
    let frame = kinfo::env_by_id(env as u64).map_or(0, |e| e.published);
    if frame == 0 || mapped(env_slot(env)) as u64 != frame {
        return Err(abi::Error::BadEnv);
    }
    // SAFETY: mapped writable at its window slot by `fork_entry`.
    let e = unsafe { &mut *(window(env) as *mut Entry) };
    if e.magic != MAGIC || e.env != env {
        return Err(abi::Error::BadEnv);
    }
    f(e);
    Ok(())
}

/// Records the command line: the arguments, each ended by NUL (as
/// `/proc/PID/cmdline`), cut to fit.
pub fn set_cmd(argv: &[alloc::vec::Vec<u8>]) {
    let mut cmd = [0; 64];
    let mut n = 0;
    for a in argv {
        for &b in a.iter().chain(b"\0") {
            if n < cmd.len() - 1 {
                cmd[n] = b;
                n += 1;
            }
        }
    }
    // A new program takes its own name (exec resets `PR_SET_NAME`'s).
    update_mine(|e| (e.cmd, e.name) = (cmd, [0; 16]));
}
