//! The CPU: yielding, time slices, exit, and protected control transfer.

use super::Args;
use crate::cap::Rights;
use crate::env::notify;
use crate::state::Kernel;
use abi::layout::{USER_END, USER_MIN};
use abi::syscall::SLICE_ANY;
use abi::tables::SLICES;
use abi::Error;

/// Inlined into its entry: the body of a measured fast path.
#[inline(always)]
pub fn yield_(k: &mut Kernel, _: Args) -> Result<u64, Error> {
    // A library's lock let go before the yield ends the holder's streak
    // (`section.rs`); only a streak under way can end, so the save area
    // is read only while one is (the common yield reads one word).
    if k.sections.any_under_way() {
        let_go_unless_held(k);
    }
    k.schedule();
    Ok(0)
}

/// `yield_`'s check while some streak is under way: the caller's ends
/// unless it still claims the hold.
#[cold]
#[inline(never)]
fn let_go_unless_held(k: &mut Kernel) {
    let c = k.current();
    if k.save_area(c).is_some_and(|f| f.upcalls_off & abi::exception::critical::HOLDS == 0) {
        let id = k.envs[c].id().raw();
        k.sections.let_go(c.index(), id);
    }
}

pub fn exit(k: &mut Kernel, Args([code, parent_bits, cred, ..]): Args) -> Result<u64, Error> {
    k.exit_telling_parent(code as i32, parent_bits, cred);
    Ok(0)
}

pub fn slice_alloc(k: &mut Kernel, Args([env, pos, cred, ..]): Args) -> Result<u64, Error> {
    let s = k.env_arg(env, cred)?;
    k.within_limits(s, 0, 1)?;
    k.slice_alloc(s, (pos != SLICE_ANY).then_some(pos))
}

pub fn slice_free(k: &mut Kernel, Args([pos, cred, ..]): Args) -> Result<u64, Error> {
    let p = usize::try_from(pos).ok().filter(|&p| p < SLICES).ok_or(Error::NoSlice)?;
    let owner = k.sched.owner(p).ok_or(Error::NotPermitted)?;
    k.mem.caps.check(k.cred(cred)?, k.envs[owner].guard, Rights::WRITE)?;
    k.slice_free(p);
    Ok(0)
}

pub fn slice_upcalls(k: &mut Kernel, Args([env, on, cred, ..]): Args) -> Result<u64, Error> {
    let s = k.env_arg(env, cred)?;
    let bits = notify::of_mode(on).ok_or(Error::BadFlags)?;
    let e = &mut k.envs[s];
    e.notify = (e.notify & !(notify::SLICE_UPCALLS | notify::SLICE_ENDS)) | bits;
    Ok(0)
}

pub fn yield_to(k: &mut Kernel, Args([env, ..]): Args) -> Result<u64, Error> {
    k.yield_to(env)
}

pub fn set_pct_entry(k: &mut Kernel, Args([env, entry, stack, guard, cred, ..]): Args) -> Result<u64, Error> {
    let s = k.env_arg(env, cred)?;
    if entry >= USER_END || (entry != 0 && !(USER_MIN..=USER_END).contains(&stack)) {
        return Err(Error::BadAddress);
    }
    let guard = k.guard_arg(guard)?;
    let e = &mut k.envs[s];
    (e.pct_entry, e.pct_stack, e.pct_guard) = (entry, stack, guard);
    Ok(0)
}

/// The general path of protected control transfer (`pct_fast` hands it
/// what it does not handle, with the arguments intact).
pub fn pct(k: &mut Kernel, Args([target, flags, rdx, r10, r8, r9]): Args) -> Result<u64, Error> {
    k.pct(target, flags, [rdx, r10, r8, r9])
}

pub fn interrupts_take(k: &mut Kernel, _: Args) -> Result<u64, Error> {
    Ok(k.interrupts_take())
}
