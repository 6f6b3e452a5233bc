//! Lifetimes: handing a subtree to an ancestor, hearing of a child's end
//! (`lifetime.rs`).

use super::Args;
use crate::cap::Rights;
use crate::state::Kernel;
use abi::Error;

pub fn env_move(k: &mut Kernel, Args([env, to, cred, ..]): Args) -> Result<u64, Error> {
    let s = k.child_arg(env, cred, Rights::WRITE)?;
    let to = k.env_slot(to)?;
    k.env_move(s, to)?;
    Ok(0)
}

pub fn env_exit_bits(k: &mut Kernel, Args([env, bits, cred, ..]): Args) -> Result<u64, Error> {
    let s = k.child_arg(env, cred, Rights::WRITE)?;
    // Only the parent's address space may ask: the bits go to the parent,
    // past its interrupt guard.
    let parent = k.envs[s].parent().ok_or(Error::NotPermitted)?.slot();
    if k.space_owner(k.current()) != k.space_owner(parent) {
        return Err(Error::NotPermitted);
    }
    k.envs[s].exit_bits = bits;
    Ok(0)
}
