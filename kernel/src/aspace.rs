//! Address spaces shared by several environments (paper 000 §5.2: a
//! library OS builds threads from environments). `env_create_shared` makes
//! an environment that runs over another's page tables: it is scheduled,
//! blocks and is interrupted on its own, with its own registers, FPU state,
//! fs/gs bases and exception entry, but every mapping made by any of them
//! is seen by all, and each acts with its owner's capability list (the
//! address space is the protection domain: `Kernel::cred`).
//!
//! The tables stay the owner's: the sharer is always created as a child of
//! the environment that owns them, so destroying the owner destroys every
//! sharer first (post-order) and the tables go with the last of them; a
//! sharer's own end leaves them alone. Page tables a sharer's mappings need
//! are charged to the owner, so quotas and reclamation see one address
//! space; user frames are charged to whomever the caller names, as always.

use crate::env::Slot;
use crate::state::Kernel;

impl Kernel {
    /// The environment that owns slot `s`'s page tables: `s` itself, or
    /// the parent of a sharer.
    pub fn space_owner(&self, s: Slot) -> Slot {
        match self.envs[s].parent() {
            Some(p) if self.envs[s].shares => p.slot(),
            _ => s,
        }
    }

    /// Whether slot `s` runs over the page tables loaded now, so a change
    /// to its mappings must be flushed from this CPU's TLB.
    pub fn space_is_current(&self, s: Slot) -> bool {
        self.envs[s].cr3 == self.envs[self.current()].cr3
    }

    /// A new stopped environment over the page tables of `owner` (which
    /// owns them), created as `owner`'s child.
    pub fn env_create_shared(&mut self, owner: Slot) -> Result<Slot, abi::Error> {
        debug_assert!(!self.envs[owner].shares);
        self.env_new(Some(owner), true, None)
    }
}
