//! XN's system calls (`abi::syscall::XN_*`, `docs/xn.md`) and its exposed
//! tables: the buffer-cache registry and the block-state map, read
//! without a call.

use crate::sys::{call, call0, call1, result};
use abi::layout::{XN_BLOCKS_VA, XN_REGISTRY_VA};
use abi::syscall as sc;
use abi::xn::{registry_slot, Change, Claim, Extent, Info, Modify, RegEntry, Root, RootAdd, TemplateSpec};
use abi::Error;

pub fn info() -> Result<Info, Error> {
    let mut i = Info::default();
    result(call1(sc::XN_INFO, &mut i as *mut Info as u64)).map(|_| i)
}

pub fn install(specs: &[TemplateSpec], cred: u64) -> Result<u64, Error> {
    result(call(sc::XN_INSTALL, [specs.as_ptr() as u64, specs.len() as u64, cred, 0, 0, 0]))
}

pub fn template(name: &str) -> Result<u64, Error> {
    result(call(sc::XN_TEMPLATE, [name.as_ptr() as u64, name.len() as u64, 0, 0, 0, 0]))
}

pub fn root_add(req: &RootAdd, cred: u64) -> Result<u64, Error> {
    result(call(sc::XN_ROOT_ADD, [req as *const RootAdd as u64, cred, 0, 0, 0, 0]))
}

/// The root's index and entry.
pub fn root_find(name: &str) -> Result<(u64, Root), Error> {
    let mut r = Root::default();
    let a = [name.as_ptr() as u64, name.len() as u64, &mut r as *mut Root as u64, 0, 0, 0];
    result(call(sc::XN_ROOT_FIND, a)).map(|i| (i, r))
}

pub fn read(parent: u64, start: u64, frames: &[u64], cred: u64) -> Result<u64, Error> {
    result(call(sc::XN_READ, [parent, start, frames.as_ptr() as u64, frames.len() as u64, cred, 0]))
}

pub fn insert(parent: u64, block: u64, frame: u64, cred: u64) -> Result<u64, Error> {
    result(call(sc::XN_INSERT, [parent, block, frame, cred, 0, 0]))
}

pub fn bind(parent: u64, block: u64, va: u64, write: bool, cred: u64) -> Result<u64, Error> {
    result(call(sc::XN_BIND, [parent, block, va, write as u64, cred, 0]))
}

/// Binds the cached blocks `start..start + count` and maps them from `va`.
pub fn bind_run(parent: u64, start: u64, count: u64, va: u64, write: bool, cred: u64) -> Result<u64, Error> {
    result(call(sc::XN_BIND_RUN, [parent, start, count, va, write as u64, cred]))
}

pub fn modify(changes: &[Change], alloc: &[Extent], free: &[Extent], cred: u64) -> Result<u64, Error> {
    let m = Modify {
        changes: changes.as_ptr() as u64,
        nchanges: changes.len() as u64,
        alloc: alloc.as_ptr() as u64,
        nalloc: alloc.len() as u64,
        free: free.as_ptr() as u64,
        nfree: free.len() as u64,
    };
    result(call(sc::XN_MODIFY, [&m as *const Modify as u64, cred, 0, 0, 0, 0]))
}

pub fn write(start: u64, count: u64) -> Result<u64, Error> {
    result(call(sc::XN_WRITE, [start, count, 0, 0, 0, 0]))
}

/// XCP's write: cached blocks `src..src + count` to blocks `dst..`.
pub fn copy(parent: u64, dst: u64, src: u64, count: u64, cred: u64) -> Result<u64, Error> {
    result(call(sc::XN_COPY, [parent, dst, src, count, cred, 0]))
}

/// The caller stored into cached data blocks `start..start + count`.
pub fn dirty(start: u64, count: u64) -> Result<u64, Error> {
    result(call(sc::XN_DIRTY, [start, count, 0, 0, 0, 0]))
}

pub fn flush() -> Result<u64, Error> {
    result(call0(sc::XN_FLUSH))
}

pub fn lock(block: u64) -> Result<u64, Error> {
    result(call1(sc::XN_LOCK, block))
}

pub fn unlock(block: u64) -> Result<u64, Error> {
    result(call1(sc::XN_UNLOCK, block))
}

pub fn evict(block: u64) -> Result<u64, Error> {
    result(call1(sc::XN_EVICT, block))
}

/// The claims of metadata block `block` (into `out`); how many it has.
pub fn claims(block: u64, out: &mut [Claim]) -> Result<u64, Error> {
    result(call(sc::XN_CLAIMS, [block, out.as_mut_ptr() as u64, out.len() as u64, 0, 0, 0]))
}

pub fn parent(block: u64) -> Result<u64, Error> {
    result(call1(sc::XN_PARENT, block))
}

pub fn identity(uid: u32, gid: u32, cred: u64) -> Result<u64, Error> {
    result(call(sc::XN_IDENTITY, [uid as u64, gid as u64, cred, 0, 0, 0]))
}

/// Block `b`'s `abi::xn::state` byte (the disk has `nblocks`).
pub fn state(b: u64, nblocks: u64) -> u8 {
    if b >= nblocks {
        return 0;
    }
    // SAFETY: the kernel maps the block-state map read-only at this
    // address, one byte per block of the mounted disk.
    unsafe { core::ptr::read_volatile((XN_BLOCKS_VA + b) as *const u8) }
}

/// Block `b`'s registry entry, if it is cached (`slots` from `info`).
pub fn entry(b: u64, slots: u64) -> Option<RegEntry> {
    if slots == 0 || b == 0 {
        return None;
    }
    let mut i = registry_slot(b, slots);
    for _ in 0..slots {
        // SAFETY: the kernel maps `slots` registry entries read-only here.
        let e = unsafe { core::ptr::read_volatile((XN_REGISTRY_VA as *const RegEntry).add(i as usize)) };
        match e.block {
            0 => return None,
            x if x == b => return Some(e),
            _ => i = (i + 1) & (slots - 1),
        }
    }
    None
}

/// Every registry entry in use (a scan of the table).
pub fn entries(slots: u64) -> impl Iterator<Item = RegEntry> {
    (0..slots).filter_map(|i| {
        // SAFETY: as in `entry`.
        let e = unsafe { core::ptr::read_volatile((XN_REGISTRY_VA as *const RegEntry).add(i as usize)) };
        (e.block != 0).then_some(e)
    })
}
