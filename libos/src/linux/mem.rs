//! brk, mmap, munmap, mprotect, mremap, msync: the program's memory
//! through `vm`. A file mapping is a copy of the file's bytes; a writable
//! shared one is written back (`vm::write_back`).

use crate::errno::{LxResult, EACCES, EINVAL, ENOMEM, EOVERFLOW};
use crate::layout::{page_up, BRK_LIMIT, MMAP_BASE, MMAP_END, PAGE};
use crate::word::Word;
use crate::{fd, obj, uaccess, vm};

const PROT_READ: u64 = 1;
const PROT_WRITE: u64 = 2;
const PROT_EXEC: u64 = 4;
const MAP_SHARED: u64 = 1;
const MAP_FIXED: u64 = 0x10;
const MAP_ANONYMOUS: u64 = 0x20;
const MAP_NORESERVE: u64 = 0x4000;

fn prot(p: u64) -> u32 {
    let mut r = 0;
    if p & PROT_READ != 0 {
        r |= vm::R;
    }
    if p & PROT_WRITE != 0 {
        r |= vm::R | vm::W;
    }
    if p & PROT_EXEC != 0 {
        r |= vm::R | vm::X;
    }
    r
}

/// Whether `len` more bytes of the program's memory could ever be backed:
/// Linux's default (heuristic) overcommit refuses a request larger than the
/// machine's memory at once; anything smaller is promised, and a page that
/// then finds no frame gets one from the OOM killer's victim (`oom`).
fn could_back(len: u64) -> bool {
    len / PAGE <= user::kinfo::kernel().frames
}

/// Where the program's `brk` heap starts and where it ends now, and where
/// `mmap` looks for room next.
static BRK_START: Word<u64> = Word::new(0);
static BRK: Word<u64> = Word::new(0);
static MMAP_NEXT: Word<u64> = Word::new(MMAP_BASE);

/// A new program: its heap starts at `brk`, its mappings afresh.
pub fn exec(brk: u64) {
    BRK_START.set(brk);
    BRK.set(brk);
    MMAP_NEXT.set(MMAP_BASE);
}

pub fn brk(want: u64) -> LxResult {
    let (start, brk) = (BRK_START.get(), BRK.get());
    if want < start || want > BRK_LIMIT {
        return Ok(brk as i64);
    }
    let (old, new) = (page_up(brk), page_up(want));
    if new > old && !could_back(new - old) {
        return Ok(brk as i64);
    }
    if new > old {
        vm::add(old, new, vm::R | vm::W);
    } else if new < old {
        vm::remove(new, old);
    }
    BRK.set(want);
    Ok(want as i64)
}

/// Finds room for `len` bytes of new mappings.
fn place(len: u64) -> Result<u64, i64> {
    let next = &MMAP_NEXT;
    let at = next.get();
    if at + len > MMAP_END {
        return Err(ENOMEM);
    }
    // A guard page between mappings catches overruns.
    next.set(at + len + PAGE);
    Ok(at)
}

pub fn mmap(addr: u64, len: u64, p: u64, flags: u64, fdn: i64, off: u64) -> LxResult {
    if len == 0 || !addr.is_multiple_of(PAGE) || !off.is_multiple_of(PAGE) {
        return Err(EINVAL);
    }
    let len = page_up(len);
    // Linux accounts only writable mappings that reserve memory.
    if flags & MAP_NORESERVE == 0 && p & PROT_WRITE != 0 && !could_back(len) {
        return Err(ENOMEM);
    }
    let file = if flags & MAP_ANONYMOUS == 0 {
        let d = fd::get(fdn)?;
        // SAFETY: the descriptor keeps the file live; no other reference to it here.
        let f = unsafe { fd::file(&d) };
        if f.kind != obj::Kind::Regular {
            return Err(EINVAL);
        }
        // Linux: the file must be open for reading, and for writing too if
        // the program's writes are to reach it.
        let mode = f.flags & obj::flags::ACCMODE;
        let shared = flags & MAP_SHARED != 0;
        if mode == obj::flags::WRONLY || (shared && p & PROT_WRITE != 0 && mode != obj::flags::RDWR) {
            return Err(EACCES);
        }
        if off.checked_add(len).is_none_or(|end| end > i64::MAX as u64) {
            return Err(EOVERFLOW);
        }
        // A shared mapping of a file open for writing is written back,
        // whatever its rights now (`mprotect` may allow writes later).
        Some((f.ino, shared && mode == obj::flags::RDWR))
    } else {
        None
    };
    let start = if flags & MAP_FIXED != 0 {
        let end = addr.checked_add(len).ok_or(ENOMEM)?;
        if !crate::layout::program_may_map(addr, end) {
            return Err(ENOMEM);
        }
        vm::remove(addr, end);
        addr
    } else {
        place(len)?
    };
    vm::add(start, start + len, prot(p) | vm::R);
    if flags & MAP_SHARED != 0 {
        vm::add_fork_shared(start, start + len);
    }
    if let Some((ino, write_back)) = file {
        // Another shared view of the same bytes lends its frames; else the
        // file's bytes are copied in (there is no page cache to share).
        let view = if write_back { vm::shared_view(ino, off, len) } else { None };
        if !view.is_some_and(|from| vm::alias(start, from, len, prot(p) | vm::R)) {
            vm::add(start, start + len, vm::R | vm::W);
            let n = crate::fs::node::get(ino);
            uaccess::with_bytes_mut(start, len, |dst| crate::fs::node::read_at(&n, off, dst))?;
            vm::protect(start, start + len, prot(p) | vm::R);
        }
        if write_back {
            vm::add_shared_file(start, start + len, ino, off);
        }
    }
    Ok(start as i64)
}

pub fn munmap(addr: u64, len: u64) -> LxResult {
    if !addr.is_multiple_of(PAGE) || len == 0 {
        return Err(EINVAL);
    }
    vm::remove(addr, addr + page_up(len));
    Ok(0)
}

pub fn mprotect(addr: u64, len: u64, p: u64) -> LxResult {
    if !addr.is_multiple_of(PAGE) {
        return Err(EINVAL);
    }
    if vm::protect(addr, addr + page_up(len), prot(p)) {
        Ok(0)
    } else {
        Err(ENOMEM)
    }
}

const MS_ASYNC: u64 = 1;
const MS_INVALIDATE: u64 = 2;
const MS_SYNC: u64 = 4;

/// `msync`: changed pages of writable shared file mappings go back to their
/// files now (whichever of MS_SYNC and MS_ASYNC: both are done at once).
pub fn msync(addr: u64, len: u64, flags: u64) -> LxResult {
    let known = MS_ASYNC | MS_INVALIDATE | MS_SYNC;
    if !addr.is_multiple_of(PAGE) || flags & !known != 0 || flags & (MS_ASYNC | MS_SYNC) == MS_ASYNC | MS_SYNC
    {
        return Err(EINVAL);
    }
    // Linux rounds the length up modulo 2^64 (so -1 is 0: nothing to do).
    let end = addr.checked_add(len.wrapping_add(PAGE - 1) & !(PAGE - 1)).ok_or(ENOMEM)?;
    let mut va = addr;
    while va < end {
        // Linux: ENOMEM if any of the range is not mapped.
        let r = vm::find(va).ok_or(ENOMEM)?;
        va = r.end;
    }
    vm::write_back(addr, end);
    Ok(0)
}

const MREMAP_MAYMOVE: u64 = 1;

pub fn mremap(old: u64, old_len: u64, new_len: u64, flags: u64) -> LxResult {
    let (old_len, new_len) = (page_up(old_len), page_up(new_len));
    if !old.is_multiple_of(PAGE) || new_len == 0 {
        return Err(EINVAL);
    }
    if new_len <= old_len {
        vm::remove(old + new_len, old + old_len);
        return Ok(old as i64);
    }
    if flags & MREMAP_MAYMOVE == 0 || !could_back(new_len) {
        return Err(ENOMEM);
    }
    let r = vm::find(old).ok_or(EINVAL)?;
    let new = place(new_len)?;
    vm::add(new, new + new_len, r.prot | vm::W);
    let src = uaccess::bytes(old, old_len)?;
    uaccess::write(new, src)?;
    vm::protect(new, new + new_len, r.prot);
    vm::remove(old, old + old_len);
    Ok(new as i64)
}
