//! An environment's identity: the UNIX user and groups it acts for, held
//! by the kernel (docs/protection.md). Every environment starts with its
//! creator's (the first one is root: all zero); only `ident_set` changes
//! it, and only as its rules allow.

/// The most supplementary groups an identity holds.
pub const NGROUPS: usize = 32;

/// Real, effective and saved ids, as Linux keeps them.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ident {
    /// Real, effective, saved user id.
    pub uid: [u32; 3],
    /// Real, effective, saved group id.
    pub gid: [u32; 3],
    /// How many of `groups` are held.
    pub ngroups: u32,
    pub groups: [u32; NGROUPS],
}

/// Indices into `uid` and `gid`.
pub const REAL: usize = 0;
pub const EFFECTIVE: usize = 1;
pub const SAVED: usize = 2;

impl Ident {
    /// The first environment's: root, no supplementary groups.
    pub const ROOT: Ident = Ident { uid: [0; 3], gid: [0; 3], ngroups: 0, groups: [0; NGROUPS] };

    /// The supplementary groups held.
    pub fn groups(&self) -> &[u32] {
        &self.groups[..(self.ngroups as usize).min(NGROUPS)]
    }

    /// May this identity signal `target`'s process (Linux's
    /// `kill_ok_by_cred`)? Root may signal anyone; anyone else a target
    /// whose real or saved uid is its own real or effective uid. The
    /// kernel applies it to every interrupt between address spaces.
    pub fn may_signal(&self, target: &Ident) -> bool {
        let mine = [self.uid[REAL], self.uid[EFFECTIVE]];
        self.uid[EFFECTIVE] == 0 || mine.contains(&target.uid[REAL]) || mine.contains(&target.uid[SAVED])
    }

    /// May this identity read (`read`) and write (`write`) an object of
    /// owner `uid`, group `gid` and permission bits `mode` (a file's
    /// `rw-rw-rw-` bits)? As Linux judges a file: root may; anyone else
    /// by the owner's bits if it is the owner, else the group's if the
    /// group is its effective or a supplementary group, else the others'.
    pub fn may_access(&self, uid: u32, gid: u32, mode: u32, read: bool, write: bool) -> bool {
        if self.uid[EFFECTIVE] == 0 {
            return true;
        }
        let class = if self.uid[EFFECTIVE] == uid {
            mode >> 6
        } else if self.gid[EFFECTIVE] == gid || self.groups().contains(&gid) {
            mode >> 3
        } else {
            mode
        };
        (!read || class & 4 != 0) && (!write || class & 2 != 0)
    }
}
