//! Capabilities themselves: deriving, revoking and granting (paper 000
//! §3.3).

use super::ret;
use crate::state::kernel;
use abi::Error;

pub extern "sysv64" fn cap_derive(slot: u64, rights: u64, _: u64, _: u64, _: u64, _: u64) -> i64 {
    let k = kernel();
    ret((|| {
        let parent = k.cred(slot)?;
        let rights = u32::try_from(rights).map_err(|_| Error::BadFlags)?;
        let c = k.caps.derive(parent, rights)?;
        let me = k.current;
        k.envs[me].clist.insert(k.caps, c).inspect_err(|_| {
            let _ = k.caps.revoke(c);
        })
    })())
}

pub extern "sysv64" fn cap_revoke(slot: u64, env: u64, cred: u64, _: u64, _: u64, _: u64) -> i64 {
    let k = kernel();
    ret((|| {
        // Another environment's list (to take back a loan) needs a
        // credential covering that environment.
        let s = k.env_arg(env, cred)?;
        let c = k.envs[s].clist.get(slot)?;
        // An environment's root guards the environment itself: revoking it
        // would leave environments nobody can act on.
        if k.envs.iter().any(|e| e.guard == c) {
            return Err(Error::NotPermitted);
        }
        let n = k.caps.revoke(c)?;
        k.envs[s].clist.clear(slot)?;
        Ok(n as u64)
    })())
}

pub extern "sysv64" fn cap_grant(env: u64, slot: u64, cred: u64, _: u64, _: u64, _: u64) -> i64 {
    let k = kernel();
    ret((|| {
        let s = k.env_arg(env, cred)?;
        k.grant(slot, s)
    })())
}
