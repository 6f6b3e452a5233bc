//! Physical frames and address spaces: allocation by physical name,
//! mapping (the secure binding: rights are checked here, never on access),
//! and protected sharing through share guards.

use super::Args;
use crate::cap::{CapRef, Rights};
use crate::env::Slot;
use crate::frames::Frame;
use crate::memory::Memory;
use crate::mm::PhysTables;
use crate::pagetable::{self, NO_EXEC, WRITABLE};
use crate::state::Kernel;
use crate::validate::{needed, page_range, pte_rights, user_page};
use abi::layout::{BOOTFS_VA, PAGE_SIZE};
use abi::syscall::{FRAME_ANY, RANGE_MAX};
use abi::tables::frame_state;
use abi::Error;

impl Kernel {
    /// Maps `frame` at `va` in slot `s`'s space with page-table rights
    /// `pte`, counting the mapping; tables are charged to the owner of
    /// `s`'s tables (`aspace.rs`), so they outlive a sharer.
    pub(super) fn bind(&mut self, s: Slot, va: u64, frame: Frame, pte: u64) -> Result<u64, Error> {
        let owner = self.space_owner(s);
        let id = self.envs[owner].id().raw();
        if self.envs[s].limited {
            let tables = pagetable::tables_missing(&mut PhysTables, self.envs[s].pml4, core::iter::once(va));
            self.within_limits(owner, tables, 0)?;
        }
        self.mem.frames.add_ref(frame)?;
        let frames = &mut self.mem.frames;
        let r =
            pagetable::map(&mut PhysTables, self.envs[s].pml4, va, pagetable::entry(frame, pte), &mut || {
                frames.alloc(None, id, frame_state::PAGE_TABLE)
            });
        if let Err(e) = r {
            self.mem.frames.drop_ref(frame);
            return Err(e);
        }
        self.mem.publish_free();
        self.publish(owner);
        Ok(0)
    }

    /// Making pages writable is a new binding: every frame among `pages`
    /// pages from `va` that is mapped read-only must allow it. An owner
    /// whose guard the credential covers is checked once (pages of one range
    /// usually share one). Out of line: the common re-protection loop stays
    /// small.
    #[inline(never)]
    fn check_widening(&self, pml4: Frame, va: u64, pages: u64, cred: u64, need: Rights) -> Result<(), Error> {
        let mut covered = 0;
        for p in page_range(va, pages)? {
            let Some(old) = pagetable::lookup(&mut PhysTables, pml4, p) else { continue };
            if old & WRITABLE != 0 {
                continue;
            }
            let f = pagetable::frame_of(old);
            if covered != 0
                && self.mem.frames.info(f).is_some_and(|i| i.state == frame_state::USER && i.owner == covered)
            {
                continue;
            }
            let o = self.frame_arg(f, cred, need, true)?;
            if self.mem.caps.check(self.cred(cred)?, self.envs[o].guard, need).is_ok() {
                covered = self.envs[o].id().raw();
            }
        }
        Ok(())
    }

    fn flush(&self, env: Slot, va: u64) {
        if self.space_is_current(env) {
            crate::arch::cpu::invlpg(va);
        }
    }
}

/// Allocates frame `want` (or any) to environment `owner` (its id) as a
/// user page: cleared, so no earlier contents leak, and unshared.
pub(super) fn alloc_user(mem: &mut Memory, want: Option<Frame>, owner: u32) -> Result<Frame, Error> {
    let f = mem.frames.alloc(want, owner, frame_state::USER)?;
    // SAFETY: a frame just allocated, in the physical window, that no
    // mapping refers to yet.
    unsafe { core::ptr::write_bytes(crate::mm::frame_ptr::<u8>(f), 0, 4096) };
    mem.set_share_guard(f, CapRef::NONE);
    Ok(f)
}

pub fn frame_alloc(k: &mut Kernel, Args([owner, frame, cred, ..]): Args) -> Result<u64, Error> {
    let s = k.env_arg(owner, cred)?;
    k.within_limits(s, 1, 0)?;
    let want = if frame == FRAME_ANY { None } else { Some(Frame::new(frame)) };
    let f = alloc_user(&mut k.mem, want, k.envs[s].id().raw())?;
    k.mem.publish_free();
    k.publish(s);
    Ok(f.number())
}

pub fn frame_free(k: &mut Kernel, Args([frame, cred, ..]): Args) -> Result<u64, Error> {
    let frame = Frame::new(frame);
    let owner = k.frame_arg(frame, cred, Rights::WRITE, false)?;
    k.mem.frames.free(frame)?;
    k.mem.publish_free();
    k.publish(owner);
    Ok(0)
}

pub fn frame_disown(k: &mut Kernel, Args([frame, cred, ..]): Args) -> Result<u64, Error> {
    let frame = Frame::new(frame);
    let owner = k.frame_arg(frame, cred, Rights::WRITE, false)?;
    k.mem.frames.disown(frame);
    k.mem.publish_free();
    k.publish(owner);
    Ok(0)
}

pub fn frame_share(k: &mut Kernel, Args([frame, slot, cred, ..]): Args) -> Result<u64, Error> {
    let frame = Frame::new(frame);
    k.frame_arg(frame, cred, Rights::WRITE, false)?;
    let guard = k.guard_arg(slot)?;
    k.mem.set_share_guard(frame, guard);
    Ok(0)
}

pub fn map(k: &mut Kernel, Args([env, va, frame, flags, env_cred, frame_cred]): Args) -> Result<u64, Error> {
    let frame = Frame::new(frame);
    let s = k.env_arg(env, env_cred)?;
    let va = user_page(va)?;
    let pte = pte_rights(flags)?;
    k.frame_arg(frame, frame_cred, needed(pte), true)?;
    k.bind(s, va, frame, pte)
}

pub fn map_from(k: &mut Kernel, Args([env, va, src, flags, cred, ..]): Args) -> Result<u64, Error> {
    let s = k.env_arg(env, cred)?;
    let va = user_page(va)?;
    let pte = pte_rights(flags)?;
    let have = pagetable::lookup(&mut PhysTables, k.pml4(), user_page(src)?).ok_or(Error::NotMapped)?;
    let more_write = pte & WRITABLE != 0 && have & WRITABLE == 0;
    let more_exec = pte & NO_EXEC == 0 && have & NO_EXEC != 0;
    if more_write || more_exec {
        return Err(Error::NotPermitted);
    }
    k.bind(s, va, pagetable::frame_of(have), pte)
}

pub fn frames_reclaim(k: &mut Kernel, Args([env, n, cred, ..]): Args) -> Result<u64, Error> {
    let s = k.child_arg(env, cred, Rights::WRITE)?;
    k.reclaim(s, n)
}

pub fn set_repossession_vector(k: &mut Kernel, Args([env, va, cred, ..]): Args) -> Result<u64, Error> {
    let s = k.env_arg(env, cred)?;
    let frame = if va == 0 {
        None
    } else {
        let pte =
            pagetable::lookup(&mut PhysTables, k.envs[s].pml4, user_page(va)?).ok_or(Error::BadPointer)?;
        if pte & WRITABLE == 0 {
            return Err(Error::BadPointer);
        }
        let f = pagetable::frame_of(pte);
        k.mem.frames.add_ref(f)?;
        Some(f)
    };
    if let Some(old) = core::mem::replace(&mut k.envs[s].repo_vector, frame) {
        k.mem.frames.drop_ref(old);
    }
    Ok(0)
}

/// Whether `pages` pages from `src`, the source of `map_from_range`, lie in
/// the boot file system's window (`BOOTFS_VA`, read-only for everyone)
/// rather than below the reserved windows: a library maps a boot file's
/// pages into a program instead of copying them (paper 000 §3.1: expose
/// what is there; the archive's bytes are public and never change).
fn boot_source(k: &Kernel, src: u64, pages: u64) -> Result<bool, Error> {
    if src < BOOTFS_VA {
        let _checked = page_range(src, pages)?;
        return Ok(false);
    }
    let end = BOOTFS_VA + k.mem.bootfs_size().next_multiple_of(PAGE_SIZE);
    let last = pages.checked_sub(1).filter(|&n| n < RANGE_MAX).ok_or(Error::BadLength)?;
    if !src.is_multiple_of(PAGE_SIZE) || src.checked_add(last * PAGE_SIZE).is_none_or(|l| l >= end) {
        return Err(Error::BadAddress);
    }
    Ok(true)
}

pub fn map_from_range(k: &mut Kernel, Args([env, va, src, pages, flags, cred]): Args) -> Result<u64, Error> {
    let s = k.env_arg(env, cred)?;
    let pte = pte_rights(flags)?;
    let boot = boot_source(k, src, pages)?;
    let _destination_checked = page_range(va, pages)?;
    let (from, to) = ((k.pml4(), src), (k.envs[s].pml4, va));
    // Within one space the copy would read entries it had just written.
    let span = pages * PAGE_SIZE;
    if from.0 == to.0 && src < va + span && va < src + span {
        return Err(Error::BadAddress);
    }
    // Check every page first, and that the page tables the mapping needs
    // and one more count on each frame are available: then the copy itself
    // cannot fail half way.
    let frames = &k.mem.frames;
    let seen = pagetable::check_copy(&mut PhysTables, from, to, pages, |have| {
        frames.refs(pagetable::frame_of(have))
    })?;
    // Writable here but not there, or executable here but not there
    // (the boot file system's pages may be run: its bytes are public).
    let more_exec = !boot && seen.any & !pte & NO_EXEC != 0;
    if pte & !seen.all & WRITABLE != 0 || more_exec {
        return Err(Error::NotPermitted);
    }
    // Conservative: as if every page of the range mapped the frame mapped
    // most already.
    if seen.entries > 0 && seen.most + pages > u16::MAX as u64 {
        return Err(Error::NoMemory);
    }
    let (targets, tables) = (seen.entries, seen.tables);
    if tables > k.mem.frames.free_count() {
        return Err(Error::NoMemory);
    }
    let owner = k.space_owner(s);
    k.within_limits(owner, tables, 0)?;
    // The checks above stand for `bind`'s, page by page.
    let id = k.envs[owner].id().raw();
    pagetable::copy(
        &mut PhysTables,
        &mut k.mem.frames,
        from,
        to,
        pages,
        |frames| frames.alloc(None, id, frame_state::PAGE_TABLE),
        |frames, have| {
            let frame = pagetable::frame_of(have);
            frames.add_ref(frame)?;
            Ok(pagetable::entry(frame, pte))
        },
    )?;
    k.mem.publish_free();
    k.publish(owner);
    Ok(targets)
}

pub fn protect_range(k: &mut Kernel, Args([env, va, pages, flags, cred, ..]): Args) -> Result<u64, Error> {
    let s = k.env_arg(env, cred)?;
    let pte = pte_rights(flags)?;
    let pml4 = k.envs[s].pml4;
    if pte & WRITABLE != 0 {
        k.check_widening(pml4, va, pages, cred, needed(pte))?;
    }
    // The range's checks; its pages are walked by the table.
    let _ = page_range(va, pages)?;
    // One walk per leaf table, and one look at which space is loaded.
    let current = k.space_is_current(s);
    Ok(pagetable::protect_range(&mut PhysTables, pml4, va, pages, pte, |p| {
        if current {
            crate::arch::cpu::invlpg(p);
        }
    }))
}

pub fn unmap(k: &mut Kernel, Args([env, va, cred, ..]): Args) -> Result<u64, Error> {
    let s = k.env_arg(env, cred)?;
    let va = user_page(va)?;
    let old = pagetable::unmap(&mut PhysTables, k.envs[s].pml4, va)?;
    k.flush(s, va);
    k.mem.frames.drop_ref(pagetable::frame_of(old));
    k.mem.publish_free();
    Ok(0)
}

pub fn protect(k: &mut Kernel, Args([env, va, flags, cred, ..]): Args) -> Result<u64, Error> {
    let s = k.env_arg(env, cred)?;
    let va = user_page(va)?;
    let pte = pte_rights(flags)?;
    let old = pagetable::lookup(&mut PhysTables, k.envs[s].pml4, va).ok_or(Error::NotMapped)?;
    if pte & WRITABLE != 0 && old & WRITABLE == 0 {
        // Widening to writable is a new binding: the frame must allow it.
        k.frame_arg(pagetable::frame_of(old), cred, needed(pte), true)?;
    }
    pagetable::protect(&mut PhysTables, k.envs[s].pml4, va, pte)?;
    k.flush(s, va);
    Ok(0)
}
