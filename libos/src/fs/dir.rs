//! Directories: an array of fixed-size entries in the inode's data. `.`
//! and `..` are not stored (the inode records its parent).

use super::node::{self, Ino};
use crate::errno::{EEXIST, ENAMETOOLONG};

pub const NAME_MAX: usize = 123;

#[repr(C)]
#[derive(Clone, Copy)]
pub struct Entry {
    pub ino: Ino,
    pub len: u8,
    pub name: [u8; NAME_MAX],
}

const SIZE: u64 = size_of::<Entry>() as u64;

impl Entry {
    pub fn name(&self) -> &[u8] {
        &self.name[..self.len as usize]
    }
}

/// The entries of directory `dir`.
pub fn entries(dir: Ino) -> &'static mut [Entry] {
    let n = node::get(dir);
    if n.data.is_null() {
        return &mut [];
    }
    // SAFETY: a directory's data is an owned array of `size / SIZE` entries.
    unsafe { core::slice::from_raw_parts_mut(n.data as *mut Entry, (n.size / SIZE) as usize) }
}

pub fn lookup(dir: Ino, name: &[u8]) -> Option<Ino> {
    match name {
        b"" | b"." => Some(dir),
        b".." => Some(node::get(dir).parent),
        _ => entries(dir).iter().find(|e| e.name() == name).map(|e| e.ino),
    }
}

/// Links `ino` into `dir` as `name` (counting the link).
pub fn add(dir: Ino, name: &[u8], ino: Ino) -> Result<(), i64> {
    if name.len() > NAME_MAX {
        return Err(ENAMETOOLONG);
    }
    if lookup(dir, name).is_some() {
        return Err(EEXIST);
    }
    let mut e = Entry { ino, len: name.len() as u8, name: [0; NAME_MAX] };
    e.name[..name.len()].copy_from_slice(name);
    let d = node::get(dir);
    let off = d.size;
    // SAFETY: Entry is plain bytes.
    let raw = unsafe { core::slice::from_raw_parts(&e as *const Entry as *const u8, SIZE as usize) };
    node::write_at(d, off, raw)?;
    let n = node::get(ino);
    n.nlink += 1;
    if node::is_dir(ino) {
        n.parent = dir;
    }
    Ok(())
}

/// Unlinks `name` from `dir`; returns the inode it named (not released).
pub fn remove(dir: Ino, name: &[u8]) -> Option<Ino> {
    let es = entries(dir);
    let i = es.iter().position(|e| e.name() == name)?;
    let ino = es[i].ino;
    let last = es.len() - 1;
    es[i] = es[last];
    let d = node::get(dir);
    d.size -= SIZE;
    d.mtime_ns = crate::time::wall_ns();
    node::get(ino).nlink -= 1;
    Some(ino)
}
