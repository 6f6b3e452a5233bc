//! The CPU: yielding, time slices, exit, and protected control transfer.

use super::ret;
use crate::cap::rights;
use crate::env::notify;
use crate::state::kernel;
use abi::layout::{USER_END, USER_MIN};
use abi::syscall::SLICE_ANY;
use abi::tables::SLICES;
use abi::Error;

pub extern "sysv64" fn yield_(_: u64, _: u64, _: u64, _: u64, _: u64, _: u64) -> i64 {
    kernel().schedule();
    0
}

pub extern "sysv64" fn exit(code: u64, parent_bits: u64, cred: u64, _: u64, _: u64, _: u64) -> i64 {
    kernel().exit_telling_parent(code as i32, parent_bits, cred);
    0
}

pub extern "sysv64" fn slice_alloc(env: u64, pos: u64, cred: u64, _: u64, _: u64, _: u64) -> i64 {
    let k = kernel();
    ret((|| {
        let s = k.env_arg(env, cred)?;
        k.slice_alloc(s, (pos != SLICE_ANY).then_some(pos))
    })())
}

pub extern "sysv64" fn slice_free(pos: u64, cred: u64, _: u64, _: u64, _: u64, _: u64) -> i64 {
    let k = kernel();
    ret((|| {
        let p = usize::try_from(pos).ok().filter(|&p| p < SLICES).ok_or(Error::NoSlice)?;
        let owner = k.slice_env[p];
        if owner == crate::env::NONE {
            return Err(Error::NotPermitted);
        }
        k.caps.check(k.cred(cred)?, k.envs[owner as usize].guard, rights::WRITE)?;
        k.slice_free(p);
        Ok(0)
    })())
}

pub extern "sysv64" fn slice_upcalls(env: u64, on: u64, cred: u64, _: u64, _: u64, _: u64) -> i64 {
    let k = kernel();
    ret((|| {
        let s = k.env_arg(env, cred)?;
        if on > 1 {
            return Err(Error::BadFlags);
        }
        let e = &mut k.envs[s];
        e.notify = (e.notify & !notify::SLICE_UPCALLS) | if on == 1 { notify::SLICE_UPCALLS } else { 0 };
        Ok(0)
    })())
}

pub extern "sysv64" fn yield_to(env: u64, _: u64, _: u64, _: u64, _: u64, _: u64) -> i64 {
    ret(kernel().yield_to(env))
}

pub extern "sysv64" fn set_pct_entry(env: u64, entry: u64, stack: u64, guard: u64, cred: u64, _: u64) -> i64 {
    let k = kernel();
    ret((|| {
        let s = k.env_arg(env, cred)?;
        if entry >= USER_END || (entry != 0 && !(USER_MIN..=USER_END).contains(&stack)) {
            return Err(Error::BadAddress);
        }
        let guard = k.guard_arg(guard)?;
        let e = &mut k.envs[s];
        (e.pct_entry, e.pct_stack, e.pct_guard) = (entry, stack, guard);
        Ok(0)
    })())
}

pub extern "sysv64" fn pct(target: u64, flags: u64, rdx: u64, r10: u64, r8: u64, r9: u64) -> i64 {
    ret(kernel().pct(target, flags, [rdx, r10, r8, r9]))
}

pub extern "sysv64" fn interrupts_take(_: u64, _: u64, _: u64, _: u64, _: u64, _: u64) -> i64 {
    ret(Ok(kernel().interrupts_take()))
}
