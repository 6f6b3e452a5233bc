//! pidfd: a descriptor naming one process (`pidfd_open`), readable (poll,
//! select, epoll) once that process has ended, and the target of
//! `pidfd_send_signal` and `waitid(P_PIDFD)`. It names the process by its
//! environment, which the kernel never reuses for another, so a pidfd
//! cannot come to name a newer process with the same pid. Reading or
//! writing one is EINVAL, as on Linux.

use super::flags::{NONBLOCK, RDWR};
use super::{no_ioctl, no_seek, File, Kind, Ops, POLLIN};
use crate::errno::{Errno, EINVAL};
use crate::fs::Stat;
use crate::obj::Handle;
use abi::tables::env_state;
use user::kinfo;

/// The process a pidfd names: its environment and its Linux pid.
pub struct PidFd {
    pub env: u32,
    pub pid: u32,
}

pub static OPS: Ops = Ops { read, write, seek: no_seek, stat, ioctl: no_ioctl, close };

/// A new pidfd for the process of environment `env` (pid `pid`); `flags`
/// may ask for `NONBLOCK`.
pub fn create(env: u32, pid: u32, flags: u32) -> Result<Handle<File>, Errno> {
    super::new_with(Kind::PidFd, (flags & NONBLOCK) | RDWR, PidFd { env, pid })
}

/// The process pidfd `f` names (its environment, its pid).
pub fn target(f: Handle<File>) -> (u32, u32) {
    // SAFETY: a pidfd's object stays while it is open and never changes.
    let p = unsafe { f.obj().handle::<PidFd>().get() };
    (p.env, p.pid)
}

/// Whether the process of environment `env` has ended (a zombie or gone).
pub fn ended(env: u32) -> bool {
    kinfo::env_by_id(env as u64).is_none_or(|e| e.state == env_state::EXITED || e.state == env_state::FREE)
}

/// Readiness for `poll`: readable once the process has ended.
pub fn events(h: Handle<PidFd>) -> u16 {
    // SAFETY: the description keeps its object live; read only.
    if ended(unsafe { h.get() }.env) {
        POLLIN
    } else {
        0
    }
}

fn read(_: &mut File, _: &mut [u8]) -> Result<usize, Errno> {
    Err(EINVAL)
}

fn write(_: &mut File, _: &[u8]) -> Result<usize, Errno> {
    Err(EINVAL)
}

fn stat(_: &File, st: &mut Stat) -> Result<(), Errno> {
    st.mode = 0o600;
    st.blksize = 4096;
    Ok(())
}

fn close(f: &mut File) {
    // SAFETY: made by `create`; its only file is going.
    unsafe { f.object::<PidFd>().free() };
}
