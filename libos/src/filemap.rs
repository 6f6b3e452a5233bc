//! The file behind each of a process's file mappings, so that a page past
//! the file's end raises SIGBUS as on Linux. `mmap` maps (shared) or
//! copies in (private) the pages the file covers when it maps them
//! (`linux/mem.rs`) and leaves the rest unbacked; a fault there looks at
//! the file's size now: a page the file has grown to cover is mapped or
//! filled from it, one still past the end is SIGBUS. When this process
//! shrinks a file (`truncate`, `ftruncate`), its own mappings of it drop
//! the pages now past the end, unwritten; every other process's do at
//! the start of its next Linux call (`sync`: the arena counts the
//! shrinks).
//! Until then its shared mappings keep those pages, which stay the
//! file's (zeroed, `fs::pages`) until nobody maps the file: never memory
//! that another file got.

use crate::errno::Errno;
use crate::fs::{node, Ino};
use crate::layout::{page_down, page_up, PAGE};
use crate::scoped::Scoped;
use crate::vm;
use crate::word::Word;
use alloc::vec::Vec;
use core::sync::atomic::Ordering;

#[derive(Clone, Copy)]
struct Map {
    start: u64,
    end: u64,
    ino: Ino,
    off: u64,
}

impl Map {
    /// Where the pages the file covers end (file size `size`).
    fn covered_end(&self, size: u64) -> u64 {
        (self.start + page_up(size).saturating_sub(self.off)).min(self.end)
    }
}

/// This process's file mappings (lxrt's private memory: a fork copies it,
/// as the child has the same mappings).
static MAPS: Scoped<Vec<Map>> = Scoped::new("file mappings", Vec::new());

/// Records `[start, end)` as mapping file `ino` from byte `off`; returns
/// where the pages the file covers now end (the caller backs those).
pub fn add(start: u64, end: u64, ino: Ino, off: u64) -> u64 {
    forget(start, end);
    let m = Map { start, end, ino, off };
    MAPS.with(|v| v.push(m));
    m.covered_end(node::get(ino).size)
}

/// Forgets the mappings in `[start, end)` (unmapped or mapped over),
/// keeping the parts of those it cuts that lie outside.
pub fn forget(start: u64, end: u64) {
    MAPS.with(|v| {
        let mut out = Vec::with_capacity(v.len() + 1);
        for m in v.iter().copied() {
            if m.end <= start || m.start >= end {
                out.push(m);
                continue;
            }
            if m.start < start {
                out.push(Map { end: start, ..m });
            }
            if m.end > end {
                out.push(Map { start: end, off: m.off + (end - m.start), ..m });
            }
        }
        *v = out;
    });
}

/// The arena's count of shrinks this process has caught up with.
static SEEN: Word<u64> = Word::new(0);

/// At the start of a Linux call (with the lock): if some process
/// shortened a mapped file since this one last looked, every file mapping
/// here drops the pages now past its file's end (a later touch is
/// SIGBUS). Not at every taking of the lock: a wait retakes it often.
#[inline(always)]
pub fn sync() {
    let now = crate::shared::shrinks().load(Ordering::Acquire);
    if now != SEEN.get() {
        catch_up(now);
    }
}

#[cold]
#[inline(never)]
fn catch_up(now: u64) {
    SEEN.set(now);
    let maps: Vec<Map> = MAPS.with(|v| v.clone());
    for m in maps {
        shrunk_map(m, node::get(m.ino).size);
    }
}

/// Mapping `m`'s file is now `size` bytes long: the pages past the end go.
fn shrunk_map(m: Map, size: u64) {
    match vm::in_shared_file(m.start) {
        true => vm::drop_file_pages(m.covered_end(size), m.end),
        false => vm::drop_pages(m.covered_end(size), m.end),
    }
}

/// An exec: the old program's mappings are gone.
pub fn forget_all() {
    MAPS.with(|v| v.clear());
}

fn find(va: u64) -> Option<Map> {
    MAPS.with(|v| v.iter().copied().find(|m| m.start <= va && va < m.end))
}

/// How a fault reads a file's bytes: the arena's, unless lxrt gives a
/// reader that also reads `/data`'s files, whose bytes are in XN's cache
/// a layer above this one (`reads_with`: `fs::content::read`).
static READ: Word<Reader> = Word::new(read_arena);

/// Reads file `ino` from an offset into a buffer; the byte count.
pub type Reader = fn(Ino, u64, &mut [u8]) -> Result<usize, Errno>;

fn read_arena(ino: Ino, off: u64, buf: &mut [u8]) -> Result<usize, Errno> {
    Ok(node::read_at(&node::get(ino), off, buf))
}

/// Faults read files' bytes with `f` from now on (in this process and
/// the children it forks).
pub fn reads_with(f: Reader) {
    READ.set(f);
}

/// A fault at `va`: None if it is no file page the file's end left
/// unbacked; Some(true) if the file now covers it (filled from the file,
/// the fault is over); Some(false) if it is past the end (SIGBUS).
pub fn fault(va: u64) -> Option<bool> {
    let m = find(va)?;
    let page = page_down(va);
    if vm::pte(page).is_some() {
        return None;
    }
    let n = node::get(m.ino);
    if page >= m.covered_end(n.size) {
        return Some(false);
    }
    let prot = vm::find(page)?.prot;
    if prot == 0 {
        return None;
    }
    if vm::in_shared_file(page) {
        return Some(vm::map_file_page(page));
    }
    // Filled through a writable view, then given the mapping's rights.
    vm::protect(page, page + PAGE, vm::R | vm::W);
    let filled = vm::touch(page, true)
        && crate::uaccess::with_bytes_mut(page, PAGE, |dst| READ.get()(m.ino, m.off + (page - m.start), dst))
            .is_ok_and(|r| r.is_ok());
    vm::protect(page, page + PAGE, prot);
    Some(filled)
}

/// File `ino` is now `size` bytes long (this process shrank it): its
/// mappings here lose the pages past the end.
pub fn shrunk(ino: Ino, size: u64) {
    let maps: Vec<Map> = MAPS.with(|v| v.iter().copied().filter(|m| m.ino == ino).collect());
    for m in maps {
        shrunk_map(m, size);
    }
}
