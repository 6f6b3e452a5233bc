//! The console, identity and power: calls that concern only the caller
//! (and `shutdown`, which needs a credential covering the first
//! environment).

use super::ret;
use crate::arch::serial;
use crate::cap::rights;
use crate::state::kernel;
use crate::uaccess;
use abi::Error;

pub extern "sysv64" fn debug_write(ptr: u64, len: u64, _: u64, _: u64, _: u64, _: u64) -> i64 {
    let k = kernel();
    ret(uaccess::with_bytes(k.pml4(), ptr, len, crate::log::write_bytes).map(|_| len))
}

pub extern "sysv64" fn console_read(ptr: u64, len: u64, _: u64, _: u64, _: u64, _: u64) -> i64 {
    let k = kernel();
    let mut buf = [0u8; 64];
    let want = len.min(buf.len() as u64) as usize;
    if want == 0 {
        return Error::BadLength.as_result();
    }
    if let Err(e) = uaccess::check_writable(k.pml4(), ptr, len.min(uaccess::MAX_LEN + 1)) {
        return e.as_result();
    }
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
    ret(uaccess::write(k.pml4(), ptr, &buf[..n]).map(|_| n as u64))
}

pub extern "sysv64" fn self_id(_: u64, _: u64, _: u64, _: u64, _: u64, _: u64) -> i64 {
    let k = kernel();
    k.envs[k.current].id as i64
}

pub extern "sysv64" fn shutdown(code: u64, cred: u64, _: u64, _: u64, _: u64, _: u64) -> i64 {
    let k = kernel();
    let root = k.root;
    if let Err(e) = k.cred(cred).and_then(|c| k.caps.check(c, k.envs[root].guard, rights::WRITE)) {
        return e.as_result();
    }
    crate::kprintln!("shutdown requested with code {}", code as i64);
    k.power_off(code as i64)
}

pub extern "sysv64" fn console_notify(env: u64, bits: u64, cred: u64, _: u64, _: u64, _: u64) -> i64 {
    let k = kernel();
    ret((|| {
        let root = k.root;
        k.caps.check(k.cred(cred)?, k.envs[root].guard, rights::WRITE)?;
        let s = k.env_slot(env)?;
        if k.envs[s].exc.save == 0 {
            return Err(Error::BadState);
        }
        k.console_notify = (if bits == 0 { 0 } else { k.envs[s].id }, bits);
        Ok(0)
    })())
}
