//! Inodes and their data buffers.

use super::{pages, FsRoot, S_IFDIR, S_IFMT, S_ISGID};
use crate::errno::Errno;
use crate::errno::{EFBIG, ENOSPC, ETXTBSY};
use crate::scoped::Scoped;
use crate::shared;

/// The inode table's size follows the arena's: one inode per 8 KiB of
/// it, at least 8,192 (what a 512 MiB machine's 64 MiB arena has). A
/// bigger machine holds more files: the I/O-intensive workload's two
/// copies of a 2,284-file tree beside a root with Debian's C library
/// headers need more than 8,192 (`docs/benchmarks.md`).
const ARENA_PER_INODE: usize = 8192;
const MIN_INODES: u32 = 8192;

fn table_size() -> u32 {
    u32::try_from(shared::usage().0 / ARENA_PER_INODE).unwrap_or(u32::MAX).max(MIN_INODES)
}

pub use super::inode::{Ino, Inode};

/// The file systems the one tree holds: the root's, `/proc`, `/sys`, and
/// the device nodes of `/dev`.
pub const FS_ROOT: u8 = 0;
pub const FS_PROC: u8 = 1;
pub const FS_SYS: u8 = 2;
pub const FS_DEV: u8 = 3;

/// The inode table is in the shared arena, so the value here is only the
/// flag: this process borrows the table once at a time (other processes
/// are kept out by the big lock).
static TABLE: Scoped<()> = Scoped::new("the inode table", ());

/// The file system's anchor, in the arena.
static ROOT: shared::Root<FsRoot> = shared::Root::new(0);

/// Runs `f` on the file system's anchor; panics on a nested borrow.
fn with_root<R>(f: impl FnOnce(&mut FsRoot) -> R) -> R {
    // SAFETY: the header's field, mapped in every process; the flag makes
    // this the only reference to it or its table in this process.
    TABLE.with(|()| f(unsafe { &mut *ROOT.get() }))
}

/// Inode `ino` of the table `r` anchors.
fn slot(r: &mut FsRoot, ino: Ino) -> &mut Inode {
    assert!(ino > 0 && ino < r.count, "bad inode {ino}");
    // SAFETY: the table has `count` entries in the shared arena, reached
    // only through `r`, which is borrowed exclusively.
    unsafe { &mut *r.inodes.add(ino as usize) }
}

/// Whether this process is inside the inode table now.
pub fn borrowed() -> bool {
    TABLE.borrowed()
}

/// A copy of inode `ino`.
pub fn get(ino: Ino) -> Inode {
    with_root(|r| *slot(r, ino))
}

/// Runs `f` on inode `ino`; panics if the table is borrowed already, so
/// `f` must not reach the table again (`get`, `update`, `dir::*`).
pub fn update<R>(ino: Ino, f: impl FnOnce(&mut Inode) -> R) -> R {
    with_root(|r| f(slot(r, ino)))
}

/// Sets up the inode table (first process only).
pub fn init_table() -> bool {
    // SAFETY: a null table with no free inode: `FsRoot` all zero.
    if unsafe { ROOT.create_zeroed() }.is_err() {
        return false;
    }
    let count = table_size();
    let size = count as usize * size_of::<Inode>();
    let p = shared::alloc(size, 8) as *mut Inode;
    if p.is_null() {
        return false;
    }
    // SAFETY: a fresh block of `size` bytes; all-zero is a valid Inode.
    unsafe { core::ptr::write_bytes(p as *mut u8, 0, size) };
    with_root(|r| {
        r.inodes = p;
        r.count = count;
        // Inode 0 is never used; 1 is the root, built by the caller.
        for i in (2..count).rev() {
            slot(r, i).parent = r.free;
            r.free = i;
        }
    });
    true
}

/// A fresh inode with `mode`, no links yet.
pub fn alloc(mode: u32) -> Result<Ino, Errno> {
    with_root(|r| {
        let ino = r.free;
        if ino == 0 {
            return Err(ENOSPC);
        }
        let n = slot(r, ino);
        let next = n.parent;
        let now = crate::time::wall_ns();
        *n = Inode {
            mode,
            nlink: 0,
            opens: 0,
            parent: 0,
            size: 0,
            cap: 0,
            data: core::ptr::null_mut(),
            ticket: 0,
            maps: 0,
            paged: false,
            stale: false,
            borrowed: false,
            mtime_ns: now,
            atime_ns: now,
            ctime_ns: now,
            uid: 0,
            gid: 0,
            rdev: 0,
            fs: FS_ROOT,
            disk: 0,
            disk_at: 0,
            dirty: false,
            copied: false,
        };
        r.free = next;
        Ok(ino)
    })
}

/// The directory that holds Unix sockets' abstract names (Linux's
/// abstract namespace, a `sun_path` with a leading NUL): made at the first
/// bind, linked nowhere, so no path reaches it; its entries are the names'
/// bytes, whatever they hold.
pub fn unix_names() -> Result<Ino, Errno> {
    let made = with_root(|r| r.unix_names);
    if made != 0 {
        return Ok(made);
    }
    let d = alloc(S_IFDIR | 0o700)?;
    update(d, |n| (n.nlink, n.parent) = (1, d));
    with_root(|r| r.unix_names = d);
    Ok(d)
}

/// A fresh inode with `mode` in file system `fs` (`FS_*`), no links yet.
pub fn alloc_on(mode: u32, fs: u8) -> Result<Ino, Errno> {
    let ino = alloc(mode)?;
    update(ino, |n| n.fs = fs);
    Ok(ino)
}

pub fn is_dir(ino: Ino) -> bool {
    get(ino).mode & S_IFMT == S_IFDIR
}

/// Frees an inode nobody links or has open any more.
pub fn release(ino: Ino) {
    with_root(|r| {
        let free = r.free;
        let n = slot(r, ino);
        if n.nlink > 0 || n.opens > 0 {
            return;
        }
        drop_data(n);
        n.mode = 0;
        n.parent = free;
        r.free = ino;
    })
}

fn drop_data(n: &mut Inode) {
    if pages::paged(n) {
        pages::free_all(n);
    }
    if !n.borrowed && !n.data.is_null() {
        // SAFETY: an owned buffer of `cap` bytes from the shared heap.
        unsafe { shared::free(n.data, n.cap as usize, 8) };
    }
    n.data = core::ptr::null_mut();
    n.cap = 0;
    n.borrowed = false;
}

/// Drops the file's bytes from the arena (a `/data` file's copy: the
/// disk has them); the size stays.
pub fn drop_copy(n: &mut Inode) {
    drop_data(n);
    n.paged = false;
    n.copied = false;
}

/// The inode's bytes, if they are one buffer (not a mapped file's pages:
/// `contents`, `flatten`).
pub fn bytes(n: &Inode) -> &'static [u8] {
    debug_assert!(!pages::paged(n), "bytes of a paged file");
    if n.data.is_null() || pages::paged(n) {
        return &[];
    }
    // SAFETY: `data` holds `size` valid bytes (arena or boot archive).
    unsafe { core::slice::from_raw_parts(n.data, n.size as usize) }
}

/// The inode's bytes, wherever they are.
pub fn contents(n: &Inode) -> alloc::borrow::Cow<'static, [u8]> {
    match pages::paged(n) {
        true => pages::gather(n).into(),
        false => bytes(n).into(),
    }
}

/// Makes the file's pages one buffer again if nobody maps them (exec
/// needs a program's bytes in one piece); ETXTBSY while mapped.
pub fn flatten(n: &mut Inode) -> Result<(), Errno> {
    if !pages::paged(n) {
        return Ok(());
    }
    if n.maps > 0 {
        return Err(ETXTBSY);
    }
    let data = pages::gather(n);
    pages::free_all(n);
    n.size = 0;
    write_at(n, 0, &data).map(|_| ())
}

/// Gives the file's data as pages that stay put (a shared mapping maps
/// them), copying a buffer in once.
pub fn page_in(n: &mut Inode) -> Result<(), Errno> {
    if pages::paged(n) {
        return Ok(());
    }
    let mut paged = Inode { data: core::ptr::null_mut(), cap: 0, borrowed: false, paged: true, ..*n };
    pages::convert(&mut paged, bytes(n))?;
    drop_data(n);
    *n = paged;
    Ok(())
}

/// Makes room for `len` bytes in an owned buffer (copying a borrowed one).
/// A buffer at least doubles, so appends cost little; where that does not
/// fit it grows to just what is asked. File data must leave the arena's
/// reserve free (`shared::alloc_data`); directories may use it, so a full
/// file system still lets files be made and removed.
pub fn reserve(n: &mut Inode, len: u64) -> Result<(), Errno> {
    // No file can be larger than the arena that holds it.
    if pages::paged(n) {
        return pages::reserve(n, len);
    }
    if len > crate::layout::SHARED_MAX {
        return Err(EFBIG);
    }
    if !n.borrowed && n.cap >= len {
        return Ok(());
    }
    // A file still read in place (borrowed) is copied whole, whatever part
    // of it the caller is about to write.
    let len = len.max(n.size);
    let exact = len.max(64).next_multiple_of(64);
    let doubled = exact.max(n.cap * 2);
    let dir = n.mode & S_IFMT == S_IFDIR;
    if !n.borrowed && !n.data.is_null() {
        for cap in [doubled, exact] {
            let grown = if dir {
                // SAFETY: an owned buffer of `cap` bytes from the shared heap.
                unsafe { shared::grow(n.data, n.cap as usize, 8, cap as usize) }
            } else {
                // SAFETY: as above, from the data heap.
                unsafe { shared::grow_data(n.data, n.cap as usize, 8, cap as usize) }
            };
            if grown {
                // SAFETY: the buffer now has `cap` bytes; the new part is
                // zeroed so holes read as zeros.
                unsafe { core::ptr::write_bytes(n.data.add(n.cap as usize), 0, (cap - n.cap) as usize) };
                n.cap = cap;
                return Ok(());
            }
        }
    }
    let alloc =
        |cap: u64| if dir { shared::alloc(cap as usize, 8) } else { shared::alloc_data(cap as usize, 8) };
    let (mut cap, mut p) = (doubled, alloc(doubled));
    if p.is_null() {
        (cap, p) = (exact, alloc(exact));
    }
    if p.is_null() {
        return Err(ENOSPC);
    }
    let old = bytes(n);
    // SAFETY: `p` has `cap >= size` bytes; the rest is zeroed so holes
    // read as zeros.
    unsafe {
        core::ptr::copy_nonoverlapping(old.as_ptr(), p, old.len());
        core::ptr::write_bytes(p.add(old.len()), 0, cap as usize - old.len());
    }
    drop_data(n);
    n.data = p;
    n.cap = cap;
    Ok(())
}

/// Reads from `off`; returns the byte count.
pub fn read_at(n: &Inode, off: u64, buf: &mut [u8]) -> usize {
    if pages::paged(n) {
        return pages::read(n, off, buf);
    }
    let b = bytes(n);
    if off >= b.len() as u64 {
        return 0;
    }
    let k = buf.len().min(b.len() - off as usize);
    buf[..k].copy_from_slice(&b[off as usize..off as usize + k]);
    k
}

pub fn write_at(n: &mut Inode, off: u64, buf: &[u8]) -> Result<usize, Errno> {
    let end = off.checked_add(buf.len() as u64).ok_or(EFBIG)?;
    reserve(n, end)?;
    if pages::paged(n) {
        // A page may hold a mapping's stores past the old end.
        pages::zero(n, n.size, off);
        pages::write(n, off, buf);
        n.size = n.size.max(end);
        touch(n);
        return Ok(buf.len());
    }
    // SAFETY: `reserve` made `data` an owned buffer of at least `end` bytes.
    unsafe { core::ptr::copy_nonoverlapping(buf.as_ptr(), n.data.add(off as usize), buf.len()) };
    n.size = n.size.max(end);
    touch(n);
    Ok(buf.len())
}

pub fn truncate(n: &mut Inode, len: u64) -> Result<(), Errno> {
    if pages::paged(n) {
        truncate_pages(n, len)?;
    } else if len > n.size {
        reserve(n, len)?;
    } else if n.borrowed {
        // Still read-only data: shortening needs no copy.
    } else if !n.data.is_null() {
        // SAFETY: bytes past the new end are zeroed so a later extension
        // reads zeros.
        unsafe { core::ptr::write_bytes(n.data.add(len as usize), 0, (n.size - len) as usize) };
    }
    n.size = len;
    touch(n);
    Ok(())
}

/// `truncate` of a mapped file: the bytes past the end read as zeros in
/// every mapping of the last page; pages past it stay the file's while
/// any process maps it (zeroed), else they are freed.
fn truncate_pages(n: &mut Inode, len: u64) -> Result<(), Errno> {
    if len > n.size {
        pages::zero(n, n.size, len);
        return pages::reserve(n, len);
    }
    pages::zero(n, len, n.size);
    if n.maps > 0 {
        // Every process's mappings lose the pages past the end.
        shared::shrinks().fetch_add(1, core::sync::atomic::Ordering::Release);
    } else {
        let size = n.size;
        n.size = len;
        pages::trim(n);
        n.size = size;
    }
    Ok(())
}

/// The last shared mapping of the file is gone: the pages a truncation
/// left past its end are freed.
pub fn unmapped(n: &mut Inode) {
    n.maps = n.maps.saturating_sub(1);
    if n.maps == 0 && pages::paged(n) {
        pages::trim(n);
    }
}

/// The data changed now: modification and change times.
pub fn touch(n: &mut Inode) {
    n.dirty = true;
    n.mtime_ns = crate::time::wall_ns();
    n.ctime_ns = n.mtime_ns;
}

/// A file just made in directory `dir` is in the directory's file system
/// (`/dev/shm`'s files are devtmpfs's), takes the directory's group if the
/// directory is set-group-ID, and a directory made there the bit too (the
/// BSD rule Linux follows).
pub fn inherit(dir: Ino, ino: Ino) {
    let d = get(dir);
    update(ino, |n| n.fs = d.fs);
    if d.mode & S_ISGID != 0 {
        update(ino, |n| {
            n.gid = d.gid;
            if n.mode & S_IFMT == S_IFDIR {
                n.mode |= S_ISGID;
            }
        });
    }
}
