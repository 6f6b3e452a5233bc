//! How environments outlive their parents, and how a parent hears of an
//! end (paper 000 §5.2.1: UNIX processes are the library's; the kernel
//! only gives it what it cannot build itself).
//!
//! `env_move` hands a subtree to an ancestor of its parent: a UNIX
//! library gives a dying process's children to init, so the process ends
//! at once instead of lingering until its children do, while the kernel
//! still destroys whole subtrees. The ancestor dominated the subtree
//! already, so no authority is made; the environments in between lose
//! theirs, and may not be ones that limit the subtree or interpose on it
//! (a move may escape neither).
//!
//! `env_exit_bits` lets a parent hear of an end it did not cause, however
//! it came: an `exit`, a fault with no handler free, the abort protocol.

use crate::env::{EnvId, Slot, State};
use crate::state::Kernel;
use abi::syscall::NO_LIMIT;
use abi::Error;

impl Kernel {
    /// Moves slot `s` (not the caller; checked by the caller's credential
    /// already) and its subtree under slot `to`, a proper ancestor of its
    /// parent. Validates everything before changing anything.
    pub fn env_move(&mut self, s: Slot, to: Slot) -> Result<(), Error> {
        let e = &self.envs[s];
        if e.shares {
            return Err(Error::NotPermitted);
        }
        let parent = e.parent().ok_or(Error::BadEnv)?.slot();
        if to == parent || self.envs[to].state() == State::Exited {
            return Err(Error::BadEnv);
        }
        // Up from the parent to `to`: each environment passed loses the
        // subtree, so none may limit it or interpose on it.
        let mut at = parent;
        while at != to {
            let a = &self.envs[at];
            if a.frame_quota != NO_LIMIT || a.slice_quota != NO_LIMIT || e.interposer == Some(a.id()) {
                return Err(Error::NotPermitted);
            }
            at = a.parent().map(EnvId::slot).ok_or(Error::BadEnv)?;
        }
        self.mem.caps.move_under(self.envs[s].guard, self.envs[to].guard)?;
        self.envs.set_parent(s, to, &self.mem.frames);
        // Without slices of its own, it runs in its new parent's group's.
        self.sched.groups().regroup(&mut self.envs, s);
        Ok(())
    }

    /// Ends slot `s`, keeping it as a zombie holding `code`; its parent
    /// gets the bits it asked for (`env_exit_bits`) if it has a handler.
    pub fn env_end(&mut self, s: Slot, code: i32) {
        let notice = self.exit_notice(s);
        let id = self.envs[s].id().raw();
        self.env_destroy(s, Some(code));
        if let Some((p, bits)) = notice {
            self.queue_interrupt(p, bits, id);
        }
    }

    /// Whom slot `s`'s end is told to, and with what bits.
    fn exit_notice(&self, s: Slot) -> Option<(Slot, u64)> {
        let bits = self.envs[s].exit_bits;
        let p = self.env_slot(self.envs[s].parent()?.raw() as u64).ok()?;
        let e = &self.envs[p];
        (bits != 0 && e.exc.save != 0 && e.state() != State::Exited).then_some((p, bits))
    }
}
