//! fork in the library, with copy-on-write (paper 000 §5.2.1).
//!
//! The parent scans its own page tables through the kernel's read-only
//! self-map, gathers runs of consecutive pages that are treated alike, and
//! builds the child's address space with one batched kernel call per run
//! (`range`):
//! - the shared arena: only the part in use, the same frames, writable
//!   (files, pipes, the process table are shared, not copied); the child
//!   gets the capability to map the rest when the shared heap grows
//!   (`shared`);
//! - the program's writable pages: write-protected here (`protect_range`)
//!   and mapped read-only into the child, so the first write by either side
//!   faults and `vm` copies (or just re-enables writing once the frame
//!   table shows one mapper left);
//! - read-only pages (text): the same frames, read-only;
//! - lxrt's own writable data (its statics and private heap, which the fork
//!   code itself is using, and the part of a native program's stack in
//!   use): copied now, as ExOS copies the pages fork runs on, into a kit of
//!   frames kept for children (`kit`); the exception stack is mapped from
//!   the kit without copying. The unused part of a native program's stack
//!   is left out: the child gets zeroed pages there on demand.
//!
//! A `CLONE_VM` child (`vfork.rs`) gets the program's writable pages
//! shared instead, writable in both (only lxrt's own memory is copied).
//!
//! The child starts at `entry::lx_start`, which resumes the program
//! just after its `fork` with rax = 0.

use super::kit::Kit;
use super::table;
use crate::errno::Errno;
use crate::errno::{EAGAIN, ENOMEM};
use crate::layout::{page_down, INIT_STACK_BOTTOM, INIT_STACK_TOP, PAGE, PRIVATE_HEAP, SCRATCH};
use crate::{entry, fd, lock, predicate, range, shared, vm};
use abi::exception::ExceptionFrame;
use abi::layout::pte_va;
use abi::pte::{NO_EXEC, PRESENT, USER, WRITABLE};
use abi::syscall::map as mf;
use abi::Error;
use user::sys;

/// What one page table covers.
const TABLE_SPAN: u64 = 1 << 21;

fn entry_at(va: u64, level: u32) -> u64 {
    // SAFETY: only called once the level above is known present.
    unsafe { core::ptr::read_volatile(pte_va(va, level) as *const u64) }
}

/// The bits of an entry that decide what a child gets for its page
/// (`Builder::classify`, `mf::of_pte`).
const RIGHTS: u64 = PRESENT | WRITABLE | USER | NO_EXEC;

/// Calls `f(va, pages, pte)` for every run of present 4 KiB pages in
/// `[start, end)` that lie in one page table and whose entries agree in
/// `RIGHTS` (`pte` is the first one's), in order, skipping whole tables
/// that are absent.
fn each_run(
    start: u64,
    end: u64,
    f: &mut impl FnMut(u64, u64, u64) -> Result<(), Error>,
) -> Result<(), Error> {
    let mut va = page_down(start);
    while va < end {
        // The first absent level above the page, if any: skip its span.
        let absent = (1..4).rev().find(|&level| entry_at(va, level) & PRESENT == 0);
        if let Some(level) = absent {
            let span = PAGE << (9 * level);
            va = (va & !(span - 1)).saturating_add(span);
            continue;
        }
        let table_end = ((va | (TABLE_SPAN - 1)) + 1).min(end);
        // The entries from `va`'s to the table's end, read by index: no
        // address is worked out again for each page. `end` need not be
        // page-aligned (lxrt's image ends mid-page): its page counts.
        let (entries, n) = (pte_va(va, 0) as *const u64, (table_end - va).div_ceil(PAGE));
        // SAFETY: the leaf table is present (above), and `n` entries from
        // `va`'s stay inside it.
        let entry = |i: u64| unsafe { core::ptr::read_volatile(entries.add(i as usize)) };
        let mut i = 0;
        while i < n {
            let e = entry(i);
            let first = i;
            i += 1;
            if e & PRESENT == 0 {
                continue;
            }
            while i < n && (entry(i) ^ e) & RIGHTS == 0 {
                i += 1;
            }
            f(va + first * PAGE, i - first, e)?;
        }
        va = table_end;
    }
    Ok(())
}

/// What the child gets for a page.
#[derive(Clone, Copy, PartialEq, Eq)]
enum How {
    /// Nothing (scratch, the unused part of the initial stack).
    Skip,
    /// The same frame, read-only in both: copy-on-write.
    Cow,
    /// The same frame with the same rights (read-only pages).
    Share,
    /// A private copy (lxrt's own writable memory; the program's in a
    /// child of a vfork child, `Builder::borrowed`).
    Copy,
}

/// A run of consecutive pages treated alike.
#[derive(Clone, Copy)]
struct Run {
    start: u64,
    pages: u64,
    how: How,
    rights: u64,
}

struct Builder {
    child: u64,
    /// The program's memory is shared, not copied (`Sharing::memory`).
    share: bool,
    /// This process runs over its vfork parent's memory (`vfork.rs`): the
    /// frames are writable there, so copy-on-write cannot protect a child
    /// of ours from the parent's writes; it gets copies.
    borrowed: bool,
    kit: Option<Kit>,
    /// The lowest page of a native program's stack still in use.
    stack_live: u64,
    run: Option<Run>,
    /// For the range being walked: whether every page of it lies in a
    /// region, and in a `MAP_SHARED` mapping, where that is the same for
    /// all of them (`None`: asked of each page).
    in_region: Option<bool>,
    in_shared: Option<bool>,
}

impl Builder {
    /// Walks the present pages of `[start, end)`. `region`: the range is
    /// one of the program's regions (else its pages are looked up).
    fn range(&mut self, start: u64, end: u64, region: bool) -> Result<(), Error> {
        let (meets_region, meets_shared) = vm::meets(start, end);
        self.in_region = if region { Some(true) } else { (!meets_region).then_some(false) };
        self.in_shared = (!meets_shared).then_some(false);
        each_run(start, end, &mut |va, pages, pte| self.pages(va, pages, pte))
    }

    /// `pages` pages from `va` whose entries agree in `RIGHTS` (`pte`):
    /// classified once where the answer is the same for all of them, else
    /// page by page.
    fn pages(&mut self, va: u64, pages: u64, pte: u64) -> Result<(), Error> {
        let end = va + pages * PAGE;
        // Where `classify` skips the unused part of the initial stack.
        let (lo, hi) = (INIT_STACK_BOTTOM, self.stack_live.min(INIT_STACK_TOP));
        let uniform = self.in_region.is_some()
            && self.in_shared.is_some()
            && (end <= lo || va >= hi || (lo <= va && end <= hi));
        if !uniform {
            return (0..pages).try_for_each(|i| self.add(va + i * PAGE, 1, pte));
        }
        self.add(va, pages, pte)
    }

    fn classify(&self, va: u64, pte: u64) -> How {
        if (INIT_STACK_BOTTOM..INIT_STACK_TOP).contains(&va) && va < self.stack_live {
            return How::Skip;
        }
        let in_region = self.in_region.unwrap_or_else(|| vm::find(va).is_some());
        let shared = || self.in_shared.unwrap_or_else(|| vm::fork_shared(va));
        match (in_region, pte & WRITABLE != 0) {
            (true, true) if self.share || shared() => How::Share,
            (true, true) if self.borrowed => How::Copy,
            (true, true) => How::Cow,
            (false, true) => How::Copy,
            (_, false) => How::Share,
        }
    }

    /// `pages` pages from `va`, treated as the first is: joined to the
    /// current run if they continue it alike.
    fn add(&mut self, va: u64, pages: u64, pte: u64) -> Result<(), Error> {
        let (how, rights) = (self.classify(va, pte), mf::of_pte(pte));
        if let Some(r) = &mut self.run {
            if r.how == how && r.rights == rights && r.start + r.pages * PAGE == va {
                r.pages += pages;
                return Ok(());
            }
        }
        self.flush()?;
        self.run = Some(Run { start: va, pages, how, rights });
        Ok(())
    }

    fn flush(&mut self) -> Result<(), Error> {
        let Some(r) = self.run.take() else {
            return Ok(());
        };
        match r.how {
            How::Skip => Ok(()),
            How::Share => range::map_from(self.child, r.start, r.start, r.pages, r.rights),
            How::Cow => {
                let ro = r.rights & !mf::WRITE;
                range::protect(0, r.start, r.pages, ro)?;
                range::map_from(self.child, r.start, r.start, r.pages, ro)
            }
            How::Copy => match self.kit.as_mut().and_then(|k| k.next(r.pages)) {
                Some(at) => {
                    let stack = entry::stack_range();
                    let image_end = crate::layout::image().1;
                    for i in 0..r.pages {
                        let va = r.start + i * PAGE;
                        // Pages wholly inside the exception stack are not
                        // copied (the ones at its ends hold other statics),
                        // nor the predicates' table, which the child's
                        // threads write before they read.
                        if (va >= stack.start && va + PAGE <= stack.end) || va == predicate::params_page() {
                            continue;
                        }
                        // The image's last page only up to its end: no
                        // name reaches past it.
                        let len = if va < image_end && image_end < va + PAGE { image_end - va } else { PAGE };
                        // SAFETY: `va` is mapped here, and the kit's page
                        // is ours, writable, used by no child.
                        unsafe { crate::copy::copy_head(at + i * PAGE, va, len as usize) };
                    }
                    range::map_from(self.child, r.start, at, r.pages, r.rights)
                }
                None => (0..r.pages).try_for_each(|i| copy_page(self.child, r.start + i * PAGE, r.rights)),
            },
        }
    }
}

fn copy_page(child: u64, va: u64, rights: u64) -> Result<(), Error> {
    let f = sys::frame_alloc(child, abi::syscall::FRAME_ANY)?;
    sys::map(0, SCRATCH, f, mf::WRITE)?;
    // SAFETY: `va` is mapped in this process, SCRATCH maps the new frame.
    unsafe { crate::copy::copy_page(SCRATCH, va) };
    sys::unmap(0, SCRATCH)?;
    sys::map(child, va, f, rights)?;
    Ok(())
}

/// Builds the child's address space from what this process knows it has:
/// the program's regions (`vm`), lxrt's image and private heap, the live
/// part of a native program's stack, and the arena. (A native program's
/// own mappings outside these are not inherited; it registers memory it
/// wants its children to have with `vm::add`.)
fn build(child: u64, rsp: u64, share: bool) -> Result<(), Error> {
    shared::share_with(child)?;
    fd::share_pipes(child)?;
    // The program's stack pointer; lxrt's resume path writes just below
    // its red zone, so that page is live too.
    let sp = rsp.wrapping_sub(144);
    let stack_live = if vm::native_stack(sp) { page_down(sp) } else { INIT_STACK_TOP };
    let borrowed = table::mine().vfork != 0;
    let mut b = Builder {
        child,
        share,
        borrowed,
        kit: Kit::take(),
        stack_live,
        run: None,
        in_region: None,
        in_shared: None,
    };
    for r in vm::regions() {
        b.range(r.start, r.end, true)?;
    }
    let (image, image_end) = crate::layout::image();
    b.range(image, image_end, false)?;
    b.range(PRIVATE_HEAP, crate::private::backed(), false)?;
    b.range(stack_live, INIT_STACK_TOP, false)?;
    b.flush()
}

/// How a child relates to its parent beyond what every child shares.
#[derive(Clone, Copy)]
pub struct Sharing {
    /// The program's memory is shared, not copied (`CLONE_VM`).
    pub memory: bool,
    /// The parent is held until the child execs or ends (`CLONE_VFORK`,
    /// `vfork.rs`).
    pub held: bool,
}

impl Sharing {
    pub const FORK: Sharing = Sharing { memory: false, held: false };
}

/// `fork`: returns the child's pid (the child sees 0).
pub fn fork(f: &ExceptionFrame, how: Sharing) -> Result<i64, Errno> {
    super::limits::may_create()?;
    if !crate::oom::may_fork() {
        return Err(ENOMEM);
    }
    // The pages of MAP_SHARED mappings must exist to be shared.
    if !vm::back_fork_shared() {
        return Err(ENOMEM);
    }
    // The child is the process's, whichever thread forks: a thread's
    // environment ends with the thread, and the kernel ends what it made
    // with it (the child of a fork in a thread died before it ran).
    let child =
        if super::thread::is_first() { sys::env_create() } else { sys::env_create_in(super::env() as u64) }
            .map_err(|_| EAGAIN)?;
    if table::fork_entry(child, how.held).is_err() {
        let _ = sys::env_destroy(child);
        return Err(EAGAIN);
    }
    let env = child as u32;
    // The child's copy of our block must start it with our fs base.
    entry::set_start_fs(fs_base());
    let built = build(child, f.regs.rsp, how.memory)
        .and_then(|_| entry::install(child))
        .and_then(|_| sys::env_set_regs(child, &entry::child_start_regs()).map(|_| ()));
    if built.is_err() {
        let _ = sys::env_destroy(child);
        table::forget(env);
        return Err(ENOMEM);
    }
    fd::fork_refs(env);
    super::exit::add_child(child as u32);
    // A runnable environment runs only in time slices it owns: the child
    // gets one, like every process.
    let _ = sys::slice_alloc(child, abi::syscall::SLICE_ANY);
    // However it ends (a fault in its lxrt too), its parent hears SIGCHLD.
    let _ = sys::env_exit_bits(child, 1 << super::signal::SIGCHLD);
    sys::env_run(child).map_err(|_| EAGAIN)?;
    Ok(super::pid::of(env) as i64)
}

pub fn fs_base() -> u64 {
    let fs: u64;
    // SAFETY: CR4.FSGSBASE is enabled for user code (see docs/abi.md).
    unsafe { core::arch::asm!("rdfsbase {}", out(reg) fs, options(nomem, nostack)) };
    fs
}

/// Runs first in a new child, before it resumes the program.
pub fn child_start(frame: &mut ExceptionFrame) {
    // First: frames allocated from here on are the child's.
    crate::env::set(sys::self_id() as u32);
    lock::forked_child();
    shared::forked_child();
    crate::fs::disk::forked_child();
    super::kit::forked_child();
    super::exit::forked_child();
    crate::predicate::forked_child();
    vm::forked_child();
    super::signal::forked_child();
    crate::alarm::forked_child();
    super::thread::forked_child();
    crate::futex::forked_child();
    crate::obj::descpage::forked_child();
    frame.regs.rax = 0;
    table::forked_child();
}
