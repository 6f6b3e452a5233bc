//! The Linux program's memory (paper 001 §5.2: virtual memory managed by
//! the application's own library). lxrt keeps a list of regions (what the
//! program was promised, with its rights); frames appear on first touch.
//! A present page that is read-only in a writable region is copy-on-write
//! (shared with a fork relative): the write fault copies it, or just makes
//! it writable when the frame table shows nobody else maps it.
//!
//! A `MAP_SHARED` mapping of a file in the arena (`SharedFile`) maps the
//! file's own pages (`fs::pages`), in every process that maps it: a store
//! is seen at once by every other mapping and by `read`, and `write` by
//! every mapping (the one page cache, `docs/libos.md`). For a file
//! mirrored on the disk (`/data`), the hardware's dirty bit says which
//! pages the program changed, and `msync`, `munmap`, exit and exec (every
//! `remove`) mark the file dirty for the disk's write-back.

use crate::layout::{page_down, EXEC_VIEWS, EXEC_VIEW_MAX, INIT_STACK_BOTTOM, INIT_STACK_TOP, PAGE, SCRATCH};
use crate::scoped::Scoped;
use crate::selfmap::{leaf_entries, LEAF_SPAN};
pub use crate::selfmap::{next_mapped, pte};
use crate::word::Word;
use abi::pte::{frame_of, DIRTY, WRITABLE};
use abi::syscall::{map as mf, ENV_SELF, FRAME_ANY};
use alloc::vec::Vec;
use user::{kinfo, sys};

pub const R: u32 = 1;
pub const W: u32 = 2;
pub const X: u32 = 4;

#[derive(Clone, Copy, Debug)]
pub struct Region {
    pub start: u64,
    pub end: u64,
    pub prot: u32,
}

/// A shared mapping of `[start, end)` onto the pages of file `ino` from
/// byte `off`, through which the program may write to the file if
/// `write` (the file was open for writing). Each holds one of the file's
/// `opens`, so the file outlives its last descriptor while mapped, as on
/// Linux, and one of its `maps`, so its pages stay put.
#[derive(Clone, Copy, Debug)]
struct SharedFile {
    start: u64,
    end: u64,
    ino: crate::fs::Ino,
    off: u64,
    write: bool,
}

/// A process's memory as the library keeps it.
pub struct Space {
    /// What the program was promised.
    regions: Vec<Region>,
    /// Its shared mappings of files' pages.
    shared: Vec<SharedFile>,
    /// Its `MAP_SHARED` mappings (anonymous or of a file), whose pages a
    /// fork child maps as the same frames, writable in both (`prot`
    /// unused).
    fork_shared: Vec<Region>,
    /// Frames we own but no longer map that a fork relative still maps (a
    /// copy-on-write page a child shares, which we copied or unmapped).
    /// The kernel frees a frame with its last mapping only once its owner
    /// is gone, so we free each ourselves when the frame table shows nobody
    /// maps it (`sweep`, after reaping a child); otherwise a long-lived
    /// parent would lose a few pages per child it forks.
    orphans: Vec<u64>,
    /// Whether a native program runs on the kernel's initial stack (lxrt
    /// clears it when it starts a Linux program, which has a stack of its
    /// own).
    native_stack: bool,
}

impl Space {
    pub const INITIAL: Space = Space {
        regions: Vec::new(),
        shared: Vec::new(),
        fork_shared: Vec::new(),
        orphans: Vec::new(),
        native_stack: true,
    };

    fn find(&self, va: u64) -> Option<Region> {
        self.regions.iter().copied().find(|r| r.start <= va && va < r.end)
    }

    /// Is `va` in the live native program's stack?
    fn native_stack(&self, va: u64) -> bool {
        self.native_stack && (INIT_STACK_BOTTOM..INIT_STACK_TOP).contains(&va)
    }
}

static SPACE: Scoped<Space> = Scoped::new("the memory map", Space::INITIAL);

/// Runs `f` on this process's memory.
#[inline]
fn with_space<R>(f: impl FnOnce(&mut Space) -> R) -> R {
    SPACE.with(f)
}

/// Where a program's page gets its frame: the out-of-memory policy of the
/// process layer (`oom::frame_for`, chosen at start), which may have to
/// end a process to find one.
static FRAME_FOR: Word<fn(u64) -> u64> = Word::new(frame_or_die);

/// Chooses how a program's page at `va` finds a frame.
pub fn set_frame_source(f: fn(u64) -> u64) {
    FRAME_FOR.set(f);
}

/// Before a policy is chosen (start-up): a frame, or the end.
fn frame_or_die(_va: u64) -> u64 {
    sys::frame_alloc(crate::env::id() as u64, FRAME_ANY).expect("out of memory before start-up ended")
}

/// The regions the program was promised, in no particular order.
pub fn regions() -> Vec<Region> {
    with_space(|s| s.regions.clone())
}

/// The kernel's mapping flags for a page of a region with `prot`:
/// writable only if `write` too (pages become writable on their first
/// write, so copy-on-write is never broken early); a `PROT_NONE` page
/// keeps its frame and contents but allows nothing (`map::NO_ACCESS`: the
/// kernel maps it without the user bit), so any access faults and
/// `mprotect` back finds the bytes. x86 cannot map a page writable or
/// executable but not readable, so any other `prot` is readable.
fn rights(prot: u32, write: bool) -> u64 {
    if prot == 0 {
        return mf::NO_ACCESS;
    }
    let mut f = 0;
    if write && prot & W != 0 {
        f |= mf::WRITE;
    }
    if prot & X != 0 {
        f |= mf::EXEC;
    }
    f
}

pub fn find(va: u64) -> Option<Region> {
    with_space(|s| s.find(va))
}

/// Removes `[start, end)` from the region list, splitting at the edges.
fn carve(regions: &mut Vec<Region>, start: u64, end: u64) {
    // Always a new list with room for `add`'s push: keeping the old one
    // when nothing overlapped saved 1% of fork_exec but left each process
    // more memory (the stress test's 1,017 children no longer fitted in
    // 1 GiB: fork failed with ENOMEM before RLIMIT_NPROC's EAGAIN).
    let mut out = Vec::with_capacity(regions.len() + 1);
    for r in regions.iter() {
        if r.end <= start || r.start >= end {
            out.push(*r);
            continue;
        }
        if r.start < start {
            out.push(Region { end: start, ..*r });
        }
        if r.end > end {
            out.push(Region { start: end, ..*r });
        }
    }
    *regions = out;
}

/// Promises `[start, end)` with `prot` (pages appear on first touch).
pub fn add(start: u64, end: u64, prot: u32) {
    with_space(|s| {
        carve(&mut s.regions, start, end);
        s.regions.push(Region { start, end, prot });
    })
}

/// We have dropped our mapping of frame `f`: free it if it is ours and
/// unmapped, remember it if it is ours and still mapped elsewhere.
fn let_go(f: u64) {
    let info = kinfo::frame(f);
    if info.owner != crate::env::id() {
        return;
    }
    if info.refs == 0 {
        let _ = sys::frame_free(f);
    } else {
        with_space(|s| s.orphans.push(f));
    }
}

/// Frees the frames `let_go` remembered that nobody maps any more.
pub fn sweep() {
    let me = crate::env::id();
    with_space(|s| {
        s.orphans.retain(|&f| {
            let info = kinfo::frame(f);
            if info.owner != me {
                return false;
            }
            if info.refs == 0 {
                let _ = sys::frame_free(f);
                return false;
            }
            true
        })
    });
}

/// A forked child's copy of the list names its parent's frames; its
/// shared file mappings are its own, each holding the file.
pub fn forked_child() {
    let shared = with_space(|s| {
        s.orphans.clear();
        s.shared.clone()
    });
    for m in shared {
        hold(m.ino);
    }
}

/// One more mapping holds file `ino` and its pages.
fn hold(ino: crate::fs::Ino) {
    crate::fs::node::update(ino, |n| (n.opens, n.maps) = (n.opens + 1, n.maps + 1));
}

/// The shared file mapping holding `va`, if any.
fn shared_file(va: u64) -> Option<SharedFile> {
    with_space(|s| match s.shared.is_empty() {
        true => None,
        false => s.shared.iter().copied().find(|m| m.start <= va && va < m.end),
    })
}

/// Whether `va` lies in a shared mapping of a file's pages.
pub fn in_shared_file(va: u64) -> bool {
    shared_file(va).is_some()
}

/// Makes `[start, end)` a shared mapping of the pages of file `ino` (made
/// page by page by `map_file_page`) from byte `off`, writable if `write`.
pub fn add_shared_file(start: u64, end: u64, ino: crate::fs::Ino, off: u64, write: bool) {
    hold(ino);
    with_space(|s| s.shared.push(SharedFile { start, end, ino, off, write }));
}

/// Maps at `va` (in a shared file mapping) the file's own page there,
/// with the region's rights (writable now if it may write the file); false
/// if the file does not reach the page (SIGBUS, or EFAULT for a call).
/// Every process maps the arena's frames by the arena's capability.
pub fn map_file_page(va: u64) -> bool {
    let (Some(m), Some(r)) = (shared_file(va), find(va)) else {
        return false;
    };
    let va = page_down(va);
    let n = crate::fs::node::get(m.ino);
    let at = m.off + (va - m.start);
    if at >= crate::layout::page_up(n.size) {
        return false;
    }
    // The list is in the arena, which any process can write: a page must
    // be one of the arena's mapped here, never lxrt's own memory.
    let page = crate::fs::pages::page(&n, at / PAGE)
        .filter(|&a| a.is_multiple_of(PAGE) && crate::shared::holds::<[u8; PAGE as usize]>(a));
    let Some(f) = page.and_then(pte) else {
        return false;
    };
    if pte(va).is_some() {
        let _ = sys::unmap(ENV_SELF, va);
    }
    let flags = rights(r.prot, m.write);
    sys::map_with(ENV_SELF, va, frame_of(f), flags, abi::syscall::CRED_SELF, crate::shared::cred()).is_ok()
}

/// Notes which files the program changed through its shared mappings of
/// `[start, end)`: a page the hardware marked dirty marks its file, if the
/// disk mirrors it, dirty for the disk's write-back (and clean here
/// again). A file in memory has nothing to write back: its pages are the
/// file.
pub fn write_back(start: u64, end: u64) {
    let shared = with_space(|s| s.shared.clone());
    for m in shared.iter().filter(|m| m.start < end && start < m.end && m.write) {
        if crate::fs::node::get(m.ino).disk == 0 {
            continue;
        }
        let (mut va, hi, mut dirty) = (m.start.max(start), m.end.min(end), false);
        while let Some(v) = next_mapped(va, hi) {
            va = v + PAGE;
            if pte(v).is_some_and(|p| p & DIRTY != 0) {
                dirty |= map_file_page(v);
            }
        }
        if dirty {
            crate::fs::node::update(m.ino, crate::fs::node::touch);
        }
    }
}

/// Forgets the shared file mappings in `[start, end)` (written back
/// already), splitting those it cuts and letting go of their files.
fn unshare(start: u64, end: u64) {
    let (gone, split) = with_space(|s| {
        let mut out = Vec::with_capacity(s.shared.len() + 1);
        let (mut gone, mut split) = (Vec::new(), Vec::new());
        for m in s.shared.iter().copied() {
            if m.end <= start || m.start >= end {
                out.push(m);
                continue;
            }
            let left = (m.start < start).then_some(SharedFile { end: start, ..m });
            let right = (m.end > end).then_some(SharedFile { start: end, off: m.off + (end - m.start), ..m });
            match (left, right) {
                (None, None) => gone.push(m.ino),
                (Some(a), Some(b)) => {
                    split.push(m.ino);
                    out.extend([a, b]);
                }
                (a, b) => out.extend(a.or(b)),
            }
        }
        s.shared = out;
        (gone, split)
    });
    for ino in split {
        hold(ino);
    }
    for ino in gone {
        crate::fs::node::update(ino, |n| {
            n.opens -= 1;
            crate::fs::node::unmapped(n);
        });
        crate::fs::node::release(ino);
    }
}

/// Unmaps one page, returning its frame to the kernel when it was ours
/// and nobody else maps it (or once nobody does: `let_go`).
pub fn drop_page(va: u64) {
    if let Some(p) = pte(va) {
        let _ = sys::unmap(ENV_SELF, va);
        let_go(frame_of(p));
    }
}

/// Unmaps every page of `[start, end)` with one kernel call per leaf
/// table that maps any (`unmap_range`), then lets go of the frames that
/// were ours (`let_go`).
pub fn drop_pages(start: u64, end: u64) {
    unmap_pages(start, end, let_go);
}

/// Unmaps the pages of a shared file mapping in `[start, end)`: the
/// file's pages are the arena's (never to be freed here, though the
/// arena's first process owns them and a fork relative may map them), so
/// only a private copy nobody maps any more is freed.
pub fn drop_file_pages(start: u64, end: u64) {
    unmap_pages(start, end, |f| {
        let info = kinfo::frame(f);
        if info.owner == crate::env::id() && info.refs == 0 {
            let _ = sys::frame_free(f);
        }
    });
}

/// Unmaps `[start, end)` a leaf table at a time, then passes each frame
/// of ours it mapped to `go`.
fn unmap_pages(start: u64, end: u64, go: impl Fn(u64)) {
    let me = crate::env::id();
    let mut va = start;
    while let Some(v) = next_mapped(va, end) {
        let stop = end.min((v | (LEAF_SPAN - 1)) + 1);
        let pages = (stop - v) / PAGE;
        let (mut ours, mut n) = ([0u64; 512], 0);
        for e in leaf_entries(v, pages).filter(|e| e & abi::pte::PRESENT != 0) {
            if kinfo::frame(frame_of(e)).owner == me {
                ours[n] = frame_of(e);
                n += 1;
            }
        }
        let _ = sys::unmap_range(ENV_SELF, v, pages);
        ours[..n].iter().for_each(|&f| go(f));
        va = stop;
    }
}

/// Forgets `[start, end)` and frees what was behind it (after writing
/// shared file pages back).
pub fn remove(start: u64, end: u64) {
    write_back(start, end);
    for m in with_space(|s| s.shared.clone()) {
        drop_file_pages(m.start.max(start), m.end.min(end));
    }
    unshare(start, end);
    for r in regions() {
        drop_pages(r.start.max(start), r.end.min(end));
    }
    forget(start, end);
}

/// Forgets `[start, end)` in the region lists.
fn forget(start: u64, end: u64) {
    with_space(|s| {
        carve(&mut s.regions, start, end);
        carve(&mut s.fork_shared, start, end);
    });
}

/// At exit: what `remove` of everything does but the unmapping. The
/// kernel tears the whole address space down in one pass when the
/// environment ends, dropping every mapping and reclaiming every frame
/// charged to it; unmapping the pages first would walk the tables twice.
pub fn leave() {
    write_back(0, u64::MAX);
    unshare(0, u64::MAX);
    forget(0, u64::MAX);
}

/// Makes `[start, end)` (a `MAP_SHARED` mapping) stay shared across fork.
pub fn add_fork_shared(start: u64, end: u64) {
    with_space(|s| {
        carve(&mut s.fork_shared, start, end);
        s.fork_shared.push(Region { start, end, prot: 0 });
    })
}

/// Whether `va` lies in a `MAP_SHARED` mapping.
pub fn fork_shared(va: u64) -> bool {
    with_space(|s| s.fork_shared.iter().any(|r| r.start <= va && va < r.end))
}

/// Whether any region, and any `MAP_SHARED` mapping, meets `[start,
/// end)`: fork asks once for a range what it would otherwise ask of
/// every page (`find`, `fork_shared`: each a scan of a list).
pub fn meets(start: u64, end: u64) -> (bool, bool) {
    let meets = |list: &[Region]| list.iter().any(|r| r.start < end && start < r.end);
    with_space(|s| (meets(&s.regions), meets(&s.fork_shared)))
}

/// Before a fork: every page of the `MAP_SHARED` mappings gets its frame
/// now, writable where the mapping is, so that parent and child share it
/// (a page first touched, or first written, after the fork would become
/// each one's own). False if memory ran out.
pub fn back_fork_shared() -> bool {
    let ranges = with_space(|s| s.fork_shared.clone());
    for r in ranges {
        // A file's pages are shared already (or fault in from it).
        if in_shared_file(r.start) {
            continue;
        }
        let mut va = r.start;
        while va < r.end {
            let write = find(va).is_some_and(|g| g.prot & W != 0);
            let ready = pte(va).is_some_and(|p| !write || p & WRITABLE != 0);
            if !ready && !touch(va, write) {
                return false;
            }
            va += PAGE;
        }
    }
    true
}

/// Maps the whole pages of `[va, va + len)` straight from the boot file
/// system's window at `src`: a boot file's own frames, read-only whatever
/// `prot` says (a write copies the page, `break_cow`), shared by every
/// process that maps them, so mapping a program or a library copies
/// nothing (paper 000 §3.1: the kernel exposes the archive; the library
/// maps it); likewise from an exec view of a file on the disk
/// (`fs::disk::view`: XN's cache pages, which the kernel never lets be
/// written through a read-only binding, paper 000 §4.3.3). Returns how
/// many bytes from `va` it mapped: none if `src` is not a page of either
/// or the kernel refused (the caller copies).
pub fn map_boot(va: u64, src: u64, len: u64, prot: u32) -> u64 {
    let boot = abi::layout::BOOTFS_VA..abi::layout::BOOTFS_VA + kinfo::kernel().bootfs_size;
    let views = EXEC_VIEWS..EXEC_VIEWS + 2 * EXEC_VIEW_MAX;
    let in_boot = boot.contains(&src);
    let window = if in_boot { boot } else { views };
    if !va.is_multiple_of(PAGE) || !src.is_multiple_of(PAGE) || !window.contains(&src) {
        return 0;
    }
    // An exec view's cache pages were bound without execute: the region
    // gets it when `exec::load` applies the rights.
    let flags = rights(if in_boot { prot } else { prot & !X }, false);
    let mut done = 0;
    while done + PAGE <= len && window.contains(&(src + done)) {
        let n = ((len - done) / PAGE).min(abi::syscall::RANGE_MAX);
        if sys::map_from_range(ENV_SELF, va + done, src + done, n, flags).is_err() {
            break;
        }
        done += n * PAGE;
    }
    done
}

/// Maps page `i` of `[at, ..)` read-only from this address space's page
/// `sources[i]` (a cache page in XN's window: `fs::disk::view`), one call
/// per run of consecutive sources. False if the kernel refused one.
pub fn map_view(at: u64, sources: &[u64]) -> bool {
    let mut i = 0;
    while i < sources.len() {
        let mut n = 1;
        while i + n < sources.len() && sources[i + n] == sources[i] + n as u64 * PAGE {
            n += 1;
        }
        let va = at + i as u64 * PAGE;
        if crate::range::map_from(ENV_SELF, va, sources[i], n as u64, 0).is_err() {
            return false;
        }
        i += n;
    }
    true
}

/// Unmaps a view (`map_view`): its frames are XN's cache pages, never
/// this process's to free.
pub fn drop_view(start: u64, end: u64) {
    unmap_pages(start, end, |_| {});
}

/// Changes the rights of `[start, end)`. Pages become writable lazily (the
/// first write faults) so copy-on-write sharing is never broken here.
pub fn protect(start: u64, end: u64, prot: u32) -> bool {
    let mut covered = start;
    let mut rs = regions();
    rs.sort_by_key(|r| r.start);
    for r in &rs {
        if r.end > covered && r.start <= covered {
            covered = r.end;
        }
    }
    if covered < end {
        return false;
    }
    let mut pieces = Vec::new();
    for r in rs.iter().filter(|r| r.start < end && r.end > start) {
        pieces.push(Region { start: r.start.max(start), end: r.end.min(end), prot });
    }
    with_space(|s| {
        carve(&mut s.regions, start, end);
        s.regions.extend(pieces);
    });
    // One kernel call per run of mapped pages.
    let mut va = start;
    while let Some(v) = next_mapped(va, end) {
        let mut run_end = v + PAGE;
        while run_end < end && pte(run_end).is_some() {
            run_end += PAGE;
        }
        let _ = crate::range::protect(ENV_SELF, v, (run_end - v) / PAGE, rights(prot, false));
        va = run_end;
    }
    true
}

/// Maps a fresh zeroed frame at `va` with `prot`.
pub fn populate(va: u64, prot: u32) -> bool {
    // Charged to the process, whichever thread touched the page.
    let Ok(f) = sys::frame_alloc(crate::env::id() as u64, FRAME_ANY) else {
        return false;
    };
    if sys::map(ENV_SELF, va, f, rights(prot, true)).is_err() {
        let _ = sys::frame_free(f);
        return false;
    }
    true
}

/// Gives this process its own writable copy of the page at `va`.
fn break_cow(va: u64, old: u64, prot: u32) -> bool {
    let f = frame_of(old);
    // Sole mapper of a frame we own: just allow writes again. (A frame our
    // parent owns may not be made writable here even when we are its last
    // mapper: the kernel grants at most the rights we were given.)
    let info = kinfo::frame(f);
    let in_place = info.refs <= 1 && info.owner as u64 == sys::self_id();
    if in_place && sys::protect(ENV_SELF, va, rights(prot, true)).is_ok() {
        return true;
    }
    let new = (FRAME_FOR.get())(va);
    if sys::map(ENV_SELF, SCRATCH, new, mf::WRITE).is_err() {
        let _ = sys::frame_free(new);
        return false;
    }
    // SAFETY: `va` is mapped (read-only) and SCRATCH maps the new frame.
    unsafe { crate::copy::copy_page(SCRATCH, va) };
    let _ = sys::unmap(ENV_SELF, SCRATCH);
    let _ = sys::unmap(ENV_SELF, va);
    let_go(f);
    sys::map(ENV_SELF, va, new, rights(prot, true)).is_ok()
}

/// The initial stack is dead from now on (`entry::enter`).
pub fn leave_native_stack() {
    with_space(|s| s.native_stack = false);
}

/// Is `va` in the live native program's stack? A forked child gets copies
/// of the pages in use and fresh zeroed ones below them on demand.
pub fn native_stack(va: u64) -> bool {
    with_space(|s| s.native_stack(va))
}

/// Makes the page at `va` usable for a read (or write): what a page fault
/// does, and what lxrt does before touching the program's buffers itself
/// (a fault inside lxrt's handler would be fatal).
pub fn touch(va: u64, write: bool) -> bool {
    let stack = Region { start: INIT_STACK_BOTTOM, end: INIT_STACK_TOP, prot: R | W };
    let Some(r) = with_space(|s| s.find(va).or_else(|| s.native_stack(va).then_some(stack))) else {
        return false;
    };
    if r.prot == 0 || (write && r.prot & W == 0) {
        return false;
    }
    let va = page_down(va);
    let p = pte(va);
    if p.is_some_and(|p| !write || p & WRITABLE != 0) {
        return true;
    }
    // A file's page: mapped from the file (writable if the mapping may
    // write the file, else a write copies it).
    if let Some(m) = shared_file(va) {
        match p {
            None => return map_file_page(va),
            Some(_) if m.write => return map_file_page(va),
            Some(_) => {}
        }
    }
    match p {
        None => {
            let f = (FRAME_FOR.get())(va);
            sys::map(ENV_SELF, va, f, rights(r.prot, true)).is_ok() || {
                let _ = sys::frame_free(f);
                false
            }
        }
        Some(p) => break_cow(va, p, r.prot),
    }
}

/// Checks and prepares `[ptr, ptr+len)` of the program's memory.
pub fn prepare(ptr: u64, len: u64, write: bool) -> bool {
    if len == 0 {
        return true;
    }
    let Some(end) = ptr.checked_add(len) else {
        return false;
    };
    // The last page by its start: rounding `end` up can wrap to 0 for a
    // range in the top page, which would check nothing.
    let last = page_down(end - 1);
    let mut va = page_down(ptr);
    loop {
        if !touch(va, write) {
            return false;
        }
        if va == last {
            return true;
        }
        va += PAGE;
    }
}
