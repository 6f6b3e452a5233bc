//! C-FFS's on-disk format (see `udf/cffs.c`, which must agree).
//!
//! Entry blocks (template `cffs.meta`) are 16 slots of 256 bytes: slot 0
//! the header, slots 1..=15 entries. An entry is a directory entry with
//! the inode it names embedded in it (Ganger and Kaashoek's embedded
//! inodes), a reference to an inode in the inode table (hard links; every
//! file when embedding is off), or the tail of a long name.

use crate::Errno;

pub const ENTRY: usize = 256;
pub const ENTRIES: usize = 15;
pub const NAME_AT: usize = 136;
pub const NAME_INLINE: usize = ENTRY - NAME_AT;
pub const NAME_MAX: usize = 255;
/// Bytes of file data an entry holds in place of its extents.
pub const INLINE_MAX: usize = NAME_AT - 64;

/// May a file of `mode` keep its bytes in its entry (`F_INLINE`)? Only if
/// everyone may read it: anyone who may search the directory binds the
/// entry's block (`meta.acl`), so a private file's bytes there would be
/// anyone's.
pub fn may_inline(mode: u32) -> bool {
    mode & 0o444 == 0o444
}
pub const EXTENTS: usize = 4;
/// Extents in one extent block, and where the first sits.
pub const EXT_PER_BLOCK: usize = 254;
pub const EXT_AT: usize = 32;

pub const MAGIC: u32 = 0x5346_4643; // "CFFS"
pub const EXT_MAGIC: u32 = 0x5845_4643; // "CFEX"
pub const KIND_ROOT: u32 = 1;
pub const KIND_DIR: u32 = 2;
pub const KIND_ITABLE: u32 = 3;

pub const E_FREE: u8 = 0;
pub const E_INODE: u8 = 1;
pub const E_REF: u8 = 2;
pub const E_CONT: u8 = 3;

pub const F_INLINE: u16 = 1;
/// Root header flags.
pub const R_NO_EMBED: u32 = 1;
pub const R_NO_GROUP: u32 = 2;

pub const S_IFMT: u32 = 0o170000;
pub const S_IFREG: u32 = 0o100000;
pub const S_IFDIR: u32 = 0o040000;
pub const S_IFLNK: u32 = 0o120000;

pub const INTENT_NONE: u32 = 0;
/// Move the entry at A to B (a rename between blocks).
pub const INTENT_MOVE: u32 = 1;
/// Move the inode at A to the table slot B, leaving a reference at A.
pub const INTENT_EXTERNALIZE: u32 = 2;

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}
fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}
fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut x = [0u8; 8];
    x.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(x)
}
fn put(b: &mut [u8], at: usize, v: &[u8]) {
    b[at..at + v.len()].copy_from_slice(v);
}

/// A run of a file's blocks: `count` disk blocks from `start` hold file
/// blocks from `fblock`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Extent {
    pub start: u64,
    pub count: u32,
    pub fblock: u32,
}

impl Extent {
    pub fn decode(b: &[u8]) -> Extent {
        Extent { start: u64_at(b, 0), count: u32_at(b, 8), fblock: u32_at(b, 12) }
    }
    pub fn encode(&self) -> [u8; 16] {
        let mut x = [0u8; 16];
        put(&mut x, 0, &self.start.to_le_bytes());
        put(&mut x, 8, &self.count.to_le_bytes());
        put(&mut x, 12, &self.fblock.to_le_bytes());
        x
    }
    pub fn is_empty(&self) -> bool {
        self.start == 0
    }
    pub fn end(&self) -> u64 {
        u64::from(self.fblock) + u64::from(self.count)
    }
    /// The disk block holding file block `f`, if this extent maps it.
    pub fn map(&self, f: u64) -> Option<u64> {
        (!self.is_empty() && f >= u64::from(self.fblock) && f < self.end())
            .then(|| self.start + (f - u64::from(self.fblock)))
    }
}

/// The pending rename or externalisation (root header bytes 48..96).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Intent {
    pub kind: u32,
    pub a_block: u64,
    pub a_entry: u32,
    pub b_block: u64,
    pub b_entry: u32,
    pub ino: u64,
}

impl Intent {
    pub const AT: usize = 48;
    pub fn encode(&self) -> [u8; 48] {
        let mut x = [0u8; 48];
        put(&mut x, 0, &self.kind.to_le_bytes());
        put(&mut x, 4, &self.a_entry.to_le_bytes());
        put(&mut x, 8, &self.b_entry.to_le_bytes());
        put(&mut x, 16, &self.a_block.to_le_bytes());
        put(&mut x, 24, &self.b_block.to_le_bytes());
        put(&mut x, 32, &self.ino.to_le_bytes());
        x
    }
    pub fn decode(b: &[u8]) -> Intent {
        Intent {
            kind: u32_at(b, 0),
            a_entry: u32_at(b, 4),
            b_entry: u32_at(b, 8),
            a_block: u64_at(b, 16),
            b_block: u64_at(b, 24),
            ino: u64_at(b, 32),
        }
    }
}

/// An entry block's header.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Header {
    pub kind: u32,
    /// The directory's owner and permissions (copied for `acl`).
    pub uid: u32,
    pub gid: u32,
    pub mode: u32,
    pub flags: u32,
    /// The inode table chain: the root names the first table block, each
    /// table block the next.
    pub next: u64,
    /// Root: the next unused inode number.
    pub counter: u64,
    pub intent: Intent,
}

impl Header {
    pub const COUNTER_AT: usize = 32;
    pub const NEXT_AT: usize = 24;
    pub fn encode(&self) -> [u8; ENTRY] {
        let mut x = [0u8; ENTRY];
        for (i, v) in [MAGIC, self.kind, self.uid, self.gid, self.mode, self.flags].iter().enumerate() {
            put(&mut x, 4 * i, &v.to_le_bytes());
        }
        put(&mut x, Self::NEXT_AT, &self.next.to_le_bytes());
        put(&mut x, Self::COUNTER_AT, &self.counter.to_le_bytes());
        put(&mut x, Intent::AT, &self.intent.encode());
        x
    }
    pub fn decode(b: &[u8]) -> Result<Header, Errno> {
        if u32_at(b, 0) != MAGIC {
            return Err(Errno::Corrupt("entry block without its magic"));
        }
        let kind = u32_at(b, 4);
        if !(KIND_ROOT..=KIND_ITABLE).contains(&kind) {
            return Err(Errno::Corrupt("entry block of unknown kind"));
        }
        Ok(Header {
            kind,
            uid: u32_at(b, 8),
            gid: u32_at(b, 12),
            mode: u32_at(b, 16),
            flags: u32_at(b, 20),
            next: u64_at(b, Self::NEXT_AT),
            counter: u64_at(b, Self::COUNTER_AT),
            intent: Intent::decode(&b[Intent::AT..Intent::AT + 48]),
        })
    }
}

/// An extent block's header.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExtHead {
    pub dir: bool,
    pub next: u64,
    pub uid: u32,
    pub gid: u32,
    pub mode: u32,
}

impl ExtHead {
    pub fn encode(&self) -> [u8; EXT_AT] {
        let mut x = [0u8; EXT_AT];
        put(&mut x, 0, &EXT_MAGIC.to_le_bytes());
        put(&mut x, 4, &u32::from(self.dir).to_le_bytes());
        put(&mut x, 8, &self.next.to_le_bytes());
        put(&mut x, 16, &self.uid.to_le_bytes());
        put(&mut x, 20, &self.gid.to_le_bytes());
        put(&mut x, 24, &self.mode.to_le_bytes());
        x
    }
    pub fn decode(b: &[u8]) -> Result<ExtHead, Errno> {
        if u32_at(b, 0) != EXT_MAGIC || u32_at(b, 4) > 1 {
            return Err(Errno::Corrupt("extent block without its magic"));
        }
        Ok(ExtHead {
            dir: u32_at(b, 4) == 1,
            next: u64_at(b, 8),
            uid: u32_at(b, 16),
            gid: u32_at(b, 20),
            mode: u32_at(b, 24),
        })
    }
}

/// One entry's inode (for `E_REF`, only `ino`, `mode` and the reference).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Inode {
    pub kind: u8,
    pub flags: u16,
    pub mode: u32,
    pub ino: u64,
    pub uid: u32,
    pub gid: u32,
    pub nlink: u32,
    pub size: u64,
    pub atime: i64,
    pub mtime: i64,
    pub ctime: i64,
    pub ext: [Extent; EXTENTS],
    pub ext_block: u64,
    /// Inline data (`F_INLINE`), in place of the extents.
    pub inline: [u8; INLINE_MAX],
}

impl Default for Inode {
    fn default() -> Inode {
        Inode {
            kind: 0,
            flags: 0,
            mode: 0,
            ino: 0,
            uid: 0,
            gid: 0,
            nlink: 0,
            size: 0,
            atime: 0,
            mtime: 0,
            ctime: 0,
            ext: [Extent::default(); EXTENTS],
            ext_block: 0,
            inline: [0; INLINE_MAX],
        }
    }
}

impl Inode {
    pub fn is_dir(&self) -> bool {
        self.mode & S_IFMT == S_IFDIR
    }
    pub fn is_inline(&self) -> bool {
        self.flags & F_INLINE != 0
    }
    /// A reference's target: table block and entry.
    pub fn target(&self) -> (u64, usize) {
        (self.ext[0].start, self.ext[0].count as usize)
    }

    /// The entry's 256 bytes, with `name` (the first `NAME_INLINE` bytes
    /// of it; `name_len` is the whole name's length).
    pub fn encode(&self, name: &[u8]) -> [u8; ENTRY] {
        let mut x = [0u8; ENTRY];
        x[0] = self.kind;
        x[1] = name.len() as u8;
        put(&mut x, 2, &self.flags.to_le_bytes());
        put(&mut x, 4, &self.mode.to_le_bytes());
        put(&mut x, 8, &self.ino.to_le_bytes());
        for (i, v) in [self.uid, self.gid, self.nlink, 0].iter().enumerate() {
            put(&mut x, 16 + 4 * i, &v.to_le_bytes());
        }
        put(&mut x, 32, &self.size.to_le_bytes());
        for (i, t) in [self.atime, self.mtime, self.ctime].iter().enumerate() {
            put(&mut x, 40 + 8 * i, &t.to_le_bytes());
        }
        if self.is_inline() {
            put(&mut x, 64, &self.inline);
        } else {
            for (i, e) in self.ext.iter().enumerate() {
                put(&mut x, 64 + 16 * i, &e.encode());
            }
            put(&mut x, 128, &self.ext_block.to_le_bytes());
        }
        let n = name.len().min(ENTRY - NAME_AT);
        put(&mut x, NAME_AT, &name[..n]);
        x
    }

    pub fn decode(b: &[u8]) -> Inode {
        let mut ext = [Extent::default(); EXTENTS];
        for (i, e) in ext.iter_mut().enumerate() {
            *e = Extent::decode(&b[64 + 16 * i..80 + 16 * i]);
        }
        let mut inline = [0u8; INLINE_MAX];
        inline.copy_from_slice(&b[64..NAME_AT]);
        Inode {
            kind: b[0],
            flags: u16_at(b, 2),
            mode: u32_at(b, 4),
            ino: u64_at(b, 8),
            uid: u32_at(b, 16),
            gid: u32_at(b, 20),
            nlink: u32_at(b, 24),
            size: u64_at(b, 32),
            atime: u64_at(b, 40) as i64,
            mtime: u64_at(b, 48) as i64,
            ctime: u64_at(b, 56) as i64,
            ext,
            ext_block: u64_at(b, 128),
            inline,
        }
    }
}

/// `new` entry bytes carrying `old`'s name (its length and bytes).
pub fn with_name_of(mut new: [u8; ENTRY], old: &[u8]) -> [u8; ENTRY] {
    new[1] = old[1];
    new[NAME_AT..].copy_from_slice(&old[NAME_AT..ENTRY]);
    new
}

/// The entry's name length (byte 1).
pub fn name_len(entry: &[u8]) -> usize {
    usize::from(entry[1])
}
