//! Nesting calls (paper 003, `docs/nesting.md`): holding a subtree, its
//! state as data, interposing on its system calls.

use crate::sys::{call, result};
use crate::{kinfo, sys};
use abi::nest::{CapInfo, EnvState, Event, Mapping, PredInfo};
use abi::syscall::{self as sc, CRED_SELF};
use abi::tables::{env_slot, env_state, ENV_SLOTS};
use abi::Error;

pub fn env_stop(env: u64) -> Result<u64, Error> {
    result(call(sc::ENV_STOP, [env, CRED_SELF, 0, 0, 0, 0]))
}
pub fn env_state_get(env: u64, st: &mut EnvState) -> Result<u64, Error> {
    result(call(sc::ENV_STATE_GET, [env, st as *mut EnvState as u64, CRED_SELF, 0, 0, 0]))
}
pub fn env_state_set(env: u64, st: &EnvState) -> Result<u64, Error> {
    result(call(sc::ENV_STATE_SET, [env, st as *const EnvState as u64, CRED_SELF, 0, 0, 0]))
}
/// Up to `out.len()` mappings of `env` at or above `start`.
pub fn env_mappings(env: u64, start: u64, out: &mut [Mapping]) -> Result<usize, Error> {
    let n = out.len() as u64;
    result(call(sc::ENV_MAPPINGS, [env, start, out.as_mut_ptr() as u64, n, CRED_SELF, 0])).map(|n| n as usize)
}
pub fn env_caps(env: u64, out: &mut [CapInfo]) -> Result<usize, Error> {
    let n = out.len() as u64;
    result(call(sc::ENV_CAPS, [env, out.as_mut_ptr() as u64, n, CRED_SELF, 0, 0])).map(|n| n as usize)
}
pub fn interpose(env: u64, on: bool) -> Result<u64, Error> {
    result(call(sc::INTERPOSE, [env, on as u64, CRED_SELF, 0, 0, 0]))
}
pub fn intercept_answer(env: u64, mode: u64, value: u64) -> Result<u64, Error> {
    result(call(sc::INTERCEPT_ANSWER, [env, mode, value, CRED_SELF, 0, 0]))
}
/// Recreates `from`'s capability `slot` in the same slot of held `to`.
pub fn env_cap_copy(from: u64, slot: u64, to: u64) -> Result<u64, Error> {
    result(call(sc::ENV_CAP_COPY, [from, slot, to, CRED_SELF, 0, 0]))
}
/// `env`'s first predicate with id `from` or above: its record in `info`,
/// its instructions' bytes at the start of `insns`; returns its id.
pub fn env_pred_get(env: u64, from: u64, info: &mut PredInfo, insns: &mut [u8]) -> Result<u64, Error> {
    let (p, n) = (insns.as_mut_ptr() as u64, insns.len() as u64 / 8);
    result(call(sc::ENV_PRED_GET, [env, from, info as *mut PredInfo as u64, p, n, CRED_SELF]))
}
/// Installs `info`'s predicate (its `info.insns` instructions' bytes in
/// `insns`) for `env`; returns its id.
pub fn env_pred_install(env: u64, info: &PredInfo, insns: &[u8]) -> Result<u64, Error> {
    if insns.len() as u64 != info.insns.saturating_mul(8) {
        return Err(Error::BadLength);
    }
    let (i, p) = (info as *const PredInfo as u64, insns.as_ptr() as u64);
    result(call(sc::ENV_PRED_INSTALL, [env, i, p, CRED_SELF, 0, 0]))
}
/// In held `to`'s `slot`, a capability derived from its own slot `from`.
pub fn env_cap_derive(to: u64, slot: u64, from: u64, rights: u64) -> Result<u64, Error> {
    result(call(sc::ENV_CAP_DERIVE, [to, slot, from, rights, CRED_SELF, 0]))
}
/// Caps `env`'s subtree at `frames` frames and `slices` time slices.
pub fn env_limit(env: u64, frames: u64, slices: u64) -> Result<u64, Error> {
    result(call(sc::ENV_LIMIT, [env, frames, slices, CRED_SELF, 0, 0]))
}

/// Every mapping of `env`, passed one at a time to `f`.
pub fn for_each_mapping(env: u64, mut f: impl FnMut(Mapping) -> Result<(), Error>) -> Result<(), Error> {
    let mut buf = [Mapping::default(); 64];
    let mut start = 0;
    loop {
        let n = env_mappings(env, start, &mut buf)?;
        for m in &buf[..n] {
            f(*m)?;
        }
        if n < buf.len() {
            return Ok(());
        }
        start = buf[n - 1].va + 4096;
    }
}

/// Whether `id` is `root` or below it (by the exposed table's parents).
pub fn in_subtree(mut id: u64, root: u64) -> bool {
    for _ in 0..ENV_SLOTS {
        if id == root {
            return true;
        }
        match kinfo::env_by_id(id) {
            Some(e) if e.parent != 0 => id = e.parent as u64,
            _ => return false,
        }
    }
    false
}

/// Frames held by the subtree of `top` (by the exposed table).
pub fn subtree_frames(top: u64) -> u64 {
    (0..ENV_SLOTS)
        .map(kinfo::env)
        .filter(|e| e.id != 0 && in_subtree(e.id as u64, top))
        .map(|e| e.frames)
        .sum()
}

/// Answers `env`'s held event (if `env` is not 0) with `mode` and `value`,
/// then waits for the next event for this interposer in `root`'s subtree
/// (`abi::syscall::INTERCEPT_WAIT`): `Some(id)` of the held environment,
/// its event in `ev`; `None` when none can come (`root` has ended, or all
/// of its subtree is held).
pub fn intercept_wait(
    root: u64,
    ev: &mut Event,
    env: u64,
    mode: u64,
    value: u64,
) -> Result<Option<u64>, Error> {
    let buf = ev as *mut Event as u64;
    result(call(sc::INTERCEPT_WAIT, [root, buf, env, mode, value, CRED_SELF]))
        .map(|id| (id != 0).then_some(id))
}

/// The interposer's loop (paper 003 §3.2): until `root` exits, hands
/// every event of its (interposed) subtree that is for this interposer (a
/// nearer one inside the subtree answers its own) to `answer`, with the
/// environment's slot and id, and answers as it says (`(mode, value)`,
/// see `abi::nest::answer`), each answer and the wait for the next event
/// one kernel call. Returns `root`'s exit code.
pub fn serve(root: u64, mut answer: impl FnMut(usize, u64, &Event) -> (u64, u64)) -> Result<i32, Error> {
    let mut ev = Event::default();
    let mut reply = (0, 0, 0);
    loop {
        let (env, mode, value) = core::mem::take(&mut reply);
        if let Some(id) = intercept_wait(root, &mut ev, env, mode, value)? {
            let (mode, value) = answer(env_slot(id as u32), id, &ev);
            reply = (id, mode, value);
            continue;
        }
        match kinfo::env_by_id(root) {
            Some(e) if e.state == env_state::EXITED => return Ok(e.exit_code),
            // All of it is held: whoever holds it must act first.
            Some(_) => sys::yield_now(),
            None => return Err(Error::BadEnv),
        }
    }
}
