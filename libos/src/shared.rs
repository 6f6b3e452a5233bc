//! The shared arena (paper 000 §5.2.1: ExOS keeps the process table, file
//! descriptors' objects and pipes in memory shared between processes).
//!
//! The first process sizes the arena from the machine's memory (an eighth
//! of the frames the kernel's table lists, within `SHARED_MIN..=SHARED_MAX`),
//! allocates every frame of it up front, lists them in a window of their
//! own (`SHARED_LIST`, whose pages' frames the header names) and guards
//! each with a share capability it derives for the purpose (`frame_share`),
//! so any process holding that capability may map them by name. Nobody
//! maps more of the arena than the shared heap has handed out (`backed`):
//! fork maps the used part into the child with one `map_from_range`
//! (the same frames, writable: a file one process writes is the file
//! another reads) and grants it the capability; when the heap grows, the
//! process growing it maps the new frames, and every other process maps
//! them when it next takes the lock (`sync`), before it can look at
//! anything stored there. So lxrt's handler never faults on the arena.
//! The first pages hold this header; the rest is handed out by a `Heap`
//! kept in the header. Nothing here is protected from a buggy process:
//! like ExOS's shared state it is writable by every process of the tree.

use crate::heap::Heap;
use crate::layout::{PAGE, SHARED, SHARED_LIST, SHARED_MAX, SHARED_MIN};
use crate::word::Word;
use abi::syscall::{map as mf, ENV_SELF, FRAME_ANY};
use abi::syscall::{rights, CRED_SELF};
use core::marker::PhantomData;
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use user::sys;

#[repr(C)]
pub struct Header {
    /// The big lock (`crate::lock`).
    pub lock: AtomicU64,
    pub heap: Heap,
    /// The objects the modules above keep in the arena for every process
    /// (`Root`): their addresses, 0 until the first process makes them.
    roots: [AtomicU64; ROOTS],
    /// Linux calls already reported as unsupported (one bit per number).
    pub logged: [u64; 8],
    /// The process being killed for want of memory (`oom`), or 0.
    pub oom_victim: AtomicU32,
    /// Nanoseconds `clock_settime` has moved the wall clock by (`time`
    /// reads it through `time::set_adjust_word`; the vDSO reads it too, so
    /// it is a word of its own).
    pub wall_adjust_ns: core::sync::atomic::AtomicI64,
    /// The host and domain names `sethostname` and `setdomainname` set
    /// (NUL-padded; empty: never set).
    pub names: [[u8; NAME_LEN]; 2],
    /// How many processes have been handed to init (`proc::exit`): init
    /// looks for them in the kernel's table only when this has moved.
    pub handed: AtomicU32,
    /// The network (`net::stack::Shared`, in the arena), or 0 before the
    /// first process made its packet endpoint.
    pub net: AtomicU64,
    /// The frames of the frame list's pages. The list (at `SHARED_LIST`)
    /// names the frame behind each page of the arena, all owned by the
    /// first process. A process maps a page of it (read-only) only when it
    /// first maps arena pages listed there, so fork shares none of it and
    /// the list's size (the machine's) costs forks nothing.
    pub list: [u32; LIST_PAGES],
    /// A process waiting for the big lock (`crate::lock`), or 0, and the
    /// timer tick (`kinfo::ticks`) from which it has waited long: a release
    /// from then on hands it the CPU.
    pub lock_waiter: AtomicU64,
    pub lock_waiter_until: AtomicU64,
    /// How many times a file some process maps has been shortened: each
    /// process drops its mappings' pages past their files' ends at its
    /// next Linux call (`filemap::sync`).
    pub shrinks: AtomicU64,
    /// When `/data` first changed since its last write-back
    /// (`time::now_ns`; 0: nothing waits), for the periodic write-back
    /// (`fs::disk::expire`).
    pub disk_dirty_since: AtomicU64,
}

/// Entries in one page of the frame list.
const PER_LIST_PAGE: u64 = PAGE / size_of::<u32>() as u64;
const LIST_PAGES: usize = (SHARED_MAX / PAGE / PER_LIST_PAGE) as usize;

/// Where the header ends.
const HEADER_END: u64 = SHARED + (size_of::<Header>() as u64).next_multiple_of(PAGE);

/// The frame behind the arena's page `va`, mapping the page of the list
/// that names it first if this process has not yet.
fn frame_at(va: u64) -> Option<u64> {
    let i = (va - SHARED) / PAGE;
    let list_page = SHARED_LIST + i / PER_LIST_PAGE * PAGE;
    if crate::selfmap::pte(list_page).is_none() {
        let f = list_page_frame((i / PER_LIST_PAGE) as usize);
        sys::map_with(ENV_SELF, list_page, f, 0, CRED_SELF, CRED.get()).ok()?;
    }
    // SAFETY: the list's page holding entry `i` is mapped just above.
    Some(unsafe { *(SHARED_LIST as *const u32).add(i as usize) } as u64)
}

/// The arena's size on a machine whose kernel manages `frames` frames.
fn arena_size(frames: u64) -> u64 {
    (frames * PAGE / 8).clamp(SHARED_MIN, SHARED_MAX) & !(PAGE - 1)
}

/// The capability slot (in this process's list) that covers the arena's
/// frames, the one a child being forked receives it in, and how far this
/// process has the arena mapped.
static CRED: Word<u64> = Word::new(0);
static CHILD_CRED: Word<u64> = Word::new(0);
static MAPPED: Word<u64> = Word::new(SHARED);
/// Where the arena ends: the heap's own record of how far it is backed is
/// in the arena, which any process can write, so it is believed only up
/// to here.
static END: Word<u64> = Word::new(SHARED);

/// Slots for objects of the modules above (`Root`).
const ROOTS: usize = 10;

/// An object of a module above that every process finds from the arena's
/// header (the file system's anchor, the terminal, the futex waiters): the
/// first process allocates it (`create_zeroed`), the others inherit its
/// address. Each module claims its slot: 0 the file system (`fs::node`),
/// 1 the terminal (`obj::console`), 2 the futex waiters (`futex`), 3 the
/// futex wakers' bytes (`futex`), 4 the file locks (`locks`), 5 and 6
/// System V IPC's message queues and semaphore sets (`linux::ipcmsg`,
/// `linux::ipcsem`, made by the first call that needs them:
/// `get_or_create_zeroed`), 7 the pseudo-terminals (`obj::pty`), 8 the
/// inotify instances (`obj::inotify`).
pub struct Root<T> {
    slot: usize,
    object: PhantomData<fn() -> T>,
}

impl<T> Root<T> {
    pub const fn new(slot: usize) -> Root<T> {
        assert!(slot < ROOTS);
        Root { slot, object: PhantomData }
    }

    fn word(&self) -> &'static AtomicU64 {
        // SAFETY: as in `lock_word`.
        unsafe { &(*header()).roots[self.slot] }
    }

    /// Allocates the object, all zero (first process, at start).
    ///
    /// # Safety
    /// `T` is valid all zero.
    pub unsafe fn create_zeroed(&self) -> Result<(), abi::Error> {
        assert_eq!(self.word().load(Ordering::Relaxed), 0, "arena root {} claimed twice", self.slot);
        let p = alloc(size_of::<T>(), align_of::<T>());
        if p.is_null() {
            return Err(abi::Error::NoMemory);
        }
        // SAFETY: a fresh block of `size_of::<T>()` bytes.
        unsafe { p.write_bytes(0, size_of::<T>()) };
        self.word().store(p as u64, Ordering::Relaxed);
        KNOWN[self.slot].set(p as u64);
        Ok(())
    }

    /// The object, made all zero by the first call that needs it (every
    /// caller holds the big lock, so it is made once); it lives as long as
    /// the arena.
    ///
    /// # Safety
    /// `T` is valid all zero.
    pub unsafe fn get_or_create_zeroed(&self) -> Result<*mut T, abi::Error> {
        if self.get().is_null() {
            // SAFETY: the caller's promise; the slot is unclaimed.
            unsafe { self.create_zeroed()? };
        }
        Ok(self.get())
    }

    /// The object (made at start; it lives as long as the arena), or null
    /// before it is made. Every use must hold the big lock. The arena's
    /// word is believed once, and only if it names a block inside the part
    /// of the arena this process maps: a root never moves, so the process
    /// (and every child forked from it) keeps that answer privately, and
    /// a process that writes over the header cannot send another's lxrt
    /// through a wild pointer (issue 25).
    #[inline]
    pub fn get(&self) -> *mut T {
        let known = KNOWN[self.slot].get();
        if known != 0 {
            return known as *mut T;
        }
        let p = self.word().load(Ordering::Relaxed);
        if p == 0 {
            return core::ptr::null_mut();
        }
        assert!(holds::<T>(p), "arena root {} overwritten: {p:#x}", self.slot);
        KNOWN[self.slot].set(p);
        p as *mut T
    }
}

/// Whether `p` (read from the arena, which any process can write) names a
/// block for a `T` inside the part of the arena this process maps, past
/// the header: one that can be read without a fault.
pub fn holds<T>(p: u64) -> bool {
    p >= HEADER_END
        && p.is_multiple_of(align_of::<T>() as u64)
        && p.checked_add(size_of::<T>() as u64).is_some_and(|e| e <= MAPPED.get())
}

/// The roots this process has believed (`Root::get`).
static KNOWN: [Word<u64>; ROOTS] = [const { Word::new(0) }; ROOTS];

/// The header, in every process at the same address. Never turned into a
/// reference as a whole: each field is reached on its own (below), so a
/// use of one (the heap growing) cannot alias a use of another (the frame
/// list it reads).
fn header() -> *mut Header {
    SHARED as *mut Header
}

/// The big lock's word.
pub fn lock_word() -> &'static AtomicU64 {
    // SAFETY: the arena is mapped in every lxrt process before any code
    // calls this; an atomic is shared by reference.
    unsafe { &(*header()).lock }
}

/// A waiter for the big lock to hand the CPU to (`lock`), or 0.
pub fn lock_waiter() -> &'static AtomicU64 {
    // SAFETY: as in `lock_word`.
    unsafe { &(*header()).lock_waiter }
}

/// The tick from which `lock_waiter` has waited long (`kinfo::ticks`).
pub fn lock_waiter_until() -> &'static AtomicU64 {
    // SAFETY: as in `lock_word`.
    unsafe { &(*header()).lock_waiter_until }
}

/// The count of shortened mapped files (`filemap::sync`).
pub fn shrinks() -> &'static AtomicU64 {
    // SAFETY: as in `lock_word`.
    unsafe { &(*header()).shrinks }
}

/// When `/data` first changed since its last write-back, or 0
/// (`fs::disk`).
pub fn disk_dirty_since() -> &'static AtomicU64 {
    // SAFETY: as in `lock_word`.
    unsafe { &(*header()).disk_dirty_since }
}

/// The process being killed for want of memory (`oom`), or 0.
pub fn oom_victim() -> &'static AtomicU32 {
    // SAFETY: as in `lock_word`.
    unsafe { &(*header()).oom_victim }
}

/// The wall clock's setting (`time::set_wall_ns`).
pub fn wall_adjust() -> &'static core::sync::atomic::AtomicI64 {
    // SAFETY: as in `lock_word`.
    unsafe { &(*header()).wall_adjust_ns }
}

/// The longest host or domain name (Linux's `__NEW_UTS_LEN`).
pub const NAME_LEN: usize = 64;

/// The host name (0) or domain name (1) set, empty if none was.
pub fn name(which: usize) -> &'static [u8] {
    // SAFETY: a field of the mapped header, changed only under the big lock.
    let n = unsafe { &(*header()).names[which] };
    &n[..n.iter().position(|&b| b == 0).unwrap_or(NAME_LEN)]
}

/// Sets the host name (0) or domain name (1).
pub fn set_name(which: usize, name: &[u8]) {
    // SAFETY: as in `name`; the caller holds the big lock.
    let n = unsafe { &mut (*header()).names[which] };
    n.fill(0);
    n[..name.len()].copy_from_slice(name);
}

/// How many processes have been handed to init.
pub fn handed() -> &'static AtomicU32 {
    // SAFETY: as in `lock_word`.
    unsafe { &(*header()).handed }
}

/// The network's anchor (`net::stack`).
pub fn net_word() -> &'static AtomicU64 {
    // SAFETY: as in `lock_word`.
    unsafe { &(*header()).net }
}

/// The capability this process maps arena pages with (`map_with`).
pub fn cred() -> u64 {
    CRED.get()
}

/// Marks Linux call `nr` (below 512) as reported unsupported; whether it
/// was already.
pub fn logged(nr: u64) -> bool {
    let bit = 1 << (nr % 64);
    // SAFETY: a field of the mapped header; the word is read and written by
    // value, no reference to it is made.
    unsafe {
        let word = &raw mut (*header()).logged[(nr / 64) as usize % 8];
        let old = word.read();
        word.write(old | bit);
        old & bit != 0
    }
}

/// The shared heap (a field of the header; the big lock keeps the other
/// processes out).
///
/// # Safety
/// No other reference to the heap may be live while the result is. Only
/// this module calls it, one heap operation at a time; the heap's growth
/// callback (`map_more`) does not use the heap.
unsafe fn heap() -> &'static mut Heap {
    // SAFETY: a field of the mapped header; the caller holds no other
    // reference to it.
    unsafe { &mut (*header()).heap }
}

/// The frame named by entry `i` of the header's list of list pages.
fn list_page_frame(i: usize) -> u64 {
    // SAFETY: a field of the mapped header, read by value.
    (unsafe { (*header()).list[i] }) as u64
}

/// Allocates `size` bytes of shared memory (not zeroed), or null when the
/// arena is full.
pub fn alloc(size: usize, align: usize) -> *mut u8 {
    // SAFETY: one heap operation; see `heap`.
    unsafe { heap() }.alloc(size, align)
}

/// Grows the block at `p` from `size` to `new_size` bytes where it lies.
///
/// # Safety
/// `p` came from `alloc` with `size` and `align`; `new_size >= size`.
pub unsafe fn grow(p: *mut u8, size: usize, align: usize, new_size: usize) -> bool {
    // SAFETY: passed on from the caller; one heap operation.
    unsafe { heap().grow_in_place(p, size, align, new_size) }
}

/// Bytes the arena keeps for everything but file data: a full file system
/// must leave room for pipes, open files and directories' growth, or the
/// shell could run nothing more (a 64th of the arena, at least 1 MiB).
pub fn reserve() -> usize {
    // SAFETY: one heap operation.
    (unsafe { heap() }.size() / 64).max(1 << 20)
}

/// The arena's size and the bytes in use (`statfs`).
pub fn usage() -> (usize, usize) {
    // SAFETY: one heap operation.
    let h = unsafe { heap() };
    (h.size(), h.in_use())
}

/// Whether `more` bytes of file data fit, leaving `reserve` bytes.
fn data_fits(more: usize) -> bool {
    let reserve = reserve();
    // SAFETY: one heap operation.
    let h = unsafe { heap() };
    h.in_use().saturating_add(more).saturating_add(reserve) <= h.size()
}

/// Allocates `size` bytes for file data: null when that would leave less
/// than `reserve` bytes of the arena (a full file system, ENOSPC).
pub fn alloc_data(size: usize, align: usize) -> *mut u8 {
    if !data_fits(size) {
        return core::ptr::null_mut();
    }
    alloc(size, align)
}

/// Grows file data at `p` from `size` to `new_size` bytes where it lies,
/// if the arena has the room there and `alloc_data` would allow it.
///
/// # Safety
/// `p` came from `alloc_data` with `size` and `align`; `new_size >= size`.
pub unsafe fn grow_data(p: *mut u8, size: usize, align: usize, new_size: usize) -> bool {
    // SAFETY: passed on from the caller.
    // SAFETY: passed on from the caller; one heap operation.
    data_fits(new_size - size) && unsafe { heap().grow_in_place(p, size, align, new_size) }
}

/// # Safety
/// `p` came from `alloc` with the same size and alignment.
pub unsafe fn free(p: *mut u8, size: usize, align: usize) {
    // SAFETY: passed on from the caller; one heap operation.
    unsafe { heap().free(p, size, align) }
}

/// Maps the arena's pages `[from, to)` into this process by frame name.
fn map_pages(from: u64, to: u64) -> bool {
    let mut va = from;
    while va < to {
        let Some(f) = frame_at(va) else {
            return false;
        };
        if sys::map_with(ENV_SELF, va, f, mf::WRITE, CRED_SELF, CRED.get()).is_err() {
            return false;
        }
        va += PAGE;
    }
    true
}

/// The heap's growth: map what it reaches next (the frames exist already).
fn map_more(from: usize, to: usize) -> bool {
    let mapped = &MAPPED;
    let _ = from;
    if !map_pages(mapped.get(), to as u64) {
        return false;
    }
    mapped.set(to as u64);
    true
}

/// Maps whatever part of the arena other processes' allocations have
/// reached since this process last looked (called with the lock held).
#[inline]
pub fn sync() {
    // SAFETY: one heap operation.
    let backed = (unsafe { heap() }.backed() as u64).min(END.get());
    let mapped = &MAPPED;
    if backed > mapped.get() && map_pages(mapped.get(), backed) {
        mapped.set(backed);
    }
}

/// Allocates the arena's frames and maps its header (first process only).
pub fn create() -> Result<(), abi::Error> {
    let cred = sys::cap_derive(CRED_SELF, rights::ALL)?;
    let size = arena_size(user::kinfo::kernel().frames);
    let fresh = |va: Option<u64>| -> Result<u64, abi::Error> {
        let f = sys::frame_alloc(ENV_SELF, FRAME_ANY)?;
        if let Some(va) = va {
            sys::map(ENV_SELF, va, f, mf::WRITE)?;
        }
        sys::frame_share(f, cred)?;
        Ok(f)
    };
    // The header and the list are mapped here; then every page's frame is
    // listed (the header's first, read back from the page table).
    for va in (SHARED..HEADER_END).step_by(PAGE as usize) {
        fresh(Some(va))?;
    }
    let pages = size / PAGE;
    for i in 0..pages.div_ceil(PER_LIST_PAGE) {
        let f = fresh(Some(SHARED_LIST + i * PAGE))? as u32;
        // SAFETY: a field of the mapped header, written by value.
        unsafe { (*header()).list[i as usize] = f };
    }
    let list = SHARED_LIST as *mut u32;
    for i in 0..pages {
        let va = SHARED + i * PAGE;
        let f = if va < HEADER_END {
            abi::pte::frame_of(crate::selfmap::pte(va).ok_or(abi::Error::NotMapped)?)
        } else {
            fresh(None)?
        };
        // SAFETY: the list's pages for all `pages` entries are mapped above.
        unsafe { *list.add(i as usize) = f as u32 };
    }
    CRED.set(cred);
    MAPPED.set(HEADER_END);
    END.set(SHARED + size);
    // Inherited by every process forked from here.
    crate::time::set_adjust_word(wall_adjust());
    let end = (SHARED + size) as usize;
    // SAFETY: one heap operation.
    unsafe { heap() }.init(HEADER_END as usize, end, HEADER_END as usize, Some(map_more));
    Ok(())
}

/// Maps the part of the arena in use into child `env` at the same address
/// and grants it the capability to map the rest (fork).
pub fn share_with(env: u64) -> Result<(), abi::Error> {
    crate::range::map_from(env, SHARED, SHARED, (MAPPED.get() - SHARED) / PAGE, mf::WRITE)?;
    // The child reads it from its copy of our state.
    CHILD_CRED.set(sys::cap_grant(env, CRED.get())?);
    Ok(())
}

/// First thing in a forked child: its capability slot for the arena.
pub fn forked_child() {
    CRED.set(CHILD_CRED.get());
}
