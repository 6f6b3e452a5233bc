//! `map_fresh`: a run of pages backed by new zeroed frames in one call
//! (issue 26). Spawning a native program mapped its 64-page stack with a
//! `frame_alloc` and a `map` per page: two kernel entries, two credential
//! checks and a walk of the tables from the top for each.

use super::Args;
use crate::mm::PhysTables;
use crate::pagetable;
use crate::state::Kernel;
use crate::validate::{page_range, pte_rights};
use abi::tables::frame_state;
use abi::Error;

pub fn map_fresh(k: &mut Kernel, Args([env, va, pages, flags, cred, ..]): Args) -> Result<u64, Error> {
    let s = k.env_arg(env, cred)?;
    let pte = pte_rights(flags)?;
    let _checked = page_range(va, pages)?;
    let pml4 = k.envs[s].pml4;
    let tables = pagetable::check_empty(&mut PhysTables, pml4, va, pages)?;
    if pages + tables > k.mem.frames.free_count() {
        return Err(Error::NoMemory);
    }
    // The frames are `env`'s, the tables its space's owner's (as `map`'s).
    let owner = k.space_owner(s);
    if owner == s {
        k.within_limits(s, pages + tables, 0)?;
    } else {
        k.within_limits(s, pages, 0)?;
        k.within_limits(owner, tables, 0)?;
    }
    let (id, table_id) = (k.envs[s].id().raw(), k.envs[owner].id().raw());
    // Past the checks nothing fails: enough frames are free for both.
    pagetable::fill(
        &mut PhysTables,
        &mut k.mem,
        pml4,
        va,
        pages,
        |mem| mem.frames.alloc(None, table_id, frame_state::PAGE_TABLE),
        |mem| {
            let f = super::memory::alloc_user(mem, None, id)?;
            mem.frames.add_ref(f)?;
            Ok(pagetable::entry(f, pte))
        },
    )?;
    k.mem.publish_free();
    k.publish(s);
    k.publish(owner);
    Ok(pages)
}
