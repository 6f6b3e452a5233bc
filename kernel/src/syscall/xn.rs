//! XN's system calls (`abi::syscall::XN_*`, `docs/xn.md`): protected disk
//! blocks for library file systems. Each handler validates every argument
//! (pointers, counts, names, the frames offered) before XN runs, and XN
//! changes nothing when it refuses. The principal XN records is the
//! caller's address space (its owner's id: threads act as one); the
//! uid and gid `acl` sees come from the credential named (`xn::Xn::cred`),
//! or from the caller's own identity (`XN_SELF`).

use super::Args;
use crate::cap::Rights;
use crate::frames::Frame;
use crate::mm::PhysTables;
use crate::pagetable;
use crate::state::Kernel;
use crate::uaccess;
use crate::validate::{page_range, pte_rights, user_page};
use abi::ident::EFFECTIVE;
use abi::syscall::{map, XN_SELF};
use abi::tables::frame_state;
use abi::xn as x;
use abi::Error;
use alloc::string::String;
use alloc::vec::Vec;

impl Kernel {
    /// The principal XN records for the caller.
    fn xn_who(&self) -> u32 {
        self.envs[self.space_owner(self.current())].id().raw()
    }

    /// The uid and gids credential `cred` stands for: `XN_SELF`, the
    /// caller's effective ids and supplementary groups (held by the kernel, so no library can lend
    /// or forge them); a capability, what `Xn::cred` says it is.
    fn xn_cred(&self, cred: u64) -> Result<::xn::Cred, Error> {
        const _: () = assert!(abi::ident::NGROUPS == ::xn::GROUPS, "XN sees every supplementary group");
        if cred == XN_SELF {
            let id = self.idents.get(self.space_owner(self.current()));
            return Ok(::xn::Cred::new(id.uid[EFFECTIVE], id.gid[EFFECTIVE]).with_groups(id.groups()));
        }
        Ok(self.xn.cred(self.mem.caps, self.cred(cred)?, self.mem.device_guard()))
    }

    /// Installing templates and roots changes the disk's catalogues for
    /// every file system: the device capability's holder's to do (not
    /// root's by `XN_SELF`: a uid is not the device).
    fn xn_admin(&self, cred: u64) -> Result<(), Error> {
        if cred == XN_SELF {
            return Err(Error::NotPermitted);
        }
        self.mem.caps.check(self.cred(cred)?, self.mem.device_guard(), Rights::WRITE)
    }

    /// `count` frame numbers at `va`: each the caller's own, mapped
    /// nowhere, named once.
    fn xn_frames(&self, va: u64, count: u64) -> Result<Vec<(u32, Frame)>, Error> {
        if count == 0 || count > x::MAX_RUN {
            return Err(Error::BadLength);
        }
        let who = self.xn_who();
        let mut out: Vec<(u32, Frame)> = Vec::with_capacity(count as usize);
        for i in 0..count {
            let f = Frame::new(uaccess::read_value::<u64>(self.pml4(), va + i * 8)?);
            let rec = self.mem.frames.info(f).ok_or(Error::BadFrame)?;
            if rec.state != frame_state::USER || rec.owner != who {
                return Err(Error::NotOwner);
            }
            if rec.refs != 0 {
                return Err(Error::FrameMapped);
            }
            if out.iter().any(|&(_, g)| g == f) {
                return Err(Error::BadFrame);
            }
            out.push((who, f));
        }
        if !self.xn.room(count) {
            return Err(Error::NoMemory);
        }
        Ok(out)
    }
}

/// A `parent` argument.
fn parent(p: u64) -> ::xn::Parent {
    if p & x::ROOT != 0 {
        ::xn::Parent::Root((p & !x::ROOT).min(usize::MAX as u64) as usize)
    } else {
        ::xn::Parent::Block(p)
    }
}

/// A name of 1..=31 bytes at `va`.
fn name(k: &Kernel, va: u64, len: u64) -> Result<String, Error> {
    if len == 0 || len > x::MAX_NAME as u64 {
        return Err(Error::BadName);
    }
    let mut b = [0u8; x::MAX_NAME];
    uaccess::read(k.pml4(), va, &mut b[..len as usize])?;
    core::str::from_utf8(&b[..len as usize]).map(String::from).map_err(|_| Error::BadName)
}

/// A name carried in a request structure.
fn carried(bytes: &[u8; 32], len: u32) -> Result<String, Error> {
    let b = bytes.get(..len as usize).filter(|b| !b.is_empty() && b.len() <= x::MAX_NAME);
    let b = b.ok_or(Error::BadName)?;
    core::str::from_utf8(b).map(String::from).map_err(|_| Error::BadName)
}

/// `len` eBPF instructions at `va` (none when `len` is 0).
fn code(k: &Kernel, va: u64, len: u64) -> Result<Vec<bpf::Insn>, Error> {
    if len > x::MAX_UDF_INSNS {
        return Err(Error::BadLength);
    }
    let mut bytes = alloc::vec![0u8; len as usize * 8];
    uaccess::read(k.pml4(), va, &mut bytes)?;
    Ok(bytes.chunks_exact(8).map(|c| bpf::Insn::from_bytes(c.try_into().unwrap_or([0; 8]))).collect())
}

pub fn xn_info(k: &mut Kernel, Args([info, ..]): Args) -> Result<u64, Error> {
    uaccess::write_value(k.pml4(), info, &k.xn.info())?;
    Ok(0)
}

pub fn xn_install(k: &mut Kernel, Args([specs, n, cred, ..]): Args) -> Result<u64, Error> {
    k.xn.get()?;
    k.xn_admin(cred)?;
    if n == 0 || n > x::MAX_GROUP as u64 {
        return Err(Error::BadLength);
    }
    let mut group = Vec::with_capacity(n as usize);
    for i in 0..n {
        let s: x::TemplateSpec =
            uaccess::read_value(k.pml4(), specs + i * size_of::<x::TemplateSpec>() as u64)?;
        group.push(::xn::TemplateSpec {
            name: carried(&s.name, s.name_len)?,
            slots: s.slots,
            owns: code(k, s.owns, s.owns_len)?,
            acl: code(k, s.acl, s.acl_len)?,
            size: code(k, s.size, s.size_len)?,
        });
    }
    let r = k.xn.call(&mut k.mem, &[], |xn| xn.install(&group));
    if let Err(Error::BadTemplate) = r {
        kprintln!("xn: env {:#x}'s templates refused", k.xn_who());
    }
    if r.is_ok() {
        k.xn.compile_new(&mut k.mem);
    }
    r.map(u64::from)
}

pub fn xn_template(k: &mut Kernel, Args([va, len, ..]): Args) -> Result<u64, Error> {
    let n = name(k, va, len)?;
    k.xn.get()?.template_id(&n).map(u64::from).ok_or(Error::BadName)
}

pub fn xn_root_add(k: &mut Kernel, Args([req, cred, ..]): Args) -> Result<u64, Error> {
    k.xn.get()?;
    k.xn_admin(cred)?;
    let r: x::RootAdd = uaccess::read_value(k.pml4(), req)?;
    let n = carried(&r.name, r.name_len)?;
    let tid = u16::try_from(r.tid).map_err(|_| Error::BadName)?;
    if r.persistent > 1 {
        return Err(Error::BadFlags);
    }
    let offered = k.xn_frames(r.frames, r.count)?;
    let who = k.xn_who();
    let pages: Vec<::xn::PageId> = offered.iter().map(|(_, f)| ::xn::PageId(f.number())).collect();
    k.xn.call(&mut k.mem, &offered, |xn| xn.add_root(who, &n, r.start, tid, &pages, r.persistent == 1))
        .map(|i| i as u64)
}

pub fn xn_root_find(k: &mut Kernel, Args([va, len, out, ..]): Args) -> Result<u64, Error> {
    let n = name(k, va, len)?;
    let (i, r) = k.xn.get()?.root(&n).ok_or(Error::BadName)?;
    let root = x::Root { start: r.start, count: r.count, tid: r.tid.into(), persistent: r.persistent.into() };
    uaccess::write_value(k.pml4(), out, &root)?;
    Ok(i as u64)
}

pub fn xn_read(k: &mut Kernel, Args([p, start, frames, count, cred, ..]): Args) -> Result<u64, Error> {
    k.xn.get()?;
    let offered = k.xn_frames(frames, count)?;
    let (who, c) = (k.xn_who(), k.xn_cred(cred)?);
    let pages: Vec<::xn::PageId> = offered.iter().map(|(_, f)| ::xn::PageId(f.number())).collect();
    k.xn.call(&mut k.mem, &offered, |xn| xn.read_insert(who, c, parent(p), start, &pages)).map(|_| 0)
}

pub fn xn_insert(k: &mut Kernel, Args([p, block, frame, cred, ..]): Args) -> Result<u64, Error> {
    k.xn.get()?;
    let who = k.xn_who();
    let f = Frame::new(frame);
    let rec = k.mem.frames.info(f).ok_or(Error::BadFrame)?;
    if rec.state != frame_state::USER || rec.owner != who {
        return Err(Error::NotOwner);
    }
    if rec.refs != 0 {
        return Err(Error::FrameMapped);
    }
    if !k.xn.room(1) {
        return Err(Error::NoMemory);
    }
    let c = k.xn_cred(cred)?;
    k.xn.call(&mut k.mem, &[(who, f)], |xn| xn.insert_new(who, c, parent(p), block, ::xn::PageId(frame)))
        .map(|_| 0)
}

pub fn xn_bind(k: &mut Kernel, Args([p, block, va, write, cred, ..]): Args) -> Result<u64, Error> {
    if write > 1 {
        return Err(Error::BadFlags);
    }
    let va = user_page(va)?;
    let frame = Frame::new(k.xn.get()?.entry(block).ok_or(Error::NotCached)?.page.0);
    let me = k.current();
    if pagetable::lookup(&mut PhysTables, k.envs[me].pml4, va).is_some() {
        return Err(Error::AlreadyMapped);
    }
    let (who, c) = (k.xn_who(), k.xn_cred(cred)?);
    k.xn.call(&mut k.mem, &[], |xn| xn.bind(who, c, parent(p), block, write == 1))?;
    let pte = pte_rights(if write == 1 { map::WRITE } else { 0 })?;
    k.bind(me, va, frame, pte)
}

/// `xn_bind` for a run of blocks: every argument and XN's check before
/// anything is mapped; a mapping that cannot be made (no memory for a
/// page table) takes back those made before it, so a refusal binds none.
pub fn xn_bind_run(k: &mut Kernel, Args([p, start, count, va, write, cred]): Args) -> Result<u64, Error> {
    if write > 1 {
        return Err(Error::BadFlags);
    }
    if count == 0 || count > x::MAX_RUN {
        return Err(Error::BadLength);
    }
    let _pages = page_range(va, count)?;
    let (who, c) = (k.xn_who(), k.xn_cred(cred)?);
    k.xn.get()?.may_bind_run(c, parent(p), start, count, write == 1).map_err(crate::xn::refusal)?;
    let me = k.current();
    let mut frames = Vec::with_capacity(count as usize);
    for i in 0..count {
        frames.push(Frame::new(k.xn.get()?.entry(start + i).ok_or(Error::NotCached)?.page.0));
        if pagetable::lookup(&mut PhysTables, k.envs[me].pml4, va + i * x::BLOCK).is_some() {
            return Err(Error::AlreadyMapped);
        }
    }
    let pte = pte_rights(if write == 1 { map::WRITE } else { 0 })?;
    for (i, &f) in frames.iter().enumerate() {
        if let Err(e) = k.bind(me, va + i as u64 * x::BLOCK, f, pte) {
            for done in (0..i as u64).map(|j| va + j * x::BLOCK) {
                if let Ok(old) = pagetable::unmap(&mut PhysTables, k.envs[me].pml4, done) {
                    crate::arch::cpu::invlpg(done);
                    k.mem.frames.drop_ref(pagetable::frame_of(old));
                }
            }
            return Err(e);
        }
    }
    k.xn.call(&mut k.mem, &[], |xn| xn.bind_run(who, c, parent(p), start, count, write == 1)).map(|_| 0)
}

pub fn xn_modify(k: &mut Kernel, Args([req, cred, ..]): Args) -> Result<u64, Error> {
    k.xn.get()?;
    let r: x::Modify = uaccess::read_value(k.pml4(), req)?;
    if r.nchanges == 0 || r.nchanges > x::MAX_CHANGES as u64 {
        return Err(Error::BadLength);
    }
    let mut changes = Vec::with_capacity(r.nchanges as usize);
    for i in 0..r.nchanges {
        let ch: x::Change = uaccess::read_value(k.pml4(), r.changes + i * size_of::<x::Change>() as u64)?;
        if ch.len == 0 || u64::from(ch.off) + u64::from(ch.len) > x::BLOCK {
            return Err(Error::BadLength);
        }
        let mut bytes = alloc::vec![0u8; ch.len as usize];
        uaccess::read(k.pml4(), ch.bytes, &mut bytes)?;
        changes.push((ch.block, ch.off as usize, bytes));
    }
    let extents = |va: u64, n: u64| -> Result<Vec<(u64, u64)>, Error> {
        if n > x::MAX_EXTENTS as u64 {
            return Err(Error::BadLength);
        }
        (0..n)
            .map(|i| uaccess::read_value::<x::Extent>(k.pml4(), va + i * 16).map(|e| (e.start, e.count)))
            .collect()
    };
    let (alloc, free) = (extents(r.alloc, r.nalloc)?, extents(r.free, r.nfree)?);
    let (who, c) = (k.xn_who(), k.xn_cred(cred)?);
    let list: Vec<::xn::Change> =
        changes.iter().map(|(block, off, bytes)| ::xn::Change { block: *block, off: *off, bytes }).collect();
    k.xn.call(&mut k.mem, &[], |xn| xn.modify(who, c, &list, &alloc, &free)).map(|_| 0)
}

pub fn xn_write(k: &mut Kernel, Args([start, count, ..]): Args) -> Result<u64, Error> {
    if count == 0 || count > x::MAX_RUN {
        return Err(Error::BadLength);
    }
    let who = k.xn_who();
    k.xn.call(&mut k.mem, &[], |xn| xn.write(who, start, count)).map(|_| 0)
}

pub fn xn_copy(k: &mut Kernel, Args([p, dst, src, count, cred, ..]): Args) -> Result<u64, Error> {
    if count == 0 || count > x::MAX_RUN {
        return Err(Error::BadLength);
    }
    k.xn.get()?;
    let (who, c) = (k.xn_who(), k.xn_cred(cred)?);
    k.xn.call(&mut k.mem, &[], |xn| xn.copy(who, c, parent(p), dst, src, count)).map(|_| 0)
}

pub fn xn_dirty(k: &mut Kernel, Args([start, count, ..]): Args) -> Result<u64, Error> {
    if count == 0 || count > x::MAX_RUN {
        return Err(Error::BadLength);
    }
    let who = k.xn_who();
    k.xn.call(&mut k.mem, &[], |xn| xn.mark_dirty(who, start, count)).map(|_| 0)
}

pub fn xn_flush(k: &mut Kernel, _: Args) -> Result<u64, Error> {
    k.xn.call(&mut k.mem, &[], |xn| xn.flush()).map(|_| 0)
}

pub fn xn_lock(k: &mut Kernel, Args([block, ..]): Args) -> Result<u64, Error> {
    let who = k.xn_who();
    k.xn.call(&mut k.mem, &[], |xn| xn.lock(who, block)).map(|_| 0)
}

pub fn xn_unlock(k: &mut Kernel, Args([block, ..]): Args) -> Result<u64, Error> {
    let who = k.xn_who();
    k.xn.call(&mut k.mem, &[], |xn| xn.unlock(who, block)).map(|_| 0)
}

pub fn xn_evict(k: &mut Kernel, Args([block, ..]): Args) -> Result<u64, Error> {
    let who = k.xn_who();
    k.xn.call(&mut k.mem, &[], |xn| xn.evict(who, block)).map(|_| 0)
}

/// Most claims one `xn_claims` writes.
const MAX_CLAIMS: u64 = 4096;

pub fn xn_claims(k: &mut Kernel, Args([block, out, max, ..]): Args) -> Result<u64, Error> {
    if max > MAX_CLAIMS {
        return Err(Error::BadLength);
    }
    let claims = k.xn.get()?.claims(block).ok_or(Error::NotClaimed)?;
    let n = claims.len() as u64;
    let mine: Vec<x::Claim> = claims
        .iter()
        .take(max as usize)
        .map(|c| x::Claim { start: c.start, count: c.count, tid: c.tid.into(), slot: c.slot })
        .collect();
    for (i, c) in mine.iter().enumerate() {
        uaccess::write_value(k.pml4(), out + i as u64 * size_of::<x::Claim>() as u64, c)?;
    }
    Ok(n)
}

pub fn xn_parent(k: &mut Kernel, Args([block, ..]): Args) -> Result<u64, Error> {
    match k.xn.get()?.parent(block).ok_or(Error::NotClaimed)? {
        ::xn::Parent::Root(i) => Ok(x::ROOT | i as u64),
        ::xn::Parent::Block(b) => Ok(b),
    }
}

pub fn xn_identity(k: &mut Kernel, Args([uid, gid, cred, ..]): Args) -> Result<u64, Error> {
    k.xn_admin(cred)?;
    let (uid, gid) =
        (u32::try_from(uid).map_err(|_| Error::BadFlags)?, u32::try_from(gid).map_err(|_| Error::BadFlags)?);
    let c = k.mem.caps.create_root(Rights::ALL)?;
    let me = k.space_owner(k.current());
    let undo = |k: &mut Kernel| {
        let _ = k.mem.caps.revoke(c);
    };
    let slot = match k.envs[me].clist.insert(k.mem.caps, c) {
        Ok(s) => s,
        Err(e) => {
            undo(k);
            return Err(e);
        }
    };
    if let Err(e) = k.xn.add_identity(k.mem.caps, c, ::xn::Cred::new(uid, gid)) {
        let _ = k.envs[me].clist.clear(slot);
        undo(k);
        return Err(e);
    }
    Ok(slot)
}
