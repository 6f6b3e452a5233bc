//! Directories: entries with embedded inodes, lookups, creation, links,
//! removal and rename.
//!
//! Hard links are the embedded inode's wrinkle (an inode cannot live in
//! two directory entries): the first `link` moves the inode into the
//! inode table and leaves a reference in its place; every name is then a
//! reference, and the table inode counts them. A rename between two
//! entry blocks moves the entry, and its claims, from one block to the
//! other in one XN request; on disk the new block is written first, and
//! an intent in the root block lets mount finish or forget a move a
//! crash cut in half.

use alloc::vec::Vec;

use xn::{Change, Parent};

use crate::client::XnClient;
use crate::data::Fill;
use crate::format::{
    may_inline, name_len, with_name_of, Extent, Header, Inode, Intent, ENTRIES, ENTRY, E_CONT, E_FREE,
    E_INODE, E_REF, INTENT_EXTERNALIZE, INTENT_MOVE, INTENT_NONE, KIND_DIR, KIND_ITABLE, NAME_AT,
    NAME_INLINE, NAME_MAX, S_IFDIR, S_IFLNK, S_IFMT, S_IFREG,
};
use crate::fs::{Fs, Loc, ROOT_INO};
use crate::{Errno, Result, BLOCK};

/// A name in a directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dirent {
    pub loc: Loc,
    pub name: Vec<u8>,
    pub ino: u64,
    pub mode: u32,
    /// `E_INODE` (embedded) or `E_REF` (names a table inode).
    pub kind: u8,
}

impl Dirent {
    pub fn is_dir(&self) -> bool {
        self.mode & S_IFMT == S_IFDIR
    }
    fn span(&self) -> usize {
        span(&self.name)
    }
}

fn span(name: &[u8]) -> usize {
    if name.len() > NAME_INLINE {
        2
    } else {
        1
    }
}

fn check_name(name: &[u8]) -> Result<()> {
    if name.len() > NAME_MAX {
        return Err(Errno::NameTooLong);
    }
    if name.is_empty() || name == b"." || name == b".." || name.iter().any(|&c| c == b'/' || c == 0) {
        return Err(Errno::Inval);
    }
    Ok(())
}

/// The entry (and continuation) bytes naming `inode` as `name`.
fn entry_bytes(inode: &Inode, name: &[u8]) -> ([u8; ENTRY], Option<[u8; ENTRY]>) {
    let main = inode.encode(name);
    if name.len() <= NAME_INLINE {
        return (main, None);
    }
    let mut cont = [0u8; ENTRY];
    cont[0] = E_CONT;
    cont[8..8 + name.len() - NAME_INLINE].copy_from_slice(&name[NAME_INLINE..]);
    (main, Some(cont))
}

/// A reference to the table inode at `t`.
fn reference(inode: &Inode, t: Loc) -> Inode {
    let target = Extent { start: t.block, count: t.entry as u32, fblock: 0 };
    Inode {
        kind: E_REF,
        mode: inode.mode,
        ino: inode.ino,
        ext: [target, Extent::default(), Extent::default(), Extent::default()],
        ..Inode::default()
    }
}

/// The intent to move inode `ino`'s entry from `a` to `b`.
fn intent(kind: u32, a: Loc, b: Loc, ino: u64) -> Intent {
    Intent { kind, a_block: a.block, a_entry: a.entry as u32, b_block: b.block, b_entry: b.entry as u32, ino }
}

/// What removing an embedded inode's entry frees (its extent blocks'
/// contents go with the first, XN frees the subtree).
pub(crate) fn claims_of(inode: &Inode) -> Vec<(u64, u64)> {
    if inode.kind != E_INODE || inode.is_inline() {
        return Vec::new();
    }
    let mut v: Vec<(u64, u64)> =
        inode.ext.iter().filter(|e| !e.is_empty()).map(|e| (e.start, u64::from(e.count))).collect();
    if inode.ext_block != 0 {
        v.push((inode.ext_block, 1));
    }
    v
}

const ZERO: [u8; ENTRY] = [0; ENTRY];

impl<C: XnClient> Fs<C> {
    /// A directory's entry blocks in file order.
    pub(crate) fn dir_blocks(&mut self, loc: Loc, inode: &Inode) -> Result<Vec<u64>> {
        let map = self.map(loc, inode)?;
        let mut exts: Vec<Extent> = map.slots.iter().map(|s| s.ext).filter(|e| !e.is_empty()).collect();
        exts.sort_by_key(|e| e.fblock);
        Ok(exts.iter().flat_map(|e| e.start..e.start + u64::from(e.count)).collect())
    }

    /// Every name in a directory (recording where each inode lives).
    pub(crate) fn scan(&mut self, dir: u64) -> Result<Vec<Dirent>> {
        self.scan_for(dir, None)
    }

    /// The names in a directory, or (with `only`) just the one entry so
    /// named: the others are passed over by their name bytes, without
    /// decoding them (a create or unlink in a directory of hundreds of
    /// files looked at every inode, twice).
    fn scan_for(&mut self, dir: u64, only: Option<&[u8]>) -> Result<Vec<Dirent>> {
        let (loc, inode) = self.load(dir)?;
        if !inode.is_dir() {
            return Err(Errno::NotDir);
        }
        let mut out = Vec::new();
        for b in self.dir_blocks(loc, &inode)? {
            let bytes = *self.bytes(b)?;
            if Header::decode(&bytes[..ENTRY])?.kind != KIND_DIR {
                return Err(Errno::Corrupt("directory block of another kind"));
            }
            let mut e = 1;
            while e <= ENTRIES {
                let ent = &bytes[e * ENTRY..(e + 1) * ENTRY];
                if ent[0] != E_INODE && ent[0] != E_REF {
                    e += 1;
                    continue;
                }
                let len = name_len(ent);
                let first = &ent[NAME_AT..NAME_AT + len.min(NAME_INLINE)];
                if only.is_some_and(|n| n.len() != len || !n.starts_with(first)) {
                    e += if len > NAME_INLINE { 2 } else { 1 };
                    continue;
                }
                let mut name = Vec::from(first);
                if len > NAME_INLINE {
                    let cont =
                        bytes.get((e + 1) * ENTRY..(e + 2) * ENTRY).filter(|c| c[0] == E_CONT && e < ENTRIES);
                    let cont = cont.ok_or(Errno::Corrupt("long name without its continuation"))?;
                    name.extend_from_slice(&cont[8..8 + len - NAME_INLINE]);
                }
                if only.is_some_and(|n| n != &name[..]) {
                    e += 2;
                    continue;
                }
                let inode = Inode::decode(ent);
                let here = Loc { block: b, entry: e };
                let home = if ent[0] == E_REF {
                    let (tb, te) = inode.target();
                    if !(1..=ENTRIES).contains(&te) || self.xn.claims(tb).is_none() {
                        return Err(Errno::Corrupt("reference to no table inode"));
                    }
                    Loc { block: tb, entry: te }
                } else {
                    here
                };
                self.locs.insert(inode.ino, home);
                if inode.mode & S_IFMT == S_IFDIR {
                    self.parents.insert(inode.ino, dir);
                }
                out.push(Dirent { loc: here, name, ino: inode.ino, mode: inode.mode, kind: ent[0] });
                if only.is_some() {
                    return Ok(out);
                }
                e += span(&out[out.len() - 1].name);
            }
        }
        Ok(out)
    }

    fn lookup_in(&mut self, dir: u64, name: &[u8]) -> Result<Option<Dirent>> {
        Ok(self.scan_for(dir, Some(name))?.pop())
    }

    /// A directory (by inode) the caller may change.
    fn writable_dir(&mut self, dir: u64) -> Result<()> {
        let (_, inode) = self.load(dir)?;
        if !inode.is_dir() {
            return Err(Errno::NotDir);
        }
        if !self.allowed(&inode, 3) {
            return Err(Errno::Access);
        }
        Ok(())
    }

    /// The inode a name in `dir` names.
    pub fn lookup(&mut self, dir: u64, name: &[u8]) -> Result<u64> {
        let (_, inode) = self.load(dir)?;
        if !inode.is_dir() {
            return Err(Errno::NotDir);
        }
        if !self.allowed(&inode, 1) {
            return Err(Errno::Access);
        }
        match name {
            b"." => Ok(dir),
            b".." => Ok(*self.parents.get(&dir).unwrap_or(&ROOT_INO)),
            _ => self.lookup_in(dir, name)?.map(|d| d.ino).ok_or(Errno::NoEnt),
        }
    }

    /// Resolves an absolute path (symbolic links are not followed: that is
    /// the library OS's job).
    pub fn resolve(&mut self, path: &str) -> Result<u64> {
        let mut ino = ROOT_INO;
        for part in path.split('/').filter(|p| !p.is_empty()) {
            ino = self.lookup(ino, part.as_bytes())?;
        }
        Ok(ino)
    }

    /// Names and inodes in a directory, with their file types.
    pub fn readdir(&mut self, dir: u64) -> Result<Vec<(Vec<u8>, u64, u32)>> {
        let (_, inode) = self.load(dir)?;
        if !inode.is_dir() {
            return Err(Errno::NotDir);
        }
        if !self.allowed(&inode, 4) {
            return Err(Errno::Access);
        }
        Ok(self.scan(dir)?.into_iter().map(|d| (d.name, d.ino, d.mode & S_IFMT)).collect())
    }

    /// `need` consecutive free entries in `dir`, preferring block `near`,
    /// adding a block if every one is full.
    fn place(&mut self, dir: u64, need: usize, near: Option<u64>) -> Result<Loc> {
        let (loc, inode) = self.load(dir)?;
        let mut blocks = self.dir_blocks(loc, &inode)?;
        if let Some(i) = near.and_then(|n| blocks.iter().position(|&b| b == n)) {
            blocks.swap(0, i);
        }
        for b in blocks {
            let bytes = self.bytes(b)?;
            for e in 1..=ENTRIES + 1 - need {
                if (e..e + need).all(|x| bytes[x * ENTRY] == E_FREE) {
                    return Ok(Loc { block: b, entry: e });
                }
            }
        }
        let b = self.add_dir_block(dir)?;
        Ok(Loc { block: b, entry: 1 })
    }

    fn add_dir_block(&mut self, dir: u64) -> Result<u64> {
        let (loc, mut inode) = self.load(dir)?;
        let f = inode.size / BLOCK as u64;
        let mut fill = [0u8; BLOCK];
        let head =
            Header { kind: KIND_DIR, uid: inode.uid, gid: inode.gid, mode: inode.mode, ..Header::default() };
        fill[..ENTRY].copy_from_slice(&head.encode());
        self.grow(loc, &mut inode, f, 1, Fill::With(&fill))?;
        inode.size += BLOCK as u64;
        self.set_inode(loc, &inode, &[], &[])?;
        let map = self.map(loc, &inode)?;
        Ok(map.find(f).ok_or(Errno::Corrupt("new directory block vanished"))?.0)
    }

    /// The changes that write `inode` named `name` at `loc`.
    fn put(loc: Loc, bytes: &([u8; ENTRY], Option<[u8; ENTRY]>)) -> Vec<Change<'_>> {
        let mut v = alloc::vec![Change { block: loc.block, off: loc.off(), bytes: &bytes.0 }];
        if let Some(c) = &bytes.1 {
            v.push(Change { block: loc.block, off: loc.off() + ENTRY, bytes: c });
        }
        v
    }

    fn clear(loc: Loc, span: usize) -> Vec<Change<'static>> {
        (0..span).map(|i| Change { block: loc.block, off: loc.off() + i * ENTRY, bytes: &ZERO }).collect()
    }

    pub fn create(&mut self, dir: u64, name: &[u8], mode: u32) -> Result<u64> {
        self.make(dir, name, S_IFREG | (mode & 0o7777), &[])
    }

    pub fn mkdir(&mut self, dir: u64, name: &[u8], mode: u32) -> Result<u64> {
        self.make(dir, name, S_IFDIR | (mode & 0o7777), &[])
    }

    pub fn symlink(&mut self, dir: u64, name: &[u8], target: &[u8]) -> Result<u64> {
        if target.is_empty() || target.len() >= BLOCK {
            return Err(Errno::NameTooLong);
        }
        self.make(dir, name, S_IFLNK | 0o777, target)
    }

    pub fn readlink(&mut self, ino: u64) -> Result<Vec<u8>> {
        let (_, inode) = self.load(ino)?;
        if inode.mode & S_IFMT != S_IFLNK {
            return Err(Errno::Inval);
        }
        let mut buf = alloc::vec![0u8; inode.size as usize];
        let n = self.read(ino, 0, &mut buf)?;
        buf.truncate(n);
        Ok(buf)
    }

    /// Creates an inode named `name` in `dir` holding `data`: embedded in
    /// its entry, or (embedding off) in the table, complete and durable
    /// before a reference in the entry names it.
    fn make(&mut self, dir: u64, name: &[u8], mode: u32, data: &[u8]) -> Result<u64> {
        check_name(name)?;
        self.writable_dir(dir)?;
        if self.lookup_in(dir, name)?.is_some() {
            return Err(Errno::Exist);
        }
        let c = self.xn.cred();
        let now = self.now;
        let ino = self.new_ino()?;
        let inode = Inode {
            kind: E_INODE,
            mode,
            ino,
            uid: c.uid,
            gid: c.gid,
            nlink: 1,
            atime: now,
            mtime: now,
            ctime: now,
            ..Inode::default()
        };
        if self.opts.embed {
            let loc = self.place(dir, span(name), None)?;
            let bytes = entry_bytes(&inode, name);
            self.xn.modify(&Self::put(loc, &bytes), &[], &[])?;
            self.locs.insert(ino, loc);
            if !data.is_empty() {
                self.write(ino, 0, data)?;
            }
        } else {
            let t = self.table_slot()?;
            let bytes = inode.encode(&[]);
            self.xn.modify(&[Change { block: t.block, off: t.off(), bytes: &bytes }], &[], &[])?;
            self.locs.insert(ino, t);
            if !data.is_empty() {
                self.write(ino, 0, data)?;
            }
            let blocks = self.file_blocks(ino, true)?;
            self.durable(&blocks)?;
            let loc = self.place(dir, span(name), None)?;
            let bytes = entry_bytes(&reference(&inode, t), name);
            self.xn.modify(&Self::put(loc, &bytes), &[], &[])?;
            self.locs.insert(ino, t);
        }
        if mode & S_IFMT == S_IFDIR {
            self.parents.insert(ino, dir);
        }
        self.touch(dir)?;
        Ok(ino)
    }

    /// Stamps a directory's modification time.
    fn touch(&mut self, dir: u64) -> Result<()> {
        let (loc, mut inode) = self.load(dir)?;
        self.stamp(&mut inode);
        self.set_inode(loc, &inode, &[], &[])
    }

    /// A free slot in the inode table (growing it by a block if full).
    fn table_slot(&mut self) -> Result<Loc> {
        let chain = self.table_blocks()?;
        for &b in &chain {
            let bytes = self.bytes(b)?;
            if let Some(e) = (1..=ENTRIES).find(|&e| bytes[e * ENTRY] == E_FREE) {
                return Ok(Loc { block: b, entry: e });
            }
        }
        let prev = chain.last().copied().unwrap_or(self.root);
        let (x, _) = self.find_free(prev, 1)?;
        self.xn.modify(
            &[Change { block: prev, off: Header::NEXT_AT, bytes: &x.to_le_bytes() }],
            &[(x, 1)],
            &[],
        )?;
        let mut data = [0u8; BLOCK];
        data[..ENTRY]
            .copy_from_slice(&Header { kind: KIND_ITABLE, mode: 0o777, ..Header::default() }.encode());
        self.xn.insert_new(Parent::Block(prev), x, &data)?;
        Ok(Loc { block: x, entry: 1 })
    }

    pub fn unlink(&mut self, dir: u64, name: &[u8]) -> Result<()> {
        self.writable_dir(dir)?;
        let d = self.lookup_in(dir, name)?.ok_or(Errno::NoEnt)?;
        if d.is_dir() {
            return Err(Errno::IsDir);
        }
        self.drop_name(&d, &[])?;
        self.touch(dir)
    }

    pub fn rmdir(&mut self, dir: u64, name: &[u8]) -> Result<()> {
        self.writable_dir(dir)?;
        let d = self.lookup_in(dir, name)?.ok_or(Errno::NoEnt)?;
        if !d.is_dir() {
            return Err(Errno::NotDir);
        }
        if !self.scan(d.ino)?.is_empty() {
            return Err(Errno::NotEmpty);
        }
        self.drop_name(&d, &[])?;
        self.parents.remove(&d.ino);
        self.touch(dir)
    }

    /// Removes the entry `d` (with `extra` changes in the same request),
    /// freeing an embedded inode's blocks with it; a reference drops the
    /// table inode's count, and the inode goes at zero.
    fn drop_name(&mut self, d: &Dirent, extra: &[Change]) -> Result<()> {
        let inode = self.inode_at(d.loc)?;
        let free = claims_of(&inode);
        let mut ch = Self::clear(d.loc, d.span());
        ch.extend_from_slice(extra);
        self.xn.modify(&ch, &[], &free)?;
        if d.kind == E_INODE {
            self.locs.remove(&d.ino);
            return Ok(());
        }
        let (tb, te) = inode.target();
        self.unref(Loc { block: tb, entry: te }, d.loc.block)
    }

    /// One reference (in block `from`) to the table inode at `t` is gone.
    fn unref(&mut self, t: Loc, from: u64) -> Result<()> {
        self.durable(&[from])?;
        let mut inode = self.inode_at(t)?;
        inode.nlink = inode.nlink.saturating_sub(1);
        if inode.nlink > 0 {
            inode.ctime = self.now;
            return self.set_inode(t, &inode, &[], &[]);
        }
        self.locs.remove(&inode.ino);
        let free = claims_of(&inode);
        self.xn.modify(&Self::clear(t, 1), &[], &free)?;
        Ok(())
    }

    pub fn link(&mut self, ino: u64, dir: u64, name: &[u8]) -> Result<()> {
        check_name(name)?;
        self.writable_dir(dir)?;
        let (loc, mut inode) = self.load(ino)?;
        if inode.is_dir() {
            return Err(Errno::Perm);
        }
        if self.lookup_in(dir, name)?.is_some() {
            return Err(Errno::Exist);
        }
        let t = if self.header(loc.block)?.kind == KIND_ITABLE {
            inode.nlink += 1;
            inode.ctime = self.now;
            self.set_inode(loc, &inode, &[], &[])?;
            loc
        } else {
            self.externalize(loc, inode)?
        };
        self.durable(&[t.block])?;
        let target = self.inode_at(t)?;
        let at = self.place(dir, span(name), None)?;
        let bytes = entry_bytes(&reference(&target, t), name);
        self.xn.modify(&Self::put(at, &bytes), &[], &[])?;
        self.touch(dir)
    }

    /// Moves the embedded inode at `loc` into the table, leaving a
    /// reference with its name; the inode starts with two links (the
    /// caller adds the second name).
    fn externalize(&mut self, loc: Loc, mut inode: Inode) -> Result<Loc> {
        let t = self.table_slot()?;
        self.set_intent(&intent(INTENT_EXTERNALIZE, loc, t, inode.ino))?;
        self.durable(&[self.root])?;
        inode.nlink = 2;
        inode.ctime = self.now;
        let moved = inode.encode(&[]);
        let r = with_name_of(reference(&inode, t).encode(&[]), &self.entry(loc)?);
        let ch = [
            Change { block: t.block, off: t.off(), bytes: &moved },
            Change { block: loc.block, off: loc.off(), bytes: &r },
        ];
        self.xn.modify(&ch, &[], &[])?;
        self.durable(&[t.block])?;
        self.durable(&[loc.block])?;
        self.set_intent(&Intent::default())?;
        self.locs.insert(inode.ino, t);
        Ok(t)
    }

    pub fn rename(&mut self, d1: u64, n1: &[u8], d2: u64, n2: &[u8]) -> Result<()> {
        check_name(n1)?;
        check_name(n2)?;
        self.writable_dir(d1)?;
        self.writable_dir(d2)?;
        let src = self.lookup_in(d1, n1)?.ok_or(Errno::NoEnt)?;
        let victim = self.lookup_in(d2, n2)?;
        if src.is_dir() {
            let mut p = d2;
            for _ in 0..=self.parents.len() {
                if p == src.ino {
                    return Err(Errno::Inval);
                }
                if p == ROOT_INO {
                    break;
                }
                p = *self.parents.get(&p).unwrap_or(&ROOT_INO);
            }
        }
        if let Some(v) = &victim {
            if v.ino == src.ino {
                return Ok(());
            }
            match (src.is_dir(), v.is_dir()) {
                (true, false) => return Err(Errno::NotDir),
                (false, true) => return Err(Errno::IsDir),
                (true, true) if !self.scan(v.ino)?.is_empty() => return Err(Errno::NotEmpty),
                _ => {}
            }
        }
        let entry = self.inode_at(src.loc)?;
        let bytes = entry_bytes(&entry, n2);
        // The new name goes where the victim was if it fits, else next to
        // the old name when both are in one directory.
        let to = match &victim {
            Some(v) if v.span() >= span(n2) => v.loc,
            _ => self.place(d2, span(n2), (d1 == d2).then_some(src.loc.block))?,
        };
        let mut ch: Vec<Change> = Vec::new();
        let mut free = Vec::new();
        let mut victim_ref = None;
        if let Some(v) = &victim {
            let vi = self.inode_at(v.loc)?;
            free = claims_of(&vi);
            if v.kind == E_REF {
                victim_ref = Some(vi.target());
            }
            ch.extend(Self::clear(v.loc, v.span()));
        }
        let src_clear = Self::clear(src.loc, src.span());
        if to.block == src.loc.block || victim.as_ref().is_some_and(|v| v.loc.block != to.block) {
            // One block (or, rarely, three): one request.
            ch.extend(src_clear);
            ch.extend(Self::put(to, &bytes));
            self.xn.modify(&ch, &[], &free)?;
        } else {
            self.move_entry(src.loc, src_clear, to, &bytes, ch, &free, entry.ino)?;
        }
        if src.kind == E_INODE {
            self.locs.insert(src.ino, to);
        }
        if let Some(v) = &victim {
            self.locs.remove(&v.ino);
        }
        if let Some((tb, te)) = victim_ref {
            self.unref(Loc { block: tb, entry: te }, to.block)?;
        }
        if src.is_dir() {
            self.parents.insert(src.ino, d2);
        }
        self.touch(d1)?;
        if d2 != d1 {
            self.touch(d2)?;
        }
        Ok(())
    }

    /// A rename between two entry blocks: intent (durable), then one XN
    /// request moving the entry, then the new block durably before the
    /// old one is written.
    #[allow(clippy::too_many_arguments)]
    fn move_entry<'a>(
        &mut self,
        from: Loc,
        clear: Vec<Change<'static>>,
        to: Loc,
        bytes: &'a ([u8; ENTRY], Option<[u8; ENTRY]>),
        mut ch: Vec<Change<'a>>,
        free: &[(u64, u64)],
        ino: u64,
    ) -> Result<()> {
        if !self.seeded_bug {
            self.set_intent(&intent(INTENT_MOVE, from, to, ino))?;
            self.durable(&[self.root])?;
        }
        ch.extend(Self::put(to, bytes));
        ch.extend(clear);
        self.xn.modify(&ch, &[], free)?;
        if self.seeded_bug {
            self.durable(&[from.block])?;
            return self.durable(&[to.block]);
        }
        self.durable(&[to.block])?;
        self.durable(&[from.block])?;
        self.set_intent(&Intent::default())
    }

    /// Finishes a move a crash interrupted: if the entry reached B, the
    /// copy at A goes (a reference takes its place for an
    /// externalisation); if not, A still holds it and nothing is done.
    pub(crate) fn finish_intent(&mut self, i: Intent) -> Result<()> {
        let ok = |b: u64, e: u32| (1..=ENTRIES as u32).contains(&e) && b != 0;
        if !ok(i.a_block, i.a_entry) || !ok(i.b_block, i.b_entry) || i.kind > INTENT_EXTERNALIZE {
            return Err(Errno::Corrupt("malformed rename intent"));
        }
        let a = Loc { block: i.a_block, entry: i.a_entry as usize };
        let b = Loc { block: i.b_block, entry: i.b_entry as usize };
        if self.xn.claims(a.block).is_none() || self.xn.claims(b.block).is_none() {
            return Err(Errno::Corrupt("rename intent names a block that is not an entry block"));
        }
        let (ia, ib) = (self.inode_at(a)?, self.inode_at(b)?);
        let live = |x: &Inode| (x.kind == E_INODE || x.kind == E_REF) && x.ino == i.ino;
        let arrived = live(&ib);
        let still = ia.kind == E_INODE && ia.ino == i.ino || i.kind == INTENT_MOVE && live(&ia);
        if arrived && still && i.kind != INTENT_NONE {
            let free = claims_of(&ia);
            if i.kind == INTENT_MOVE {
                let span = if name_len(&self.entry(a)?) > NAME_INLINE { 2 } else { 1 };
                self.xn.modify(&Self::clear(a, span), &[], &free)?;
            } else {
                let r = with_name_of(reference(&ib, b).encode(&[]), &self.entry(a)?);
                self.xn.modify(&[Change { block: a.block, off: a.off(), bytes: &r }], &[], &free)?;
            }
            self.durable(&[a.block])?;
        }
        self.set_intent(&Intent::default())?;
        self.durable(&[self.root])
    }

    /// Changes owner, group and permission bits (keeping the copies in
    /// the directory's blocks and the extent blocks, which `acl` reads).
    pub fn setattr(&mut self, ino: u64, mode: Option<u32>, owner: Option<(u32, u32)>) -> Result<()> {
        let (loc, mut inode) = self.load(ino)?;
        let c = self.xn.cred();
        if c.uid != 0 && (c.uid != inode.uid || owner.is_some_and(|(u, _)| u != inode.uid)) {
            return Err(Errno::Perm);
        }
        if let Some(m) = mode {
            let m = (inode.mode & S_IFMT) | (m & 0o7777);
            // A private file's bytes leave its entry before it turns private.
            if inode.is_inline() && !may_inline(m) {
                self.move_out(loc, &mut inode)?;
            }
            inode.mode = m;
        }
        if let Some((u, g)) = owner {
            (inode.uid, inode.gid) = (u, g);
        }
        inode.ctime = self.now;
        self.set_inode(loc, &inode, &[], &[])?;
        let map = self.map(loc, &inode)?;
        let copy = [inode.uid, inode.gid, inode.mode];
        let bytes: Vec<u8> = copy.iter().flat_map(|v| v.to_le_bytes()).collect();
        for x in map.chain {
            self.xn.modify(&[Change { block: x, off: 16, bytes: &bytes }], &[], &[])?;
        }
        if inode.is_dir() {
            for b in self.dir_blocks(loc, &inode)? {
                self.xn.modify(&[Change { block: b, off: 8, bytes: &bytes }], &[], &[])?;
            }
        }
        Ok(())
    }

    /// Sets access and modification times (the owner's right).
    pub fn utimes(&mut self, ino: u64, atime: i64, mtime: i64) -> Result<()> {
        let (loc, mut inode) = self.load(ino)?;
        let c = self.xn.cred();
        if c.uid != 0 && c.uid != inode.uid {
            return Err(Errno::Perm);
        }
        (inode.atime, inode.mtime, inode.ctime) = (atime, mtime, self.now);
        self.set_inode(loc, &inode, &[], &[])
    }
}
