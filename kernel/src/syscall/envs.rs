//! Environments: creation (charged to the creator), destruction of whole
//! subtrees, saved registers, and the exception entry point.

use super::Args;
use crate::cap::Rights;
use crate::env::{ExcTarget, Slot};
use crate::mm::PhysTables;
use crate::pagetable::{self, USER, WRITABLE};
use crate::state::Kernel;
use crate::uaccess;
use abi::exception::{ExceptionFrame, Regs};
use abi::layout::{PAGE_SIZE, USER_END, USER_MIN};
use abi::Error;

pub fn env_create(k: &mut Kernel, Args([cred, ..]): Args) -> Result<u64, Error> {
    create_under(k, abi::syscall::ENV_SELF, 0, cred)
}

/// `env_create` for a descendant: the new environment is `parent`'s child.
pub fn env_create_in(k: &mut Kernel, Args([parent, id, cred, ..]): Args) -> Result<u64, Error> {
    create_under(k, parent, id, cred)
}

/// A new child of `parent` (which `cred` covers with the grant right),
/// charged to it, with id `again` if not 0 (`Kernel::revivable`).
fn create_under(k: &mut Kernel, parent: u64, again: u64, cred: u64) -> Result<u64, Error> {
    let p = k.env_arg_with(parent, cred, Rights::GRANT)?;
    let again = match again {
        0 => None,
        id => Some(k.envs.revivable(id, p)?),
    };
    k.within_limits(p, 1, 0)?; // its top-level page table
    let s = k.env_new(Some(p), false, again)?;
    k.inherit_interposition(p, s);
    k.mem.publish_free();
    Ok(k.envs[s].id().raw() as u64)
}

pub fn env_create_shared(k: &mut Kernel, Args([space, cred, ..]): Args) -> Result<u64, Error> {
    let s = k.env_slot(space)?;
    let owner = k.space_owner(s);
    let o = k.env_arg_with(k.envs[owner].id().raw() as u64, cred, Rights::GRANT)?;
    let s = k.env_create_shared(o)?;
    k.inherit_interposition(o, s);
    Ok(k.envs[s].id().raw() as u64)
}

pub fn env_destroy(k: &mut Kernel, Args([env, cred, ..]): Args) -> Result<u64, Error> {
    let s = k.reap_arg(env, cred)?;
    if s == k.current() {
        return Err(Error::NotPermitted);
    }
    k.env_destroy(s, None);
    Ok(0)
}

pub fn env_set_regs(k: &mut Kernel, Args([env, ptr, cred, ..]): Args) -> Result<u64, Error> {
    let s = k.child_arg(env, cred, Rights::WRITE)?;
    let r: Regs = uaccess::read_value(k.pml4(), ptr)?;
    if r.rip >= USER_END || r.rsp >= 1 << 47 {
        return Err(Error::BadRegs);
    }
    crate::trap::load_regs(&mut k.envs[s].tf, &r);
    Ok(0)
}

pub fn env_get_regs(k: &mut Kernel, Args([env, ptr, cred, ..]): Args) -> Result<u64, Error> {
    let s = k.child_arg(env, cred, Rights::READ)?;
    let regs = crate::trap::regs_of(&k.envs[s].tf);
    uaccess::write_value(k.pml4(), ptr, &regs)?;
    Ok(0)
}

pub fn env_run(k: &mut Kernel, Args([env, cred, ..]): Args) -> Result<u64, Error> {
    let s = k.child_arg(env, cred, Rights::WRITE)?;
    k.release_held(s)?;
    Ok(0)
}

pub fn set_exception_handler(
    k: &mut Kernel,
    Args([env, entry, stack, save, cred, ..]): Args,
) -> Result<u64, Error> {
    let s = k.env_arg(env, cred)?;
    k.set_exception_target(s, entry, stack, save)?;
    Ok(0)
}

impl Kernel {
    /// Where slot `s`'s exceptions go (`entry == 0`: nowhere). The save
    /// area's frame is pinned; the change is whole or not made.
    pub fn set_exception_target(&mut self, s: Slot, entry: u64, stack: u64, save: u64) -> Result<(), Error> {
        let target = if entry == 0 {
            None
        } else {
            if entry >= USER_END || !(USER_MIN..=USER_END).contains(&stack) {
                return Err(Error::BadAddress);
            }
            let size = core::mem::size_of::<ExceptionFrame>() as u64;
            if !save.is_multiple_of(8)
                || save / PAGE_SIZE != (save + size - 1) / PAGE_SIZE
                || save >= USER_END
            {
                return Err(Error::BadPointer);
            }
            let pte = pagetable::lookup(&mut PhysTables, self.envs[s].pml4, save & !(PAGE_SIZE - 1))
                .ok_or(Error::BadPointer)?;
            if pte & (USER | WRITABLE) != USER | WRITABLE {
                return Err(Error::BadPointer);
            }
            let frame = pagetable::frame_of(pte);
            self.mem.frames.add_ref(frame)?;
            let kaddr = crate::mm::phys::<u8>(frame.addr() + save % PAGE_SIZE) as u64;
            Some((frame, ExcTarget { save: kaddr, entry, stack, user_save: save, no_save: 0 }))
        };
        let e = &mut self.envs[s];
        let old = core::mem::replace(&mut e.exc_frame, target.map(|t| t.0));
        e.exc = target.map_or(ExcTarget::NONE, |t| t.1);
        if let Some(f) = old {
            self.mem.frames.drop_ref(f);
        }
        Ok(())
    }
}

pub fn env_publish(k: &mut Kernel, Args([env, word, cred, ..]): Args) -> Result<u64, Error> {
    let s = k.env_arg(env, cred)?;
    k.set_published(s, word);
    Ok(0)
}
