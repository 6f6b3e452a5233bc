//! Unix sockets' addresses (`struct sockaddr_un`): a path in the file
//! system, or a name in Linux's abstract namespace (a `sun_path` whose
//! first byte is NUL: exactly the address's bytes, no file behind it,
//! gone when its socket closes), and the name `bind` picks when given the
//! family alone (autobind: a NUL and five hex digits, as Linux).
//!
//! Abstract names live in a directory no path reaches
//! (`node::unix_names`), each entry named by the name's bytes with its
//! leading NUL (so never "", "." or ".."); an entry whose socket has closed is swept by the
//! next bind, and connecting to it is ECONNREFUSED meanwhile, as to a
//! name nobody holds.

use crate::errno::Errno;
use crate::errno::{LxResult, EADDRINUSE, EAGAIN, ECONNREFUSED, EINVAL, EOPNOTSUPP};
use crate::fs::{dir, node, path, Ino, S_IFSOCK};
use crate::obj::{unix, File};
use crate::uaccess;
use alloc::vec::Vec;

const AF_UNIX: u16 = 1;
/// Bytes of a `struct sockaddr_un`.
const SOCKADDR_UN: u64 = 110;

/// The name in the `sockaddr_un` at `addr` (`len` bytes): a path (up to
/// its first NUL), or an abstract name (its leading NUL kept). The family
/// alone is EINVAL (`bind` autobinds before asking).
pub fn parse(addr: u64, len: u64) -> Result<Vec<u8>, Errno> {
    if !(2..=SOCKADDR_UN).contains(&len) {
        return Err(EINVAL);
    }
    let b = uaccess::bytes(addr, len)?;
    if u16::from_ne_bytes([b[0], b[1]]) != AF_UNIX {
        return Err(EINVAL);
    }
    let p = &b[2..];
    if is_abstract(p) {
        return Ok(p.to_vec());
    }
    let p = &p[..p.iter().position(|&c| c == 0).unwrap_or(p.len())];
    if p.is_empty() {
        return Err(if len > 2 { EOPNOTSUPP } else { EINVAL });
    }
    Ok(p.to_vec())
}

fn is_abstract(name: &[u8]) -> bool {
    name.first() == Some(&0)
}

/// Writes `name` as a `sockaddr_un` to `addr`, its length to `*lenp`
/// (truncated to the room given, as Linux does): a path with its NUL, an
/// abstract name as it is.
pub fn put(addr: u64, lenp: u64, name: &[u8]) -> LxResult {
    if addr == 0 {
        return Ok(0);
    }
    let room: u32 = uaccess::get(lenp)?;
    let mut b = Vec::with_capacity(2 + name.len() + 1);
    b.extend_from_slice(&AF_UNIX.to_ne_bytes());
    b.extend_from_slice(name);
    if !name.is_empty() && !is_abstract(name) {
        b.push(0);
    }
    let n = b.len().min(room as usize);
    uaccess::write(addr, &b[..n])?;
    uaccess::put(lenp, b.len() as u32)?;
    Ok(0)
}

/// A received message's sender `name` at `addr` (as `put`), or, for an
/// unnamed sender, a length of 0 (Linux gives no address then).
pub fn put_sender(addr: u64, lenp: u64, name: &[u8]) -> LxResult {
    if addr == 0 {
        return Ok(0);
    }
    if name.is_empty() {
        uaccess::put(lenp, 0u32)?;
        return Ok(0);
    }
    put(addr, lenp, name)
}

/// `bind` of socket `f` to `name` (`None`: autobind).
pub fn bind(f: &File, name: Option<&[u8]>) -> Result<(), Errno> {
    match name {
        Some(p) if !is_abstract(p) => bind_path(f, p),
        Some(p) => bind_abstract(f, p),
        None => {
            // Linux answers an autobind of a named socket with success.
            if unix::is_bound(f) {
                return Ok(());
            }
            let d = node::unix_names()?;
            sweep(d);
            let free = (0..1u32 << 20).map(autoname).find(|n| dir::lookup(d, n).is_none());
            bind_abstract(f, &free.ok_or(EAGAIN)?)
        }
    }
}

fn bind_path(f: &File, p: &[u8]) -> Result<(), Errno> {
    let (d, name) = path::parent(crate::proc::cwd(), p)?;
    // Linux makes the node first: a name in use is found before a socket
    // that has one.
    if dir::lookup(d, &name).is_some() {
        return Err(EADDRINUSE);
    }
    if unix::is_bound(f) {
        return Err(EINVAL);
    }
    let ino = node::alloc(S_IFSOCK | (0o777 & !crate::proc::UMASK.get()))?;
    if let Err(e) = dir::add(d, &name, ino) {
        node::release(ino);
        return Err(e);
    }
    crate::fs::perm::own_new(d, ino);
    unix::bind(f, ino, p).inspect_err(|_| {
        dir::remove(d, &name);
        node::release(ino);
    })
}

fn bind_abstract(f: &File, p: &[u8]) -> Result<(), Errno> {
    let d = node::unix_names()?;
    sweep(d);
    if dir::lookup(d, p).is_some() {
        return Err(EADDRINUSE);
    }
    if unix::is_bound(f) {
        return Err(EINVAL);
    }
    let ino = node::alloc(S_IFSOCK | 0o777)?;
    if let Err(e) = dir::add(d, p, ino) {
        node::release(ino);
        return Err(e);
    }
    unix::bind(f, ino, p).inspect_err(|_| {
        dir::remove(d, p);
        node::release(ino);
    })
}

/// Autobind's name number `i`: a NUL and five lowercase hex digits.
fn autoname(i: u32) -> Vec<u8> {
    let mut n = alloc::vec![0u8];
    n.extend((0..5).rev().map(|k| b"0123456789abcdef"[(i >> (4 * k)) as usize & 0xf]));
    n
}

/// Drops the abstract names whose sockets have closed (a closed socket
/// clears its node's `data`).
fn sweep(d: Ino) {
    let mut gone: Vec<(Vec<u8>, Ino)> = Vec::new();
    let names: Vec<(Vec<u8>, Ino)> =
        dir::with_entries(d, |es| es.iter().map(|e| (e.name().to_vec(), e.ino)).collect());
    for (name, ino) in names {
        if node::get(ino).data.is_null() {
            gone.push((name, ino));
        }
    }
    for (name, ino) in gone {
        dir::remove(d, &name);
        node::release(ino);
    }
}

/// The node socket name `p` names, to connect or send to (a path
/// resolved, which needs write permission on the file, EACCES, as Linux;
/// an abstract name looked up: ECONNREFUSED when nobody holds it, as
/// Linux).
pub fn find(p: &[u8]) -> Result<Ino, Errno> {
    if !is_abstract(p) {
        let ino = path::resolve(crate::proc::cwd(), p, true)?;
        crate::fs::perm::check(ino, crate::fs::perm::MAY_WRITE)?;
        return Ok(ino);
    }
    let d = node::unix_names()?;
    dir::lookup(d, p).ok_or(ECONNREFUSED)
}
