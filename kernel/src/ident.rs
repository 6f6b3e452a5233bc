//! Identities: the UNIX user and groups each environment acts for
//! (`abi::ident`, docs/protection.md). The kernel holds them, so a library
//! cannot forge one by writing its memory: an environment starts with its
//! creator's, changes it only through `ident_set` under Linux's rules for
//! `setresuid`, `setresgid` and `setgroups`, and the kernel itself checks
//! it where it delivers between environments (interrupts, which carry a
//! UNIX library's signals). Threads share their address space owner's.

use crate::env::Slot;
use abi::ident::{Ident, EFFECTIVE, NGROUPS};
use abi::tables::ENV_SLOTS;
use abi::Error;

/// Every slot's identity.
pub struct Idents {
    table: &'static mut [Ident; ENV_SLOTS],
}

/// The table, taken once at boot.
pub static IDENTS: cell::Once<[Ident; ENV_SLOTS]> = cell::Once::new([Ident::ROOT; ENV_SLOTS]);

impl Idents {
    pub fn new(table: &'static mut [Ident; ENV_SLOTS]) -> Idents {
        Idents { table }
    }

    pub fn get(&self, s: Slot) -> &Ident {
        &self.table[s.index()]
    }

    /// A new environment in slot `s` acts for its creator's user (root for
    /// the first).
    pub fn inherit(&mut self, s: Slot, creator: Option<Slot>) {
        self.table[s.index()] = creator.map_or(Ident::ROOT, |c| self.table[c.index()]);
    }

    /// Slot `s` (an address space owner) takes `new`, if its present
    /// identity may; nothing changes otherwise.
    pub fn set(&mut self, s: Slot, new: &Ident) -> Result<(), Error> {
        allowed(&self.table[s.index()], new)?;
        self.table[s.index()] = *new;
        Ok(())
    }
}

/// May an environment acting as `old` become `new`? Root (effective uid
/// 0) may become anyone. Anyone else only rearranges what it holds: each
/// new uid one of its real, effective or saved uids, each gid likewise,
/// and its groups unchanged — so a process that set all three uids to 1000
/// can never be root again.
pub fn allowed(old: &Ident, new: &Ident) -> Result<(), Error> {
    if new.ngroups as usize > NGROUPS {
        return Err(Error::BadLength);
    }
    if old.uid[EFFECTIVE] == 0 {
        return Ok(());
    }
    let held = |ids: &[u32; 3], want: &[u32; 3]| want.iter().all(|w| ids.contains(w));
    if !held(&old.uid, &new.uid) || !held(&old.gid, &new.gid) || old.groups() != new.groups() {
        return Err(Error::NotPermitted);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sig(a: &Ident, b: &Ident) -> bool {
        a.may_signal(b)
    }

    fn user(r: u32, e: u32, s: u32) -> Ident {
        Ident { uid: [r, e, s], gid: [r, e, s], ..Ident::ROOT }
    }

    #[test]
    fn root_may_become_anyone_and_users_only_what_they_hold() {
        assert_eq!(allowed(&Ident::ROOT, &user(1000, 1000, 1000)), Ok(()));
        // Dropped for good: no way back to 0.
        assert_eq!(allowed(&user(1000, 1000, 1000), &Ident::ROOT), Err(Error::NotPermitted));
        // The saved uid 0 gives the effective one back (seteuid(0)).
        assert_eq!(allowed(&user(1000, 1000, 0), &user(1000, 0, 0)), Ok(()));
        assert_eq!(allowed(&user(1000, 1000, 0), &user(0, 1000, 0)), Ok(()));
        assert_eq!(allowed(&user(1000, 1000, 1000), &user(1000, 1001, 1000)), Err(Error::NotPermitted));
        let mut grouped = user(1000, 1000, 1000);
        grouped.ngroups = 1;
        assert_eq!(allowed(&user(1000, 1000, 1000), &grouped), Err(Error::NotPermitted));
        grouped.ngroups = NGROUPS as u32 + 1;
        assert_eq!(allowed(&Ident::ROOT, &grouped), Err(Error::BadLength));
    }

    #[test]
    fn signals_go_to_ones_own_user_or_from_root() {
        assert!(sig(&Ident::ROOT, &user(1000, 1000, 1000)));
        assert!(!sig(&user(1000, 1000, 1000), &Ident::ROOT));
        assert!(sig(&user(1000, 1000, 1000), &user(1000, 1000, 1000)));
        // A set-uid program's real uid is its caller's: the caller may signal it.
        assert!(sig(&user(1000, 1000, 1000), &user(1000, 0, 0)));
        assert!(!sig(&user(1001, 1001, 1001), &user(1000, 1000, 1000)));
    }
}
