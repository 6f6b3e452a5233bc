//! Capabilities themselves: deriving, revoking and granting (paper 000
//! §3.3).

use super::Args;
use crate::cap::Rights;
use crate::state::Kernel;
use abi::Error;

pub fn cap_derive(k: &mut Kernel, Args([slot, rights, ..]): Args) -> Result<u64, Error> {
    let parent = k.cred(slot)?;
    let rights = Rights::from_bits(rights)?;
    let c = k.mem.caps.derive(parent, rights)?;
    let me = k.space_owner(k.current());
    k.envs[me].clist.insert(k.mem.caps, c).inspect_err(|_| {
        let _ = k.mem.caps.revoke(c);
    })
}

pub fn cap_revoke(k: &mut Kernel, Args([slot, env, cred, ..]): Args) -> Result<u64, Error> {
    // Another environment's list (to take back a loan) needs a
    // credential covering that environment.
    let s = k.space_owner(k.env_arg(env, cred)?);
    let c = k.envs[s].clist.get(slot)?;
    // An environment's root guards the environment itself: revoking it
    // would leave environments nobody can act on.
    if k.envs.iter().any(|e| e.guard == c) {
        return Err(Error::NotPermitted);
    }
    let n = k.mem.caps.revoke(c)?;
    k.envs[s].clist.clear(slot)?;
    Ok(n as u64)
}

pub fn cap_grant(k: &mut Kernel, Args([env, slot, cred, ..]): Args) -> Result<u64, Error> {
    let s = k.env_arg(env, cred)?;
    k.grant(slot, s)
}
