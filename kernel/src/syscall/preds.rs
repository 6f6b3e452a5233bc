//! Downloaded wakeup predicates (see `predicate.rs`).

use super::Args;
use crate::cap::Rights;
use crate::state::Kernel;
use abi::Error;

pub fn pred_install(
    k: &mut Kernel,
    Args([insns, n, regions, nregions, cred, ..]): Args,
) -> Result<u64, Error> {
    let me = k.current;
    k.caps.check(k.cred(cred)?, k.envs[me].guard, Rights::WRITE)?;
    k.pred_install(insns, n, regions, nregions)
}

pub fn pred_free(k: &mut Kernel, Args([id, ..]): Args) -> Result<u64, Error> {
    k.pred_free(id)
}

pub fn sleep(k: &mut Kernel, Args([pred, deadline, ..]): Args) -> Result<u64, Error> {
    k.sleep(pred, deadline)
}
