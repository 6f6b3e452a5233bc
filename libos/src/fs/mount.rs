//! Synthetic file systems (`/proc`): directories whose files a module
//! above the file system makes from other state, brought up to date when a
//! path under them is resolved. Each is registered at start (`mount`, a
//! small table kept across fork and exec), so path resolution names none.

use crate::errno::Errno;
use crate::word::Word;

/// A synthetic file system: where it is and what brings the part of it a
/// path names up to date (given the path below `at`).
pub struct Synthetic {
    pub at: &'static [u8],
    pub refresh: fn(&[u8]) -> Result<(), Errno>,
}

const MOUNTS: usize = 4;

static TABLE: Word<[Option<&'static Synthetic>; MOUNTS]> = Word::new([None; MOUNTS]);

/// Registers `s` (at start); false when the table is full.
pub fn mount(s: &'static Synthetic) -> bool {
    let mut t = TABLE.get();
    let Some(slot) = t.iter_mut().find(|m| m.is_none()) else {
        return false;
    };
    *slot = Some(s);
    TABLE.set(t);
    true
}

/// Whether `path` is `at` or lies under it.
fn covers(at: &[u8], path: &[u8]) -> bool {
    path.strip_prefix(at).is_some_and(|rest| rest.is_empty() || rest[0] == b'/')
}

/// Brings the synthetic file system `path` lies in up to date, if any.
pub fn refresh_for(path: &[u8]) -> Result<(), Errno> {
    match TABLE.get().into_iter().flatten().find(|m| covers(m.at, path)) {
        Some(m) => (m.refresh)(&path[m.at.len()..]),
        None => Ok(()),
    }
}
