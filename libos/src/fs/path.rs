//! Path resolution: walking names from the root or the current directory,
//! following symbolic links (at most 40, as Linux).

use super::node::{self, Ino};
use super::{dir, perm, ROOT, S_IFDIR, S_IFLNK, S_IFMT};
use crate::errno::Errno;
use crate::errno::{ELOOP, ENAMETOOLONG, ENOENT, ENOTDIR};

/// The longest name a path may hold (Linux's `NAME_MAX`; the file system
/// keeps shorter ones, `dir::NAME_MAX`).
const NAME_MAX: usize = 255;
use abi::ident::{Ident, EFFECTIVE};
use alloc::vec::Vec;

fn is_link(ino: Ino) -> bool {
    node::get(ino).mode & S_IFMT == S_IFLNK
}

/// Resolves `path` relative to `cwd`; follows a final symlink if `follow`.
/// Every directory passed through must be searchable by this process
/// (EACCES), as on Linux.
pub fn resolve(cwd: Ino, path: &[u8], follow: bool) -> Result<Ino, Errno> {
    resolve_as(cwd, path, follow, EFFECTIVE)
}

/// `resolve`, searching directories as this process's real or effective
/// ids (`which`): `access` walks by the real ones.
pub fn resolve_as(cwd: Ino, path: &[u8], follow: bool, which: usize) -> Result<Ino, Errno> {
    super::mount::refresh_for(path)?;
    let mut walk = Walk { hops: 0, id: None, which };
    walk.walk(cwd, path, follow)
}

/// One resolution's state: symlinks followed so far, the caller's
/// identity once a directory needed it (`perm::search`), and which of its
/// ids judge.
struct Walk {
    hops: u32,
    id: Option<Ident>,
    which: usize,
}

impl Walk {
    fn walk(&mut self, cwd: Ino, path: &[u8], follow: bool) -> Result<Ino, Errno> {
        if path.is_empty() {
            return Err(ENOENT);
        }
        let mut cur = if path[0] == b'/' { ROOT } else { cwd };
        let parts: Vec<&[u8]> = path.split(|&c| c == b'/').filter(|p| !p.is_empty()).collect();
        if parts.iter().any(|p| p.len() > NAME_MAX) {
            return Err(ENAMETOOLONG);
        }
        for (i, part) in parts.iter().enumerate() {
            let mode = node::get(cur).mode;
            if mode & S_IFMT != S_IFDIR {
                return Err(ENOTDIR);
            }
            perm::search(cur, mode, self.which, &mut self.id)?;
            let last = i + 1 == parts.len();
            let next = dir::lookup(cur, part).ok_or(ENOENT)?;
            if is_link(next) && (!last || follow) {
                self.hops += 1;
                if self.hops > 40 {
                    return Err(ELOOP);
                }
                let target = node::bytes(&node::get(next)).to_vec();
                // A link into `/proc` (`/dev/fd`): bring it up to date first.
                super::mount::refresh_for(&target)?;
                cur = self.walk(cur, &target, true)?;
            } else {
                cur = next;
            }
        }
        // "dir/" must name a directory.
        if path.ends_with(b"/") && !node::is_dir(cur) {
            return Err(ENOTDIR);
        }
        Ok(cur)
    }
}

/// Splits `path` into its directory (resolved) and final name.
pub fn parent(cwd: Ino, path: &[u8]) -> Result<(Ino, Vec<u8>), Errno> {
    let trimmed = {
        let mut p = path;
        while p.len() > 1 && p.ends_with(b"/") {
            p = &p[..p.len() - 1];
        }
        p
    };
    if trimmed.is_empty() {
        return Err(ENOENT);
    }
    let (dpath, name): (&[u8], &[u8]) = match trimmed.iter().rposition(|&c| c == b'/') {
        Some(0) => (b"/", &trimmed[1..]),
        Some(i) => (&trimmed[..i], &trimmed[i + 1..]),
        None => (b".", trimmed),
    };
    if name.len() > NAME_MAX {
        return Err(ENAMETOOLONG);
    }
    let d = resolve(cwd, dpath, true)?;
    if !node::is_dir(d) {
        return Err(ENOTDIR);
    }
    Ok((d, name.to_vec()))
}

/// The absolute path of directory `ino` (for getcwd).
pub fn absolute(mut ino: Ino) -> Vec<u8> {
    let mut parts: Vec<Vec<u8>> = Vec::new();
    while ino != ROOT {
        let p = node::get(ino).parent;
        match dir::with_entries(p, |es| es.iter().find(|e| e.ino == ino).map(|e| e.name().to_vec())) {
            Some(name) => parts.push(name),
            None => break,
        }
        ino = p;
    }
    let mut out = Vec::new();
    for p in parts.iter().rev() {
        out.push(b'/');
        out.extend_from_slice(p);
    }
    if out.is_empty() {
        out.push(b'/');
    }
    out
}
