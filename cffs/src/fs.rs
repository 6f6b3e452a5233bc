//! The file system's state and its building blocks: making and mounting a
//! C-FFS, finding and changing inodes, allocating blocks.

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::vec::Vec;

use xn::{Change, Parent, Tid};

use crate::client::XnClient;
use crate::format::{
    Header, Inode, Intent, ENTRIES, ENTRY, E_INODE, KIND_ROOT, R_NO_EMBED, R_NO_GROUP, S_IFDIR,
};
use crate::{templates, Errno, Result, BLOCK};

/// The root directory's inode number.
pub const ROOT_INO: u64 = 1;
/// The XN root catalogue name of C-FFS's root block.
pub const ROOT_NAME: &str = "cffs";
/// Inode numbers taken from the root's counter at a time.
const INO_BATCH: u64 = 64;
/// File blocks of a "small" file: these are grouped with the directory.
pub const SMALL_BLOCKS: u64 = 16;
/// Most blocks read in one request by explicit grouping.
pub const GROUP_READ: u64 = 64;
/// Blocks set aside after a new directory block for its small files.
pub const GROUP: u64 = 128;

/// Where an entry is: its entry block and index (1..=15).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Loc {
    pub block: u64,
    pub entry: usize,
}

impl Loc {
    pub fn off(&self) -> usize {
        self.entry * ENTRY
    }
}

/// Layout switches (the small-file comparison turns both off).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// Inodes embedded in directory entries (off: every inode in the
    /// inode table, named by references, as in FFS).
    pub embed: bool,
    /// Small files' blocks placed next to their directory and read with
    /// it (off: every block from one moving cursor, read one by one).
    pub group: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options { embed: true, group: true }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stat {
    pub ino: u64,
    pub mode: u32,
    pub nlink: u32,
    pub uid: u32,
    pub gid: u32,
    pub size: u64,
    /// 512-byte units allocated.
    pub blocks: u64,
    pub atime: i64,
    pub mtime: i64,
    pub ctime: i64,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StatFs {
    pub bsize: u64,
    pub blocks: u64,
    pub bfree: u64,
    pub namemax: u64,
}

pub struct Fs<C: XnClient> {
    pub xn: C,
    pub(crate) root: u64,
    pub(crate) root_index: usize,
    pub(crate) tid_data: Tid,
    pub(crate) opts: Options,
    /// Where each inode met so far lives (the table slot for references).
    pub(crate) locs: BTreeMap<u64, Loc>,
    /// Each directory met so far: its parent (for `..` and loop checks).
    pub(crate) parents: BTreeMap<u64, u64>,
    pub(crate) ino_next: u64,
    pub(crate) ino_end: u64,
    /// Files whose size or blocks changed since their last fsync.
    pub(crate) grown: BTreeSet<u64>,
    pub(crate) cursor: u64,
    pub(crate) now: i64,
    /// Test only: rename writes the old name's block first and keeps no
    /// intent (the ordering bug the crash checker must catch).
    pub seeded_bug: bool,
}

impl<C: XnClient> Fs<C> {
    /// Makes a C-FFS on an XN disk: installs the templates (once per disk)
    /// and adds the root block with an empty root directory.
    pub fn mkfs(mut xn: C, opts: Options, now: i64) -> Result<Fs<C>> {
        let base = match xn.template_id("cffs.meta") {
            Some(t) => t,
            None => xn.install(&templates::specs().map_err(|_| Errno::Corrupt("UDF object"))?)?,
        };
        let block = (xn::RESERVED..xn.nblocks()).find(|&b| xn.is_free(b)).ok_or(Errno::NoSpace)?;
        let mut data = [0u8; BLOCK];
        let flags = if opts.embed { 0 } else { R_NO_EMBED } | if opts.group { 0 } else { R_NO_GROUP };
        let head = Header {
            kind: KIND_ROOT,
            uid: 0,
            gid: 0,
            mode: 0o755,
            flags,
            counter: ROOT_INO + 1,
            ..Header::default()
        };
        data[..ENTRY].copy_from_slice(&head.encode());
        let root = Inode {
            kind: E_INODE,
            mode: S_IFDIR | 0o755,
            ino: ROOT_INO,
            nlink: 1,
            atime: now,
            mtime: now,
            ctime: now,
            ..Inode::default()
        };
        data[ENTRY..2 * ENTRY].copy_from_slice(&root.encode(&[]));
        xn.add_root(ROOT_NAME, block, base + templates::META, &data)?;
        let mut fs = Fs::mount(xn)?;
        fs.now = now;
        Ok(fs)
    }

    /// Mounts the C-FFS of an XN disk (XN has rebuilt its free map) and
    /// recovers: finishes or undoes an interrupted rename, then checks
    /// that no block is claimed twice.
    pub fn mount(xn: C) -> Result<Fs<C>> {
        Fs::open(xn, true)
    }

    /// Opens without recovery (nothing is written): what `fsck` looks at.
    pub fn open(xn: C, recover: bool) -> Result<Fs<C>> {
        let (index, r) = xn.root(ROOT_NAME).ok_or(Errno::Corrupt("no C-FFS root"))?;
        let meta = xn.template_id("cffs.meta").ok_or(Errno::Corrupt("C-FFS templates missing"))?;
        if r.tid != meta + templates::META || r.count != 1 {
            return Err(Errno::Corrupt("C-FFS root of the wrong type"));
        }
        let mut fs = Fs {
            xn,
            root: r.start,
            root_index: index,
            tid_data: meta + templates::DATA,
            opts: Options::default(),
            locs: BTreeMap::new(),
            parents: BTreeMap::new(),
            ino_next: 0,
            ino_end: 0,
            grown: BTreeSet::new(),
            cursor: 0,
            now: 0,
            seeded_bug: false,
        };
        fs.ensure(fs.root)?;
        let head = fs.header(fs.root)?;
        if head.kind != KIND_ROOT {
            return Err(Errno::Corrupt("C-FFS root block is not a root"));
        }
        fs.opts = Options { embed: head.flags & R_NO_EMBED == 0, group: head.flags & R_NO_GROUP == 0 };
        fs.locs.insert(ROOT_INO, Loc { block: fs.root, entry: 1 });
        fs.parents.insert(ROOT_INO, ROOT_INO);
        if !fs.load(ROOT_INO).is_ok_and(|(_, i)| i.is_dir()) {
            return Err(Errno::Corrupt("no root directory in the root block"));
        }
        fs.cursor = fs.root;
        if recover {
            if !fs.xn.shared_blocks().is_empty() {
                // Interrupted moves are resolved first; what remains is damage.
                let intent = fs.header(fs.root)?.intent;
                if intent.kind != 0 {
                    fs.finish_intent(intent)?;
                }
                if !fs.xn.shared_blocks().is_empty() {
                    return Err(Errno::Corrupt("a block is claimed twice"));
                }
            }
            // A name that is not where the tree says is damage here.
            fs.recover().map_err(|e| match e {
                Errno::Xn(_) | Errno::Corrupt(_) => e,
                _ => Errno::Corrupt("the directory tree is damaged"),
            })?;
        }
        Ok(fs)
    }

    pub fn options(&self) -> Options {
        self.opts
    }

    /// Sets the clock the file system stamps times with (ns since 1970).
    pub fn set_time(&mut self, now: i64) {
        self.now = now;
    }

    /// Where an inode met so far lives.
    pub fn location(&self, ino: u64) -> Option<Loc> {
        self.locs.get(&ino).copied()
    }

    /// Takes `loc` as where inode `ino` lives if the entry there is that
    /// inode (another process of the library OS saw it there and left the
    /// place in their shared state). A place that names another inode, or
    /// no entry at all, is refused and what was remembered stays. The
    /// check is the library's: a forged place could still name bytes that
    /// look like inode `ino` (a file's data block), but XN binds no block
    /// through a block that does not claim it.
    pub fn recall(&mut self, ino: u64, loc: Loc) -> bool {
        let valid = (1..=ENTRIES).contains(&loc.entry) && loc.block < self.xn.nblocks();
        if !valid {
            return false;
        }
        let old = self.locs.insert(ino, loc);
        if self.load(ino).is_ok() {
            return true;
        }
        match old {
            Some(l) => self.locs.insert(ino, l),
            None => self.locs.remove(&ino),
        };
        false
    }

    pub fn root_block(&self) -> u64 {
        self.root
    }

    /// Makes sure a metadata block is cached, and its ancestors first
    /// (XN knows every metadata block's parent, and reads a block only
    /// through it).
    pub(crate) fn ensure(&mut self, b: u64) -> Result<()> {
        let mut chain = Vec::new();
        let mut x = b;
        while !self.xn.cached(x) {
            if chain.len() as u64 > self.xn.nblocks() {
                return Err(Errno::Corrupt("metadata parents loop"));
            }
            let parent = if x == self.root {
                Parent::Root(self.root_index)
            } else {
                self.xn.parent(x).ok_or(Errno::Corrupt("metadata block with no parent"))?
            };
            chain.push((x, parent));
            match parent {
                Parent::Block(p) => x = p,
                Parent::Root(_) => break,
            }
        }
        for (x, parent) in chain.into_iter().rev() {
            self.xn.read(parent, x, 1)?;
        }
        Ok(())
    }

    pub(crate) fn bytes(&mut self, b: u64) -> Result<&[u8; BLOCK]> {
        self.ensure(b)?;
        Ok(self.xn.block(b)?)
    }

    pub(crate) fn header(&mut self, b: u64) -> Result<Header> {
        Header::decode(&self.bytes(b)?[..ENTRY])
    }

    pub(crate) fn entry(&mut self, loc: Loc) -> Result<[u8; ENTRY]> {
        let mut e = [0u8; ENTRY];
        e.copy_from_slice(&self.bytes(loc.block)?[loc.off()..loc.off() + ENTRY]);
        Ok(e)
    }

    pub(crate) fn inode_at(&mut self, loc: Loc) -> Result<Inode> {
        Ok(Inode::decode(&self.entry(loc)?))
    }

    /// An inode met before, by number.
    pub(crate) fn load(&mut self, ino: u64) -> Result<(Loc, Inode)> {
        let loc = *self.locs.get(&ino).ok_or(Errno::NoEnt)?;
        let inode = self.inode_at(loc)?;
        if inode.kind != E_INODE || inode.ino != ino {
            return Err(Errno::NoEnt);
        }
        Ok((loc, inode))
    }

    /// Rewrites the inode fields of the entry at `loc` (its name stays),
    /// declaring what the change allocates and frees.
    pub(crate) fn set_inode(
        &mut self,
        loc: Loc,
        inode: &Inode,
        alloc: &[(u64, u64)],
        free: &[(u64, u64)],
    ) -> Result<()> {
        let new = crate::format::with_name_of(inode.encode(&[]), &self.entry(loc)?);
        Ok(self.xn.modify(&[Change { block: loc.block, off: loc.off(), bytes: &new }], alloc, free)?)
    }

    /// A fresh inode number (the root's counter, taken in batches).
    pub(crate) fn new_ino(&mut self) -> Result<u64> {
        if self.ino_next == self.ino_end {
            let start = self.header(self.root)?.counter;
            let end = start.checked_add(INO_BATCH).ok_or(Errno::NoSpace)?;
            let ch = Change { block: self.root, off: Header::COUNTER_AT, bytes: &end.to_le_bytes() };
            self.xn.modify(&[ch], &[], &[])?;
            (self.ino_next, self.ino_end) = (start, end);
        }
        self.ino_next += 1;
        Ok(self.ino_next - 1)
    }

    /// A run of up to `want` free blocks, searching from `goal`.
    pub(crate) fn find_free(&self, goal: u64, want: u64) -> Result<(u64, u64)> {
        let n = self.xn.nblocks();
        let goal = goal.clamp(xn::RESERVED, n - 1);
        let first =
            (goal..n).chain(xn::RESERVED..goal).find(|&b| self.xn.is_free(b)).ok_or(Errno::NoSpace)?;
        let mut count = 1;
        while count < want && first + count < n && self.xn.is_free(first + count) {
            count += 1;
        }
        Ok((first, count))
    }

    /// Where to allocate a block of file block `fblock` of the inode at
    /// `loc`. With grouping, a directory block starts a fresh group (a
    /// free run of `GROUP` blocks) and small files go right after their
    /// directory's block, so one request reads a directory's small files;
    /// otherwise everything comes from the moving cursor.
    pub(crate) fn goal(&mut self, loc: Loc, fblock: u64, dir: bool) -> u64 {
        if !self.opts.group {
            return self.cursor;
        }
        if dir {
            let start = self.find_run(self.cursor, GROUP).unwrap_or(self.cursor);
            self.cursor = start + GROUP;
            return start;
        }
        if fblock < SMALL_BLOCKS {
            loc.block
        } else {
            self.cursor
        }
    }

    /// The first block of a run of `n` free blocks at or after `goal`
    /// (wrapping around once).
    fn find_run(&self, goal: u64, n: u64) -> Option<u64> {
        let end = self.xn.nblocks();
        let mut b = goal.clamp(xn::RESERVED, end);
        let mut wrapped = false;
        loop {
            if b + n > end {
                if wrapped {
                    return None;
                }
                (b, wrapped) = (xn::RESERVED, true);
                continue;
            }
            match (b..b + n).find(|&x| !self.xn.is_free(x)) {
                None => return Some(b),
                Some(used) => b = used + 1,
            }
            if wrapped && b >= goal {
                return None;
            }
        }
    }

    /// Is the caller allowed `want` (4 read, 2 write, 1 search) on an
    /// inode?
    pub(crate) fn allowed(&self, inode: &Inode, want: u32) -> bool {
        let c = self.xn.cred();
        if c.uid == 0 {
            return true;
        }
        let bits = if c.uid == inode.uid {
            inode.mode >> 6
        } else if c.gid == inode.gid || c.groups().contains(&inode.gid) {
            inode.mode >> 3
        } else {
            inode.mode
        };
        bits & want == want
    }

    pub(crate) fn stamp(&self, inode: &mut Inode) {
        inode.mtime = self.now;
        inode.ctime = self.now;
    }

    /// Sets the pending intent in the root header.
    pub(crate) fn set_intent(&mut self, intent: &Intent) -> Result<()> {
        let bytes = intent.encode();
        Ok(self.xn.modify(&[Change { block: self.root, off: Intent::AT, bytes: &bytes }], &[], &[])?)
    }

    pub fn statfs(&self) -> StatFs {
        let n = self.xn.nblocks();
        let bfree = (xn::RESERVED..n).filter(|&b| self.xn.is_free(b)).count() as u64;
        StatFs { bsize: BLOCK as u64, blocks: n, bfree, namemax: crate::format::NAME_MAX as u64 }
    }
}
