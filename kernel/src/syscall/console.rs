//! The console, identity and power: calls that concern only the caller
//! (and `shutdown`, which needs a credential covering the first
//! environment).

use super::Args;
use crate::arch::serial;
use crate::cap::Rights;
use crate::state::Kernel;
use crate::uaccess;
use abi::Error;

pub fn debug_write(k: &mut Kernel, Args([ptr, len, ..]): Args) -> Result<u64, Error> {
    uaccess::with_bytes(k.pml4(), ptr, len, crate::log::write_bytes).map(|_| len)
}

pub fn console_read(k: &mut Kernel, Args([ptr, len, ..]): Args) -> Result<u64, Error> {
    let mut buf = [0u8; 64];
    let want = len.min(buf.len() as u64) as usize;
    if want == 0 {
        return Err(Error::BadLength);
    }
    uaccess::check_writable(k.pml4(), ptr, len.min(uaccess::MAX_LEN + 1))?;
    let mut n = 0;
    while n < want {
        match serial::read_byte() {
            Some(b) => {
                buf[n] = b;
                n += 1;
            }
            None => break,
        }
    }
    uaccess::write(k.pml4(), ptr, &buf[..n]).map(|_| n as u64)
}

pub fn self_id(k: &mut Kernel, _: Args) -> Result<u64, Error> {
    // The null call of the benchmarks. Indexed with a bounds check rather
    // than by `Slot` (which masks): the check's cold panic path lets the
    // compiler leave the frame-pointer prologue off the fast path of this
    // leaf, two instructions fewer than the mask costs.
    Ok(k.envs.as_slice()[k.current().index()].id().raw() as u64)
}

pub fn shutdown(k: &mut Kernel, Args([code, cred, ..]): Args) -> Result<u64, Error> {
    let root = k.root();
    k.mem.caps.check(k.cred(cred)?, k.envs[root].guard, Rights::WRITE)?;
    crate::kprintln!("shutdown requested with code {}", code as i64);
    k.power_off(code as i64)
}

pub fn console_notify(k: &mut Kernel, Args([env, bits, cred, ..]): Args) -> Result<u64, Error> {
    let root = k.root();
    k.mem.caps.check(k.cred(cred)?, k.envs[root].guard, Rights::WRITE)?;
    let s = k.env_slot(env)?;
    if k.envs[s].exc.save == 0 {
        return Err(Error::BadState);
    }
    k.console.listen(k.envs[s].id().raw(), bits);
    Ok(0)
}
