//! `fsck`: everything C-FFS and XN promise about a disk, checked without
//! changing it, each problem said precisely (block, entry, name).

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use crate::client::XnClient;
use crate::format::{
    may_inline, name_len, Header, Inode, ENTRIES, ENTRY, E_CONT, E_FREE, E_INODE, E_REF, INLINE_MAX,
    KIND_DIR, NAME_INLINE, S_IFDIR, S_IFLNK, S_IFMT,
};
use crate::fs::{Fs, Loc, ROOT_INO};
use crate::BLOCK;

/// What `fsck` found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    pub problems: Vec<String>,
    pub files: u64,
    pub dirs: u64,
    pub symlinks: u64,
    pub table_inodes: u64,
}

impl Report {
    pub fn clean(&self) -> bool {
        self.problems.is_empty()
    }
}

fn valid_type(mode: u32) -> bool {
    matches!(mode & S_IFMT, 0o010000 | 0o020000 | 0o040000 | 0o060000 | 0o100000 | 0o120000 | 0o140000)
}

/// Checks one inode's fields and extents.
fn check_inode(i: &Inode, at: &str, out: &mut Vec<String>) {
    if !valid_type(i.mode) {
        out.push(format!("{at}: unknown file type {:o}", i.mode & S_IFMT));
    }
    if i.is_inline() {
        if i.is_dir() || i.size > INLINE_MAX as u64 {
            out.push(format!("{at}: inline data on a directory or beyond {INLINE_MAX} bytes"));
        }
        if !may_inline(i.mode) {
            out.push(format!("{at}: inline data of a file not everyone may read ({:o})", i.mode & 0o7777));
        }
        return;
    }
    let exts: Vec<_> = i.ext.iter().filter(|e| !e.is_empty()).collect();
    for e in &exts {
        if e.count == 0 {
            out.push(format!("{at}: extent at block {} of no blocks", e.start));
        }
    }
    for (k, a) in exts.iter().enumerate() {
        if exts[k + 1..].iter().any(|b| a.fblock < b.end() as u32 && b.fblock < a.end() as u32) {
            out.push(format!("{at}: extents overlap at file block {}", a.fblock));
        }
    }
    if i.is_dir() && !i.size.is_multiple_of(BLOCK as u64) {
        out.push(format!("{at}: directory size {} is not whole blocks", i.size));
    }
    if i.mode & S_IFMT == S_IFLNK && i.size == 0 {
        out.push(format!("{at}: empty symbolic link"));
    }
}

/// Checks an opened (not recovered) C-FFS.
pub fn fsck<C: XnClient>(fs: &mut Fs<C>) -> Report {
    let mut r = Report::default();
    for b in fs.xn.shared_blocks() {
        r.problems.push(format!("block {b} is claimed {} times", fs.xn.claimants(b)));
    }
    match fs.header(fs.root) {
        Ok(h) if h.intent.kind != 0 => r.problems.push(format!(
            "rename of inode {} from block {} entry {} to block {} entry {} is pending",
            h.intent.ino, h.intent.a_block, h.intent.a_entry, h.intent.b_block, h.intent.b_entry
        )),
        Ok(_) => {}
        Err(e) => {
            r.problems.push(format!("root block {}: {e:?}", fs.root));
            return r;
        }
    }
    let mut refs: BTreeMap<Loc, u32> = BTreeMap::new();
    let mut dirs = alloc::vec![(ROOT_INO, String::from("/"))];
    let mut i = 0;
    while i < dirs.len() {
        let (dir, path) = dirs[i].clone();
        i += 1;
        r.dirs += 1;
        if let Err(e) = check_dir(fs, dir, &path, &mut r, &mut refs, &mut dirs) {
            r.problems.push(format!("{path}: {e:?}"));
        }
        if dirs.len() as u64 > fs.xn.nblocks() * ENTRIES as u64 {
            r.problems.push(String::from("the directory tree loops"));
            break;
        }
    }
    match fs.table() {
        Ok(table) => {
            for (loc, inode) in table {
                r.table_inodes += 1;
                let at = format!("table inode {} (block {} entry {})", inode.ino, loc.block, loc.entry);
                check_inode(&inode, &at, &mut r.problems);
                let n = refs.remove(&loc).unwrap_or(0);
                if n != inode.nlink {
                    r.problems.push(format!("{at}: {} links counted, {n} names found", inode.nlink));
                }
            }
        }
        Err(e) => r.problems.push(format!("inode table: {e:?}")),
    }
    for (loc, n) in refs {
        r.problems.push(format!("{n} names refer to free table entry {} of block {}", loc.entry, loc.block));
    }
    r
}

fn check_dir<C: XnClient>(
    fs: &mut Fs<C>,
    dir: u64,
    path: &str,
    r: &mut Report,
    refs: &mut BTreeMap<Loc, u32>,
    dirs: &mut Vec<(u64, String)>,
) -> crate::Result<()> {
    let (loc, inode) = fs.load(dir)?;
    for b in fs.dir_blocks(loc, &inode)? {
        let bytes = *fs.bytes(b)?;
        let h = Header::decode(&bytes[..ENTRY])?;
        if h.kind != KIND_DIR || (h.uid, h.gid, h.mode) != (inode.uid, inode.gid, inode.mode) {
            r.problems.push(format!("{path}: block {b} header does not match the directory's inode"));
        }
        let mut long = false;
        for e in 1..=ENTRIES {
            let ent = &bytes[e * ENTRY..(e + 1) * ENTRY];
            match ent[0] {
                E_CONT if !long => {
                    r.problems.push(format!("{path}: block {b} entry {e}: stray name continuation"))
                }
                E_FREE | E_CONT | E_INODE | E_REF => {}
                k => r.problems.push(format!("{path}: block {b} entry {e}: unknown entry kind {k}")),
            }
            long = (ent[0] == E_INODE || ent[0] == E_REF) && name_len(ent) > NAME_INLINE;
            if (ent[0] == E_INODE || ent[0] == E_REF) && name_len(ent) == 0 {
                r.problems.push(format!("{path}: block {b} entry {e}: empty name"));
            }
        }
    }
    let entries = fs.scan(dir)?;
    for (k, d) in entries.iter().enumerate() {
        let name = String::from_utf8_lossy(&d.name);
        let at = format!("{path}{name}");
        if d.name.iter().any(|&c| c == b'/' || c == 0) || d.name == b"." || d.name == b".." {
            r.problems.push(format!("{at}: invalid name"));
        }
        if entries[..k].iter().any(|o| o.name == d.name) {
            r.problems.push(format!("{at}: name appears twice"));
        }
        if d.kind == E_REF {
            *refs.entry(*fs.locs.get(&d.ino).unwrap_or(&d.loc)).or_default() += 1;
        } else {
            let i = fs.inode_at(d.loc)?;
            check_inode(&i, &at, &mut r.problems);
        }
        match d.mode & S_IFMT {
            S_IFDIR => dirs.push((d.ino, format!("{at}/"))),
            S_IFLNK => r.symlinks += 1,
            _ => r.files += 1,
        }
    }
    Ok(())
}

/// One name's file, as a snapshot sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    pub ino: u64,
    pub mode: u32,
    /// File contents, or a symbolic link's target (empty for
    /// directories).
    pub data: Vec<u8>,
}

/// Every path in the file system with what it names.
pub fn snapshot<C: XnClient>(fs: &mut Fs<C>) -> crate::Result<BTreeMap<String, Node>> {
    let mut out = BTreeMap::new();
    let mut dirs = alloc::vec![(ROOT_INO, String::new())];
    while let Some((dir, path)) = dirs.pop() {
        for (name, ino, kind) in fs.readdir(dir)? {
            let p = format!("{path}/{}", String::from_utf8_lossy(&name));
            let st = fs.stat(ino)?;
            let data = match kind {
                S_IFDIR => {
                    dirs.push((ino, p.clone()));
                    Vec::new()
                }
                S_IFLNK => fs.readlink(ino)?,
                _ => {
                    let mut buf = alloc::vec![0u8; st.size as usize];
                    let n = fs.read(ino, 0, &mut buf)?;
                    buf.truncate(n);
                    buf
                }
            };
            out.insert(p, Node { ino, mode: st.mode, data });
        }
        if out.len() as u64 > fs.xn.nblocks() * ENTRIES as u64 {
            return Err(crate::Errno::Corrupt("directory tree loops"));
        }
    }
    Ok(out)
}

/// The blocks C-FFS itself accounts for: the root block, the inode table,
/// every directory's and file's blocks and extent blocks. On a consistent
/// disk this is XN's count of allocated blocks: what `owns` says and what
/// the library believes agree, and nothing is leaked.
pub fn blocks_in_use<C: XnClient>(fs: &mut Fs<C>) -> crate::Result<u64> {
    let mut n = 1;
    let count = |fs: &mut Fs<C>, loc: Loc, inode: &Inode| -> crate::Result<u64> {
        let map = fs.map(loc, inode)?;
        Ok(map.slots.iter().map(|s| u64::from(s.ext.count)).sum::<u64>() + map.chain.len() as u64)
    };
    for dir in fs.all_dirs()? {
        if dir == ROOT_INO {
            let (loc, inode) = fs.load(ROOT_INO)?;
            n += count(fs, loc, &inode)?;
        }
        for d in fs.scan(dir)?.into_iter().filter(|d| d.kind == E_INODE) {
            let inode = fs.inode_at(d.loc)?;
            n += count(fs, d.loc, &inode)?;
        }
    }
    let mut b = fs.header(fs.root)?.next;
    while b != 0 {
        n += 1;
        b = fs.header(b)?.next;
    }
    for (loc, inode) in fs.table()? {
        n += count(fs, loc, &inode)?;
    }
    Ok(n)
}
