//! brk, mmap, munmap, mprotect, mremap, msync: the program's memory
//! through `vm`. A shared file mapping maps the file's own pages
//! (`vm::map_file_page`); a private one, and a read-only shared one of a
//! boot file, map a boot file's whole pages from the boot archive
//! (`vm::map_boot`) and copy the rest of the file's bytes.

use crate::errno::Errno;
use crate::errno::{LxResult, EACCES, EFAULT, EINVAL, ENODEV, ENOMEM, EOPNOTSUPP, EOVERFLOW};
use crate::layout::{page_down, page_up, BRK_LIMIT, MMAP_BASE, MMAP_END, PAGE};
use crate::word::Word;
use crate::{fd, obj, uaccess, vm};

const PROT_READ: u64 = 1;
const PROT_WRITE: u64 = 2;
const PROT_EXEC: u64 = 4;
const PROT_SEM: u64 = 8;
const PROT_GROWSDOWN: u64 = 0x0100_0000;
const PROT_GROWSUP: u64 = 0x0200_0000;
const MAP_SHARED: u64 = 1;
const MAP_PRIVATE: u64 = 2;
/// `MAP_SHARED` that refuses flags it does not know (files only).
const MAP_SHARED_VALIDATE: u64 = 3;
const MAP_TYPE: u64 = 0xf;
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
fn place(len: u64) -> Result<u64, Errno> {
    let next = &MMAP_NEXT;
    let at = next.get();
    if at + len > MMAP_END {
        return Err(ENOMEM);
    }
    // A guard page between mappings catches overruns.
    next.set(at + len + PAGE);
    Ok(at)
}

/// The flags `MAP_SHARED_VALIDATE` knows (Linux's `LEGACY_MAP_MASK` and
/// `MAP_SYNC`, which no file here supports).
const LEGACY_MAP_MASK: u64 = 0x0001_ff7b;

/// `mmap`. `/dev/zero` maps as anonymous memory; other devices, pipes,
/// sockets and directories cannot be mapped (ENODEV).
pub fn mmap(addr: u64, len: u64, p: u64, flags: u64, fdn: i64, off: u64) -> LxResult {
    if len == 0 || !addr.is_multiple_of(PAGE) || !off.is_multiple_of(PAGE) {
        return Err(EINVAL);
    }
    let len = page_up(len);
    let mut flags = flags;
    if flags & MAP_ANONYMOUS == 0 {
        let d = fd::get(fdn)?;
        // SAFETY: the descriptor keeps the file live; no other reference to it here.
        if unsafe { fd::file(&d) }.kind == obj::Kind::Zero {
            flags |= MAP_ANONYMOUS;
        }
    }
    let anonymous = flags & MAP_ANONYMOUS != 0;
    match flags & MAP_TYPE {
        MAP_SHARED | MAP_PRIVATE => {}
        MAP_SHARED_VALIDATE if !anonymous => {
            if flags & !LEGACY_MAP_MASK != 0 {
                return Err(EOPNOTSUPP);
            }
            flags = flags & !MAP_TYPE | MAP_SHARED;
        }
        _ => return Err(EINVAL),
    }
    // Linux accounts only writable mappings that reserve memory.
    if flags & MAP_NORESERVE == 0 && p & PROT_WRITE != 0 && !could_back(len) {
        return Err(ENOMEM);
    }
    let file = if !anonymous {
        let d = fd::get(fdn)?;
        // SAFETY: the descriptor keeps the file live; no other reference to it here.
        let f = unsafe { fd::file(&d) };
        if f.kind != obj::Kind::Regular {
            return Err(ENODEV);
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
        // A shared mapping maps the file's pages, which it may write
        // through if the file is open for writing, whatever its rights now
        // (`mprotect` may allow writes later). A boot file's pages are the
        // archive's until someone may write them.
        let rdwr = mode == obj::flags::RDWR;
        let pages = shared && (rdwr || !crate::fs::node::get(f.ino).borrowed);
        if pages {
            // A `/data` file's shared mapping maps an arena copy (its
            // bytes are in XN's cache pages, which are not mapped here).
            crate::fs::disk::copy_in(f.ino).map_err(|_| ENOMEM)?;
            crate::fs::node::update(f.ino, crate::fs::node::page_in).map_err(|_| ENOMEM)?;
        }
        Some((f.ino, pages.then_some(rdwr)))
    } else {
        None
    };
    let start = if flags & MAP_FIXED != 0 {
        let end = addr.checked_add(len).ok_or(ENOMEM)?;
        if !crate::layout::program_may_map(addr, end) {
            return Err(ENOMEM);
        }
        vm::remove(addr, end);
        crate::filemap::forget(addr, end);
        addr
    } else {
        place(len)?
    };
    vm::add(start, start + len, prot(p));
    if flags & MAP_SHARED != 0 {
        vm::add_fork_shared(start, start + len);
    }
    if let Some((ino, pages)) = file {
        // The pages the file covers now are backed now; the rest are
        // SIGBUS until the file grows (`filemap`).
        let covered = crate::filemap::add(start, start + len, ino, off) - start;
        if let Some(write) = pages {
            vm::add_shared_file(start, start + len, ino, off, write);
            for va in (start..start + covered).step_by(PAGE as usize) {
                if !vm::map_file_page(va) {
                    vm::remove(start, start + len);
                    crate::filemap::forget(start, start + len);
                    return Err(ENOMEM);
                }
            }
        } else if covered > 0 {
            // The whole pages of a boot file are its own frames (read-only:
            // a write copies); the rest is copied in.
            let n = crate::fs::node::get(ino);
            let whole = page_down(n.size.saturating_sub(off)).min(covered);
            let direct = match n.borrowed {
                true => vm::map_boot(start, n.data as u64 + off, whole, prot(p)),
                false => 0,
            };
            let (lo, end) = (start + direct, start + covered);
            if lo < end {
                vm::protect(lo, end, vm::R | vm::W);
                uaccess::with_bytes_mut(lo, end - lo, |dst| {
                    crate::fs::content::read(ino, off + direct, dst)
                })??;
                vm::protect(lo, end, prot(p));
            }
        }
    }
    Ok(start as i64)
}

pub fn munmap(addr: u64, len: u64) -> LxResult {
    if !addr.is_multiple_of(PAGE) || len == 0 {
        return Err(EINVAL);
    }
    vm::remove(addr, addr + page_up(len));
    crate::filemap::forget(addr, addr + page_up(len));
    Ok(0)
}

pub fn mprotect(addr: u64, len: u64, p: u64) -> LxResult {
    let known = PROT_READ | PROT_WRITE | PROT_EXEC | PROT_SEM | PROT_GROWSDOWN | PROT_GROWSUP;
    if !addr.is_multiple_of(PAGE) || p & !known != 0 {
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

/// `msync`: the files whose pages the program changed through shared
/// mappings are marked for the disk's write-back (`vm::write_back`; a
/// file in memory is its pages already).
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

/// `madvise`'s advice Linux knows (0-25 but 5-7, which it never had; and
/// 100, `MADV_HWPOISON`). Each is taken and changes nothing: no page
/// cache, no swap, and `MADV_DONTNEED` leaves private pages as they are
/// (the library does not tell private file pages from anonymous ones).
fn known_advice(a: u64) -> bool {
    matches!(a, 0..=4 | 8..=25 | 100)
}

pub fn madvise(addr: u64, len: u64, advice: u64) -> LxResult {
    if !addr.is_multiple_of(PAGE) || !known_advice(advice) {
        return Err(EINVAL);
    }
    let end = addr.checked_add(page_up(len)).ok_or(EINVAL)?;
    let mut va = addr;
    while va < end {
        va = vm::find(va).ok_or(ENOMEM)?.end;
    }
    Ok(0)
}

const MREMAP_MAYMOVE: u64 = 1;
const MREMAP_FIXED: u64 = 2;

/// `mremap(old, old_len, new_len, flags, new_addr)`: shrink in place, or
/// grow by moving (`MREMAP_MAYMOVE`), to `new_addr` with `MREMAP_FIXED`.
pub fn mremap(old: u64, old_len: u64, new_len: u64, flags: u64, new_addr: u64) -> LxResult {
    if flags & !(MREMAP_MAYMOVE | MREMAP_FIXED) != 0 || flags == MREMAP_FIXED {
        return Err(EINVAL);
    }
    let (old_len, new_len) = (page_up(old_len), page_up(new_len));
    if !old.is_multiple_of(PAGE) || new_len == 0 {
        return Err(EINVAL);
    }
    let fixed = flags & MREMAP_FIXED != 0;
    if fixed {
        let overlap = new_addr < old + old_len && old < new_addr + new_len;
        if !new_addr.is_multiple_of(PAGE) || overlap {
            return Err(EINVAL);
        }
        if !crate::layout::program_may_map(new_addr, new_addr.checked_add(new_len).ok_or(EINVAL)?) {
            return Err(ENOMEM);
        }
    }
    if new_len <= old_len && !fixed {
        vm::remove(old + new_len, old + old_len);
        crate::filemap::forget(old + new_len, old + old_len);
        return Ok(old as i64);
    }
    if flags & MREMAP_MAYMOVE == 0 || !could_back(new_len) {
        return Err(ENOMEM);
    }
    let r = vm::find(old).ok_or(EFAULT)?;
    let new = if fixed {
        vm::remove(new_addr, new_addr + new_len);
        new_addr
    } else {
        place(new_len)?
    };
    vm::add(new, new + new_len, r.prot | vm::W);
    let src = uaccess::bytes(old, old_len.min(new_len))?;
    uaccess::write(new, src)?;
    vm::protect(new, new + new_len, r.prot);
    vm::remove(old, old + old_len);
    // (A moved file mapping keeps its bytes, not its file.)
    crate::filemap::forget(old, old + old_len);
    crate::filemap::forget(new, new + new_len);
    Ok(new as i64)
}

const MLOCK_ONFAULT: u64 = 1;
const MCL_CURRENT: u64 = 1;
const MCL_FUTURE: u64 = 2;
const MCL_ONFAULT: u64 = 4;

/// The pages of `[addr, addr + len)`, rounded out to whole pages: EINVAL if
/// the range wraps, ENOMEM if any of it is not mapped.
fn mapped_range(addr: u64, len: u64) -> Result<(u64, u64), Errno> {
    let start = crate::layout::page_down(addr);
    let end = addr.checked_add(len).and_then(|e| e.checked_add(PAGE - 1)).ok_or(EINVAL)? & !(PAGE - 1);
    let mut va = start;
    while va < end {
        va = vm::find(va).ok_or(ENOMEM)?.end;
    }
    Ok((start, end))
}

/// Brings the pages of `[start, end)` the program may touch into memory.
fn populate(start: u64, end: u64) -> Result<(), Errno> {
    let mut va = start;
    while va < end {
        let r = vm::find(va).ok_or(ENOMEM)?;
        // PROT_NONE pages, and a file mapping's past the file's end, stay
        // as they are (Linux skips them too).
        let past_end = r.prot != 0 && crate::filemap::fault(va) == Some(false);
        if r.prot != 0 && !past_end && !vm::touch(va, false) {
            return Err(ENOMEM);
        }
        va += PAGE;
    }
    Ok(())
}

/// `mlock2(addr, len, flags)` (`mlock`: flags 0): every page of the
/// library's memory stays resident (there is no swap), so locking only
/// brings the range in (with `MLOCK_ONFAULT`, not even that). Every
/// process is root (`CAP_IPC_LOCK`): no `RLIMIT_MEMLOCK` applies.
pub fn mlock(addr: u64, len: u64, flags: u64) -> LxResult {
    if flags & !MLOCK_ONFAULT != 0 {
        return Err(EINVAL);
    }
    let (start, end) = mapped_range(addr, len)?;
    if flags & MLOCK_ONFAULT == 0 {
        populate(start, end)?;
    }
    Ok(0)
}

/// `munlock(addr, len)`: nothing was locked away from anyone.
pub fn munlock(addr: u64, len: u64) -> LxResult {
    mapped_range(addr, len).map(|_| 0)
}

/// `mlockall(flags)`: `MCL_CURRENT` brings every mapping in.
pub fn mlockall(flags: u64) -> LxResult {
    if flags == 0 || flags & !(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT) != 0 || flags == MCL_ONFAULT {
        return Err(EINVAL);
    }
    if flags & MCL_CURRENT != 0 && flags & MCL_ONFAULT == 0 {
        for r in vm::regions() {
            populate(r.start, r.end)?;
        }
    }
    Ok(0)
}

/// `mincore(addr, len, vec)`: a byte per page, 1 if it is backed now.
pub fn mincore(addr: u64, len: u64, vec: u64) -> LxResult {
    if !addr.is_multiple_of(PAGE) {
        return Err(EINVAL);
    }
    let pages = len.div_ceil(PAGE);
    uaccess::writable(vec, pages)?;
    let (start, end) = mapped_range(addr, len)?;
    let v: alloc::vec::Vec<u8> =
        (start..end).step_by(PAGE as usize).map(|va| vm::pte(va).is_some() as u8).collect();
    uaccess::write(vec, &v).map(|_| 0)
}
