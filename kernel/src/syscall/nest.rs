//! Nesting (paper 003): holding a subtree, its state as data, and
//! interposing on its system calls.

use super::Args;
use crate::cap::Rights;
use crate::state::Kernel;
use crate::uaccess;
use abi::nest::{CapInfo, EnvState, Event, Mapping, PredInfo, PRED_ANY};
use abi::syscall::PRED_REGIONS;
use abi::Error;

/// Most records one `env_mappings` or `env_caps` call returns.
const BATCH: usize = 64;

pub fn env_stop(k: &mut Kernel, Args([env, cred, ..]): Args) -> Result<u64, Error> {
    let s = k.child_arg(env, cred, Rights::WRITE)?;
    k.hold_subtree(s);
    Ok(0)
}

pub fn env_state_get(k: &mut Kernel, Args([env, ptr, cred, ..]): Args) -> Result<u64, Error> {
    let s = k.child_arg(env, cred, Rights::READ)?;
    if k.envs[s].state() != crate::env::State::Stopped {
        return Err(Error::BadState);
    }
    let r = k.state_of(s);
    uaccess::write_value(k.pml4(), ptr, &r)?;
    Ok(0)
}

pub fn env_state_set(k: &mut Kernel, Args([env, ptr, cred, ..]): Args) -> Result<u64, Error> {
    let s = k.child_arg(env, cred, Rights::WRITE)?;
    let r: EnvState = uaccess::read_value(k.pml4(), ptr)?;
    k.set_state_of(s, &r)?;
    Ok(0)
}

pub fn env_mappings(k: &mut Kernel, Args([env, start, buf, n, cred, ..]): Args) -> Result<u64, Error> {
    let s = k.child_arg(env, cred, Rights::READ)?;
    let n = usize::try_from(n).ok().filter(|&n| n <= BATCH).ok_or(Error::BadLength)?;
    let size = (n * core::mem::size_of::<Mapping>()) as u64;
    uaccess::check_writable(k.pml4(), buf, size)?;
    let mut out = [Mapping::default(); BATCH];
    let got = k.mappings_of(s, start, &mut out[..n]);
    write_all(k, buf, &out[..got])?;
    Ok(got as u64)
}

pub fn env_caps(k: &mut Kernel, Args([env, buf, n, cred, ..]): Args) -> Result<u64, Error> {
    let s = k.child_arg(env, cred, Rights::READ)?;
    let n = usize::try_from(n).ok().filter(|&n| n <= BATCH).ok_or(Error::BadLength)?;
    uaccess::check_writable(k.pml4(), buf, (n * core::mem::size_of::<CapInfo>()) as u64)?;
    let mut out = [CapInfo::default(); BATCH];
    let got = k.caps_of(s, &mut out[..n]);
    write_all(k, buf, &out[..got])?;
    Ok(got as u64)
}

/// Copies `items` to the caller's `buf` (already checked writable).
fn write_all<T: Copy>(k: &Kernel, buf: u64, items: &[T]) -> Result<(), Error> {
    for (i, item) in items.iter().enumerate() {
        uaccess::write_value(k.pml4(), buf + (i * core::mem::size_of::<T>()) as u64, item)?;
    }
    Ok(())
}

pub fn env_cap_copy(k: &mut Kernel, Args([from, slot, to, cred, ..]): Args) -> Result<u64, Error> {
    let f = k.child_arg(from, cred, Rights::READ)?;
    let t = k.child_arg(to, cred, Rights::WRITE)?;
    if f == t {
        return Err(Error::BadEnv);
    }
    k.copy_cap(f, slot, t)?;
    Ok(0)
}

pub fn interpose(k: &mut Kernel, Args([env, on, cred, ..]): Args) -> Result<u64, Error> {
    let s = k.child_arg(env, cred, Rights::WRITE)?;
    if on > 1 {
        return Err(Error::BadFlags);
    }
    k.interpose(s, k.current(), on == 1);
    Ok(0)
}

pub fn intercept_answer(k: &mut Kernel, Args([env, mode, value, cred, ..]): Args) -> Result<u64, Error> {
    let s = k.child_arg(env, cred, Rights::WRITE)?;
    k.answer(s, mode, value)?;
    Ok(0)
}

pub fn intercept_wait(k: &mut Kernel, Args([root, buf, env, mode, value, cred]): Args) -> Result<u64, Error> {
    let r = k.child_arg(root, cred, Rights::READ)?;
    if !k.is_ancestor(k.envs[k.current()].id(), r) {
        return Err(Error::NotPermitted);
    }
    uaccess::check_writable(k.pml4(), buf, core::mem::size_of::<Event>() as u64)?;
    // The answer is the one change that can fail: made first, or nothing.
    let next = match env {
        0 => None,
        env => {
            let s = k.child_arg(env, cred, Rights::WRITE)?;
            Some(k.answer(s, mode, value)?.unwrap_or(s))
        }
    };
    Ok(k.wait_event(r, buf, next))
}

pub fn env_limit(k: &mut Kernel, Args([env, frames, slices, cred, ..]): Args) -> Result<u64, Error> {
    let s = k.child_arg(env, cred, Rights::WRITE)?;
    k.set_limits(s, frames, slices);
    Ok(0)
}

pub fn env_cap_derive(k: &mut Kernel, Args([to, slot, from, rights, cred, ..]): Args) -> Result<u64, Error> {
    let t = k.child_arg(to, cred, Rights::WRITE)?;
    k.derive_in(t, slot, from, Rights::from_bits(rights)?)?;
    Ok(0)
}

pub fn env_pred_get(k: &mut Kernel, Args([env, from, info, insns, n, cred]): Args) -> Result<u64, Error> {
    let s = k.child_arg(env, cred, Rights::READ)?;
    let (id, code, descs) = k.pred_of(s, from).ok_or(Error::BadState)?;
    if code.len() as u64 > n.saturating_mul(8) {
        return Err(Error::BadLength);
    }
    let mut rec =
        PredInfo { id, insns: code.len() as u64 / 8, nregions: descs.len() as u64, ..PredInfo::default() };
    rec.regions[..descs.len()].copy_from_slice(descs);
    uaccess::check_writable(k.pml4(), info, core::mem::size_of::<PredInfo>() as u64)?;
    uaccess::check_writable(k.pml4(), insns, code.len() as u64)?;
    uaccess::write(k.pml4(), insns, code)?;
    uaccess::write_value(k.pml4(), info, &rec)?;
    Ok(id)
}

pub fn env_pred_install(k: &mut Kernel, Args([env, info, insns, cred, ..]): Args) -> Result<u64, Error> {
    let s = k.child_arg(env, cred, Rights::WRITE)?;
    let rec: PredInfo = uaccess::read_value(k.pml4(), info)?;
    let nregions =
        usize::try_from(rec.nregions).ok().filter(|&n| n <= PRED_REGIONS).ok_or(Error::BadLength)?;
    let want = (rec.id != PRED_ANY).then_some(rec.id);
    k.pred_install_for(k.space_owner(s), want, insns, rec.insns, &rec.regions[..nregions])
}
