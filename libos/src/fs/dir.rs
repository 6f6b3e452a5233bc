//! Directories: an array of fixed-size entries in the inode's data. `.`
//! and `..` are not stored (the inode records its parent).

use super::node::{self, Ino, Inode};
use super::{S_IFDIR, S_IFMT};
use crate::errno::Errno;
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

/// The entries `d`'s data holds (a directory's data is an array of them).
fn entries_of(d: &mut Inode) -> &mut [Entry] {
    if d.data.is_null() {
        return &mut [];
    }
    // SAFETY: a directory's data is an owned array of `size / SIZE`
    // entries; the borrow of `d` keeps the table, and so every writer of
    // the array, away while it lasts.
    unsafe { core::slice::from_raw_parts_mut(d.data as *mut Entry, (d.size / SIZE) as usize) }
}

/// Runs `f` on the entries of directory `dir`, with the inode table
/// borrowed: `f` must not reach it again (`node::get`, `lookup`).
pub fn with_entries<R>(dir: Ino, f: impl FnOnce(&[Entry]) -> R) -> R {
    node::update(dir, |d| f(entries_of(d)))
}

/// A copy of entry `i` of `dir`, if it has that many.
pub fn entry(dir: Ino, i: usize) -> Option<Entry> {
    with_entries(dir, |es| es.get(i).copied())
}

pub fn lookup(dir: Ino, name: &[u8]) -> Option<Ino> {
    match name {
        b"" | b"." => Some(dir),
        b".." => Some(node::get(dir).parent),
        _ => with_entries(dir, |es| es.iter().find(|e| e.name() == name).map(|e| e.ino)),
    }
}

/// Links `ino` into `dir` as `name` (counting the link).
pub fn add(dir: Ino, name: &[u8], ino: Ino) -> Result<(), Errno> {
    if name.len() > NAME_MAX {
        return Err(ENAMETOOLONG);
    }
    if lookup(dir, name).is_some() {
        return Err(EEXIST);
    }
    let mut e = Entry { ino, len: name.len() as u8, name: [0; NAME_MAX] };
    e.name[..name.len()].copy_from_slice(name);
    // SAFETY: Entry is plain bytes.
    let raw = unsafe { core::slice::from_raw_parts(&e as *const Entry as *const u8, SIZE as usize) };
    node::update(dir, |d| node::write_at(d, d.size, raw))?;
    node::update(ino, |n| {
        n.nlink += 1;
        if n.mode & S_IFMT == S_IFDIR {
            n.parent = dir;
        }
    });
    Ok(())
}

/// Points `dir`'s existing entry `name` at `ino` instead (`rename`'s
/// exchange: the link counts stay as they are).
pub fn relink(dir: Ino, name: &[u8], ino: Ino) {
    node::update(dir, |d| {
        if let Some(e) = entries_of(d).iter_mut().find(|e| e.name() == name) {
            e.ino = ino;
        }
        node::touch(d);
    });
    node::update(ino, |n| {
        if n.mode & S_IFMT == S_IFDIR {
            n.parent = dir;
        }
    });
}

/// Unlinks `name` from `dir`; returns the inode it named (not released).
pub fn remove(dir: Ino, name: &[u8]) -> Option<Ino> {
    let ino = node::update(dir, |d| {
        let es = entries_of(d);
        let i = es.iter().position(|e| e.name() == name)?;
        let ino = es[i].ino;
        let last = es.len() - 1;
        es[i] = es[last];
        d.size -= SIZE;
        node::touch(d);
        Some(ino)
    })?;
    node::update(ino, |n| n.nlink -= 1);
    Some(ino)
}
