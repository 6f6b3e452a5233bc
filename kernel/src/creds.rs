//! Explicit credentials (paper 000 §3.3, §5.1): every call that acts on an
//! object names a capability from the caller's list, and the kernel allows
//! it if that capability dominates the object's guard with the rights the
//! action needs.
//!
//! Guards: an environment's guard is its root capability, derived from its
//! creator's root — so by default a creator's root dominates everything its
//! descendants hold, exactly like ownership. A frame is guarded by its
//! owner's root and, optionally, by a *share* guard the owner sets, which is
//! how unrelated environments share a frame (protected sharing). A
//! protected-control-transfer entry point has a guard its owner chooses.

use crate::cap::{CapRef, Rights};
use crate::env::{Slot, State};
use crate::frames::Frame;
use crate::state::Kernel;
use abi::tables::frame_state;
use abi::Error;

impl Kernel {
    /// The capability in the caller's list at `slot` (a sharer's is its
    /// owner's, `aspace.rs`).
    pub fn cred(&self, slot: u64) -> Result<CapRef, Error> {
        self.envs[self.space_owner(self.current())].clist.get(slot)
    }

    /// A guard chosen by the caller: its capability in `slot`, or none for
    /// `NO_GUARD`. A loan guards with what it stands for, so the guard
    /// outlives the borrower's loan (an orphan's process-table entry stays
    /// readable after its parent, which lent it the credential, is gone).
    pub fn guard_arg(&self, slot: u64) -> Result<CapRef, Error> {
        if slot == abi::syscall::NO_GUARD {
            return Ok(CapRef::NONE);
        }
        self.mem.caps.lent_from(self.cred(slot)?).ok_or(Error::NotPermitted)
    }

    /// Does the caller's credential `slot` cover slot `s`'s environment
    /// with `need`?
    fn covers_env(&self, slot: u64, s: Slot, need: Rights) -> Result<(), Error> {
        self.mem.caps.check(self.cred(slot)?, self.envs[s].guard, need)
    }

    /// An environment argument the credential covers, exited or not.
    pub fn reap_arg(&self, id: u64, cred: u64) -> Result<Slot, Error> {
        let s = self.env_slot(id)?;
        self.covers_env(cred, s, Rights::WRITE)?;
        Ok(s)
    }

    /// A live (not exited) environment the credential covers with `need`.
    pub fn env_arg_with(&self, id: u64, cred: u64, need: Rights) -> Result<Slot, Error> {
        let s = self.env_slot(id)?;
        self.covers_env(cred, s, need)?;
        if self.envs[s].state() == State::Exited {
            return Err(Error::BadState);
        }
        Ok(s)
    }

    /// A live environment the credential may change.
    pub fn env_arg(&self, id: u64, cred: u64) -> Result<Slot, Error> {
        self.env_arg_with(id, cred, Rights::WRITE)
    }

    /// Like `env_arg`, but the caller itself is refused.
    pub fn child_arg(&self, id: u64, cred: u64, need: Rights) -> Result<Slot, Error> {
        let s = self.env_arg_with(id, cred, need)?;
        if s == self.current() {
            return Err(Error::NotPermitted);
        }
        Ok(s)
    }

    /// A frame the credential covers with `need`, through its owner's guard
    /// or (if `shared`) its share guard. Returns the owner's slot.
    pub fn frame_arg(&self, frame: Frame, cred: u64, need: Rights, shared: bool) -> Result<Slot, Error> {
        let rec = self.mem.frames.info(frame).ok_or(Error::BadFrame)?;
        if rec.state != frame_state::USER || rec.owner == 0 {
            return Err(Error::NotOwner);
        }
        let owner = self.env_slot(rec.owner as u64).map_err(|_| Error::NotOwner)?;
        let c = self.cred(cred)?;
        let guards = [Some(self.envs[owner].guard), shared.then(|| self.mem.share_guard(frame))];
        let mut answer = Err(Error::NotOwner);
        for g in guards.into_iter().flatten() {
            if self.mem.caps.dominates(c, g) {
                // The right capability, perhaps without the right rights.
                answer = self.mem.caps.check(c, g, need).map(|_| owner);
                if answer.is_ok() {
                    break;
                }
            }
        }
        answer
    }
}
