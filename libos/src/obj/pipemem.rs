//! Frames of a pipe's own (issue 25; paper 000 §3.3 software regions,
//! §5.2: ExOS's protected pipes). A pipe made by `pipe(2)` keeps its ring,
//! its header and its two open file descriptions in frames its creator
//! allocates for it, outside the shared arena, mapped only into the
//! processes that hold an end: fork maps them into the child for the ends
//! its descriptor table inherits (`share_with`), and a process unmaps them
//! at its last close of the pipe (`release`); a process passing an end over
//! a Unix socket maps them into the receiving socket's holders (`give`).
//! The arena holds no reference
//! to them, and the frames carry no share guard: a process that holds no
//! end has no mapping and no capability that lets the kernel map them
//! (only their owner, the creator, and its ancestors may).
//!
//! Every process maps a pipe at the same address, derived from its first
//! frame's number (unique while the pipe lives): the descriptions and the
//! wakeup predicates name it by address. The creator gives the frames away
//! at its own last close (`frame_disown`): they are freed with the last
//! mapping, whoever holds it.

use crate::errno::Errno;
use crate::layout::{PAGE, PIPES, PIPES_END, PIPE_SLOT};
use abi::syscall::{map as mf, ENV_SELF, FRAME_ANY};
use user::sys;

/// Whether `addr` (a description's or a ring's) is in a pipe's own frames.
#[inline]
pub fn guarded(addr: u64) -> bool {
    (PIPES..PIPES_END).contains(&addr)
}

/// Whether this process maps the pipe frames holding `addr` (a process
/// that holds no end and was not given them, `give`, does not).
pub fn mapped(addr: u64) -> bool {
    crate::selfmap::pte(base(addr)).is_some()
}

/// The start of the pipe frames holding `addr`.
pub fn base(addr: u64) -> u64 {
    addr & !(PIPE_SLOT - 1)
}

/// Allocates and maps `pages` fresh (zeroed) frames for a pipe; their
/// address, or None (no memory, or a frame past the window).
pub fn alloc(pages: u64) -> Option<u64> {
    let first = sys::frame_alloc(ENV_SELF, FRAME_ANY).ok()?;
    let va = PIPES + first * PIPE_SLOT;
    if va + pages * PAGE > PIPES_END || sys::map(ENV_SELF, va, first, mf::WRITE).is_err() {
        let _ = sys::frame_free(first);
        return None;
    }
    for i in 1..pages {
        let ok = sys::frame_alloc(ENV_SELF, FRAME_ANY).and_then(|f| {
            sys::map(ENV_SELF, va + i * PAGE, f, mf::WRITE).or_else(|e| sys::frame_free(f).and(Err(e)))
        });
        if ok.is_err() {
            release(va, i);
            return None;
        }
    }
    Some(va)
}

/// Unmaps this process's `pages` pages of a pipe at `va` and gives away
/// those of its frames it owns (freed with their last mapping).
pub fn release(va: u64, pages: u64) {
    for i in 0..pages {
        let at = va + i * PAGE;
        let Some(pte) = crate::selfmap::pte(at) else { continue };
        let _ = sys::unmap(ENV_SELF, at);
        // Refused (`NotOwner`) in every process but the creator's line.
        let _ = sys::frame_disown(abi::pte::frame_of(pte));
    }
}

/// Maps the pipes at `bases` (sorted, deduplicated), `pages` each, into
/// child `env` at the same addresses, writable (fork).
pub fn share_with(env: u64, bases: &[u64], pages: u64) -> Result<(), abi::Error> {
    for &b in bases {
        crate::range::map_from(env, b, b, pages, mf::WRITE)?;
    }
    Ok(())
}

/// Maps the pipe at `base` (`pages` pages) into process `env`, which is
/// to receive an end of it over a Unix socket (`SCM_RIGHTS`). The list
/// naming `env` (the socket's holders) is in the arena, which any process
/// can write, so `env` must be one this process could reach anyway: one
/// the kernel lets it map into (its descendant), of its own effective
/// user. EPERM otherwise, and when the kernel refuses.
pub fn give(env: u32, base: u64, pages: u64) -> Result<(), Errno> {
    let euid = |e: u64| sys::ident_get(e).map(|i| i.uid[abi::ident::EFFECTIVE]).ok();
    if euid(env as u64).is_none() || euid(env as u64) != euid(0) {
        return Err(crate::errno::EPERM);
    }
    match crate::range::map_from(env as u64, base, base, pages, mf::WRITE) {
        // Given already (an end sent before, not yet received).
        Ok(()) | Err(abi::Error::AlreadyMapped) => Ok(()),
        Err(_) => Err(crate::errno::EPERM),
    }
}
