//! Downloaded wakeup predicates (see `predicate.rs`).

use super::ret;
use crate::cap::rights;
use crate::state::kernel;

pub extern "sysv64" fn pred_install(
    insns: u64,
    n: u64,
    regions: u64,
    nregions: u64,
    cred: u64,
    _: u64,
) -> i64 {
    let k = kernel();
    ret((|| {
        let me = k.current;
        k.caps.check(k.cred(cred)?, k.envs[me].guard, rights::WRITE)?;
        k.pred_install(insns, n, regions, nregions)
    })())
}

pub extern "sysv64" fn pred_free(id: u64, _: u64, _: u64, _: u64, _: u64, _: u64) -> i64 {
    ret(kernel().pred_free(id))
}

pub extern "sysv64" fn sleep(pred: u64, deadline: u64, _: u64, _: u64, _: u64, _: u64) -> i64 {
    ret(kernel().sleep(pred, deadline))
}
