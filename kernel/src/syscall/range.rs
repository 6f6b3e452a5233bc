//! Frame ranges (`FRAME_RANGE`, `crate::ranges`): a capability that names
//! frames given to whoever presents the range's ticket (paper 000 §3.3).

use super::Args;
use crate::cap::{CapRef, Rights};
use crate::frames::Frame;
use crate::mm::PhysTables;
use crate::pagetable;
use crate::ranges::{Range, Rule};
use crate::state::Kernel;
use crate::validate::{needed, page_range, pte_rights, user_page};
use abi::syscall::frame_range::{CLAIM, DROP, HOLD, KEEP, MAKE, MAP, RANGE_FRAMES, RULE, UNHOLD};
use abi::Error;

pub fn frame_range(k: &mut Kernel, Args([op, a, b, c, d, e]): Args) -> Result<u64, Error> {
    match op {
        MAKE => make(k, a, b, c, d, e),
        CLAIM => claim(k, a, b),
        MAP => map(k, a, b, c, d, e),
        DROP => drop(k, a, b),
        HOLD => hold(k, a, b, true),
        UNHOLD => hold(k, a, b, false),
        RULE => rule(k, a, b, c),
        KEEP => keep(k, a, b),
        _ => Err(Error::BadFlags),
    }
}

fn make(k: &mut Kernel, va: u64, pages: u64, cred: u64, owner: u64, mode: u64) -> Result<u64, Error> {
    if pages as usize > RANGE_FRAMES {
        return Err(Error::BadLength);
    }
    let maker = k.idents.get(k.space_owner(k.current()));
    let rule = Rule::asked(maker, owner, mode)?;
    let user = maker.uid[abi::ident::EFFECTIVE];
    let mut frames = [Frame::new(0); RANGE_FRAMES];
    for (i, p) in page_range(va, pages)?.enumerate() {
        let pte = pagetable::lookup(&mut PhysTables, k.pml4(), p).ok_or(Error::NotMapped)?;
        let f = pagetable::frame_of(pte);
        k.frame_arg(f, cred, Rights::WRITE, false)?;
        if !k.mem.share_guard(f).is_none() || frames[..i].contains(&f) {
            return Err(Error::BadState);
        }
        frames[i] = f;
    }
    let frames = &frames[..pages as usize];
    let tsc = crate::arch::clock::rdtsc();
    let (caps, alive) = k.mem.caps_and_ranges();
    let (ticket, root) = k.ranges.make(caps, frames, rule, user, tsc, alive)?;
    for &f in frames {
        k.mem.set_share_guard(f, root);
    }
    Ok(ticket)
}

/// A new rule for the range, from root or the rule's owner (`chmod`).
fn rule(k: &mut Kernel, ticket: u64, owner: u64, mode: u64) -> Result<u64, Error> {
    let who = *k.idents.get(k.space_owner(k.current()));
    k.ranges.set_rule(ticket, &who, owner, mode)?;
    Ok(0)
}

fn claim(k: &mut Kernel, ticket: u64, rights: u64) -> Result<u64, Error> {
    let me = k.space_owner(k.current());
    let loan = k.ranges.claim(k.mem.caps, ticket, rights, k.idents.get(me))?;
    k.envs[me].clist.insert(k.mem.caps, loan).inspect_err(|_| {
        let _ = k.mem.caps.revoke(loan);
    })
}

fn map(k: &mut Kernel, slot: u64, va: u64, first: u64, pages: u64, flags: u64) -> Result<u64, Error> {
    let pte = pte_rights(flags)?;
    let range = *k.ranges.named_by(k.mem.caps, k.cred(slot)?, needed(pte))?;
    let root = range.root();
    let mut frames = [Frame::new(0); RANGE_FRAMES];
    let mut n = 0;
    for (i, f) in range.frames().enumerate() {
        if !k.mem.in_range(f, root) {
            return Err(Error::NotPermitted);
        }
        frames[i] = f;
        n = i + 1;
    }
    let end = first.checked_add(pages).filter(|&e| pages > 0 && e <= n as u64).ok_or(Error::BadLength)?;
    let frames = &frames[first as usize..end as usize];
    let me = k.current();
    let pml4 = k.envs[me].pml4;
    for p in page_range(va, pages)? {
        if pagetable::lookup(&mut PhysTables, pml4, p).is_some() {
            return Err(Error::AlreadyMapped);
        }
    }
    for (i, &f) in frames.iter().enumerate() {
        let at = va + i as u64 * abi::layout::PAGE_SIZE;
        if let Err(e) = k.bind(me, at, f, pte) {
            // Undo: the call maps all or nothing.
            for j in 0..i as u64 {
                let back = va + j * abi::layout::PAGE_SIZE;
                if let Ok(old) = pagetable::unmap(&mut PhysTables, pml4, back) {
                    k.mem.frames.drop_ref(pagetable::frame_of(old));
                }
            }
            return Err(e);
        }
    }
    Ok(pages)
}

/// Whether the caller is a holder of `range`: it maps the range's first
/// frame at `va` (`BadAddress`, `NotMapped`; `Denied` for another frame).
/// A ticket alone, read wherever it was kept, makes no holder.
fn holder(k: &mut Kernel, range: &Range, va: u64) -> Result<(), Error> {
    user_page(va)?;
    let pte = pagetable::lookup(&mut PhysTables, k.pml4(), va).ok_or(Error::NotMapped)?;
    if range.frames().next() != Some(pagetable::frame_of(pte)) {
        return Err(Error::Denied);
    }
    Ok(())
}

/// A message carrying `ticket` is sent (`up`) or taken, by a holder
/// mapping the range's first frame at `va`: the range's frames count one
/// more (or one fewer) mapping, so they outlive every mapping while the
/// message is in flight. Only a holder opens a range to the ticket alone,
/// and only a holder lets its frames go.
fn hold(k: &mut Kernel, ticket: u64, va: u64, up: bool) -> Result<u64, Error> {
    let range = *k.ranges.get(ticket)?;
    holder(k, &range, va)?;
    if up {
        may_count(k, &range)?;
    }
    k.ranges.hold(ticket, up)?;
    for f in range.frames() {
        if up {
            k.mem.frames.add_ref(f)?;
        } else {
            k.mem.frames.drop_ref(f);
        }
    }
    k.mem.publish_free();
    Ok(0)
}

/// Whether each of `range`'s frames may count one more mapping: only
/// while the range is whole (`NotPermitted`), and never past a frame's
/// count (`NoMemory`).
fn may_count(k: &Kernel, range: &Range) -> Result<(), Error> {
    if !range.frames().all(|f| k.mem.in_range(f, range.root())) {
        return Err(Error::NotPermitted);
    }
    if range.frames().any(|f| !k.mem.frames.can_add_refs(f, 1)) {
        return Err(Error::NoMemory);
    }
    Ok(())
}

/// The range is kept by name, for a holder mapping its first frame at
/// `va`: its frames count one more mapping until `DROP`, and `CLAIM` still
/// judges its rule (a System V object that outlives its users).
fn keep(k: &mut Kernel, ticket: u64, va: u64) -> Result<u64, Error> {
    let range = *k.ranges.get(ticket)?;
    holder(k, &range, va)?;
    may_count(k, &range)?;
    k.ranges.keep(ticket)?;
    for f in range.frames() {
        k.mem.frames.add_ref(f)?;
    }
    Ok(0)
}

/// Ends the range, for a holder mapping its first frame at `va`: its
/// frames lose the guard (a frame no longer the range's, freed and reused,
/// keeps its new one) and the counts its holds kept.
fn drop(k: &mut Kernel, ticket: u64, va: u64) -> Result<u64, Error> {
    let range = *k.ranges.get(ticket)?;
    holder(k, &range, va)?;
    let range = k.ranges.drop_range(k.mem.caps, ticket)?;
    for f in range.frames() {
        if k.mem.in_range(f, range.root()) {
            k.mem.set_share_guard(f, CapRef::NONE);
        }
        // A held or kept frame cannot have been freed: its counts are on it.
        for _ in 0..range.counts() {
            k.mem.frames.drop_ref(f);
        }
    }
    k.mem.publish_free();
    Ok(0)
}
