//! XN's own blocks: the superblock (block 0: geometry, the root catalogue)
//! and the type catalogue (blocks 1..=CATALOGUE_BLOCKS: every installed
//! template, immutable, appended in install order). Everything read from
//! disk is checked field by field; a checksum catches torn or flipped
//! bits.

use alloc::string::String;
use alloc::vec::Vec;

use bpf::Insn;

use crate::error::{Error, TemplateError};
use crate::udf::{valid_name, Template, TemplateSpec, MAX_SLOTS, MAX_UDF_INSNS};
use crate::{Tid, BLOCK, CATALOGUE_BLOCKS, RESERVED};

const MAGIC: &[u8; 8] = b"VENEERXN";
const VERSION: u32 = 1;
const ROOTS_AT: usize = 64;
const ROOT_SIZE: usize = 64;
/// Most entries in the root catalogue.
pub const MAX_ROOTS: usize = (BLOCK - ROOTS_AT) / ROOT_SIZE;
const RECORD_MAGIC: u32 = 0x5054_4e58; // "XNTP"
const RECORD_HEAD: usize = 64;
/// Bytes of catalogue space.
pub const CATALOGUE_BYTES: usize = CATALOGUE_BLOCKS as usize * BLOCK;

/// A root catalogue entry (paper 000 §4.4): a named extent and its
/// template, from which the free map is rebuilt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Root {
    pub name: String,
    pub start: u64,
    pub count: u64,
    pub tid: Tid,
    /// Temporary roots are not written to disk: no ordering rules apply
    /// below them, and they are gone after a reboot (paper 000 §4.3.2).
    pub persistent: bool,
}

/// The superblock's contents.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Super {
    pub nblocks: u64,
    pub ntemplates: u32,
    pub catalogue_bytes: u32,
    pub roots: Vec<Root>,
}

/// FNV-1a, to notice damage (not an adversary: protection comes from the
/// checks, not the sum).
pub fn checksum(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5u32, |h, &b| (h ^ u32::from(b)).wrapping_mul(0x0100_0193))
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}
fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap_or_default())
}
fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap_or_default())
}

fn name_at(b: &[u8]) -> Option<String> {
    let len = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    let s = core::str::from_utf8(&b[..len]).ok()?;
    (valid_name(s) && b[len..].iter().all(|&c| c == 0)).then(|| String::from(s))
}

fn put_name(b: &mut [u8], name: &str) {
    b.fill(0);
    b[..name.len()].copy_from_slice(name.as_bytes());
}

impl Super {
    pub fn encode(&self) -> [u8; BLOCK] {
        let mut b = [0u8; BLOCK];
        b[0..8].copy_from_slice(MAGIC);
        b[8..12].copy_from_slice(&VERSION.to_le_bytes());
        b[12..16].copy_from_slice(&(BLOCK as u32).to_le_bytes());
        b[16..24].copy_from_slice(&self.nblocks.to_le_bytes());
        b[24..28].copy_from_slice(&self.ntemplates.to_le_bytes());
        b[28..32].copy_from_slice(&self.catalogue_bytes.to_le_bytes());
        let persistent: Vec<&Root> = self.roots.iter().filter(|r| r.persistent).collect();
        b[32..36].copy_from_slice(&(persistent.len() as u32).to_le_bytes());
        for (i, r) in persistent.iter().enumerate() {
            let e = &mut b[ROOTS_AT + i * ROOT_SIZE..][..ROOT_SIZE];
            put_name(&mut e[..32], &r.name);
            e[32..40].copy_from_slice(&r.start.to_le_bytes());
            e[40..48].copy_from_slice(&r.count.to_le_bytes());
            e[48..50].copy_from_slice(&r.tid.to_le_bytes());
        }
        let sum = checksum(&b);
        b[36..40].copy_from_slice(&sum.to_le_bytes());
        b
    }

    /// Parses and checks block 0 of a disk of `disk_blocks` blocks
    /// (templates are checked against the catalogue later).
    pub fn decode(b: &[u8; BLOCK], disk_blocks: u64) -> Result<Super, Error> {
        let bad = |why| Err(Error::BadSuperblock(why));
        if &b[0..8] != MAGIC {
            return bad("no XN magic");
        }
        let mut copy = *b;
        copy[36..40].fill(0);
        if checksum(&copy) != u32_at(b, 36) {
            return bad("checksum mismatch");
        }
        if u32_at(b, 8) != VERSION || u32_at(b, 12) != BLOCK as u32 {
            return bad("unknown version or block size");
        }
        let nblocks = u64_at(b, 16);
        if nblocks <= RESERVED || nblocks > disk_blocks {
            return bad("block count does not fit the disk");
        }
        let (ntemplates, catalogue_bytes) = (u32_at(b, 24), u32_at(b, 28));
        if catalogue_bytes as usize > CATALOGUE_BYTES || ntemplates > Tid::MAX as u32 - 1 {
            return bad("catalogue size out of range");
        }
        let nroots = u32_at(b, 32) as usize;
        if nroots > MAX_ROOTS {
            return bad("too many roots");
        }
        let mut roots = Vec::new();
        for i in 0..nroots {
            let e = &b[ROOTS_AT + i * ROOT_SIZE..][..ROOT_SIZE];
            let Some(name) = name_at(&e[..32]) else { return bad("malformed root name") };
            let (start, count, tid) = (u64_at(e, 32), u64_at(e, 40), u16_at(e, 48));
            if count == 0 || start < RESERVED || start.checked_add(count).is_none_or(|end| end > nblocks) {
                return bad("root extent out of range");
            }
            if tid == 0 || u32::from(tid) > ntemplates || roots.iter().any(|r: &Root| r.name == name) {
                return bad("root with an unknown template or a duplicate name");
            }
            roots.push(Root { name, start, count, tid, persistent: true });
        }
        Ok(Super { nblocks, ntemplates, catalogue_bytes, roots })
    }
}

/// Appends the record of `spec` (installed as `id` in the group from
/// `base`) to the catalogue bytes.
pub fn encode_record(cat: &mut Vec<u8>, spec: &TemplateSpec, id: Tid, base: Tid, group_len: u16) {
    let start = cat.len();
    cat.resize(start + RECORD_HEAD, 0);
    let h = &mut cat[start..];
    h[0..4].copy_from_slice(&RECORD_MAGIC.to_le_bytes());
    h[4..6].copy_from_slice(&id.to_le_bytes());
    h[6..8].copy_from_slice(&base.to_le_bytes());
    h[8..10].copy_from_slice(&group_len.to_le_bytes());
    h[12..16].copy_from_slice(&spec.slots.to_le_bytes());
    for (i, code) in [&spec.owns, &spec.acl, &spec.size].iter().enumerate() {
        h[16 + 4 * i..20 + 4 * i].copy_from_slice(&(code.len() as u32).to_le_bytes());
    }
    put_name(&mut h[32..64], &spec.name);
    for insn in spec.owns.iter().chain(&spec.acl).chain(&spec.size) {
        cat.extend_from_slice(&insn.to_bytes());
    }
    let sum = checksum(&cat[start..]);
    cat[start + 28..start + 32].copy_from_slice(&sum.to_le_bytes());
}

/// Parses the catalogue's `ntemplates` records from `cat`, checking each
/// and verifying its functions again (a catalogue is disk input).
pub fn decode_catalogue(cat: &[u8], ntemplates: u32) -> Result<Vec<Template>, Error> {
    let mut out: Vec<Template> = Vec::new();
    let mut at = 0usize;
    for i in 0..ntemplates {
        let bad = |why| Error::BadCatalogue { offset: at as u32, why };
        let h = cat.get(at..at + RECORD_HEAD).ok_or(bad("record past the end"))?;
        if u32_at(h, 0) != RECORD_MAGIC {
            return Err(bad("no record magic"));
        }
        let (id, base, group_len, slots) = (u16_at(h, 4), u16_at(h, 6), u16_at(h, 8), u32_at(h, 12));
        let lens = [u32_at(h, 16), u32_at(h, 20), u32_at(h, 24)].map(|l| l as usize);
        if lens.iter().any(|&l| l > MAX_UDF_INSNS) || slots > MAX_SLOTS {
            return Err(bad("function or slot count too large"));
        }
        let len = RECORD_HEAD + 8 * lens.iter().sum::<usize>();
        let rec = cat.get(at..at + len).ok_or(bad("record past the end"))?;
        let mut copy = Vec::from(rec);
        copy[28..32].fill(0);
        if checksum(&copy) != u32_at(h, 28) {
            return Err(bad("record checksum mismatch"));
        }
        let in_group = base >= 1 && id >= base && u32::from(id - base) < u32::from(group_len);
        if u32::from(id) != i + 1 || !in_group || u32::from(base) + u32::from(group_len) > ntemplates + 1 {
            return Err(bad("template id outside its group"));
        }
        let name = name_at(&h[32..64]).ok_or(bad("malformed name"))?;
        let mut code =
            rec[RECORD_HEAD..].chunks_exact(8).map(|c| Insn::from_bytes(c.try_into().unwrap_or_default()));
        let mut take = |n| code.by_ref().take(n).collect::<Vec<Insn>>();
        let spec = TemplateSpec { name, slots, owns: take(lens[0]), acl: take(lens[1]), size: take(lens[2]) };
        if out.iter().any(|t| t.name == spec.name) {
            return Err(Error::BadTemplate { index: id, why: TemplateError::DuplicateName });
        }
        let t = Template::build(&spec, id, base, group_len)
            .map_err(|why| Error::BadTemplate { index: id, why })?;
        out.push(t);
        at += len;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn superblock_round_trips_and_every_flip_is_refused() {
        let s = Super {
            nblocks: 300,
            ntemplates: 2,
            catalogue_bytes: 128,
            roots: alloc::vec![Root { name: "fs".into(), start: 40, count: 1, tid: 1, persistent: true }],
        };
        let b = s.encode();
        assert_eq!(Super::decode(&b, 300), Ok(s));
        assert_eq!(Super::decode(&b, 299), Err(Error::BadSuperblock("block count does not fit the disk")));
        for bit in (0..8 * 200).step_by(7) {
            let mut c = b;
            c[bit / 8] ^= 1 << (bit % 8);
            assert!(Super::decode(&c, 300).is_err(), "flip of bit {bit} accepted");
        }
    }
}
