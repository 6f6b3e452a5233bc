//! Loader for relocatable ELF objects produced by
//! `clang -target bpf -O2 -c`: extracts one program section and binds its
//! references to named regions (`R_BPF_64_64` relocations on `ld_imm64`)
//! to region indices chosen by the caller. Every offset read from the file
//! is bounds-checked, so any byte string yields a value or an error.

use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;

use crate::insn::{decode, Insn, INSN_SIZE, LD_IMM64, PSEUDO_REGION};

const EM_BPF: u16 = 247;
const ET_REL: u16 = 1;
const SHT_SYMTAB: u32 = 2;
const SHT_RELA: u32 = 4;
const SHT_NOBITS: u32 = 8;
const SHT_REL: u32 = 9;
const R_BPF_NONE: u32 = 0;
const R_BPF_64_64: u32 = 1;
const SECTION_HEADER_SIZE: usize = 64;
const SYMBOL_SIZE: usize = 24;
const REL_SIZE: usize = 16;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ObjectError {
    /// Does not start with the ELF magic number.
    BadMagic,
    /// Not a 64-bit little-endian relocatable object for the BPF machine.
    WrongKind(&'static str),
    /// A structure extends past the end of the file.
    Truncated(&'static str),
    /// A string or index inside the file points nowhere.
    BadReference(&'static str),
    /// No section with this name.
    NoSuchSection(String),
    /// The program section's size is not a whole number of instructions.
    PartialInstruction { size: u64 },
    /// `SHT_RELA` relocations (clang emits `SHT_REL` for BPF).
    RelaUnsupported,
    /// A relocation type other than `R_BPF_64_64` (e.g. a function call).
    UnknownRelocation { kind: u32, offset: u64 },
    /// A relocation that does not sit on an `ld_imm64` of a constant.
    BadRelocationSite { offset: u64 },
    /// A relocation against a symbol not in the caller's region list.
    UnknownSymbol(String),
}

impl fmt::Display for ObjectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use ObjectError::*;
        match self {
            BadMagic => write!(f, "not an ELF file"),
            WrongKind(what) => write!(f, "not a BPF relocatable object: {what}"),
            Truncated(what) => write!(f, "truncated object: {what} runs past the end"),
            BadReference(what) => write!(f, "malformed object: bad {what}"),
            NoSuchSection(name) => write!(f, "no section named `{name}`"),
            PartialInstruction { size } => {
                write!(f, "program section of {size} bytes is not a multiple of 8")
            }
            RelaUnsupported => write!(f, "RELA relocations are not supported"),
            UnknownRelocation { kind, offset } => {
                write!(f, "unsupported relocation type {kind} at {offset:#x}")
            }
            BadRelocationSite { offset } => {
                write!(f, "relocation at {offset:#x} is not on an ld_imm64")
            }
            UnknownSymbol(name) => write!(f, "`{name}` is not a region this program may use"),
        }
    }
}

/// Bounds-checked little-endian reads.
struct Bytes<'a>(&'a [u8]);

impl<'a> Bytes<'a> {
    fn slice(&self, off: u64, len: u64, what: &'static str) -> Result<&'a [u8], ObjectError> {
        let end = off.checked_add(len).ok_or(ObjectError::Truncated(what))?;
        if end > self.0.len() as u64 {
            return Err(ObjectError::Truncated(what));
        }
        Ok(&self.0[off as usize..end as usize])
    }
    fn u16(&self, off: u64, what: &'static str) -> Result<u16, ObjectError> {
        let b = self.slice(off, 2, what)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }
    fn u32(&self, off: u64, what: &'static str) -> Result<u32, ObjectError> {
        let b = self.slice(off, 4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn u64(&self, off: u64, what: &'static str) -> Result<u64, ObjectError> {
        let b = self.slice(off, 8, what)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }
}

#[derive(Clone, Copy)]
struct Section {
    name: u32,
    kind: u32,
    offset: u64,
    size: u64,
    link: u32,
    info: u32,
}

struct Elf<'a> {
    bytes: Bytes<'a>,
    sections: Vec<Section>,
    shstrndx: usize,
}

impl<'a> Elf<'a> {
    fn parse(data: &'a [u8]) -> Result<Elf<'a>, ObjectError> {
        let bytes = Bytes(data);
        if bytes.slice(0, 4, "ELF header").map_err(|_| ObjectError::BadMagic)? != b"\x7fELF" {
            return Err(ObjectError::BadMagic);
        }
        let ident = bytes.slice(4, 2, "ELF header")?;
        if ident[0] != 2 || ident[1] != 1 {
            return Err(ObjectError::WrongKind("not 64-bit little-endian"));
        }
        if bytes.u16(16, "ELF header")? != ET_REL {
            return Err(ObjectError::WrongKind("not a relocatable object"));
        }
        if bytes.u16(18, "ELF header")? != EM_BPF {
            return Err(ObjectError::WrongKind("machine is not BPF"));
        }
        let shoff = bytes.u64(40, "ELF header")?;
        let shentsize = bytes.u16(58, "ELF header")? as usize;
        let shnum = bytes.u16(60, "ELF header")? as u64;
        let shstrndx = bytes.u16(62, "ELF header")? as usize;
        if shentsize != SECTION_HEADER_SIZE {
            return Err(ObjectError::BadReference("section header size"));
        }
        let mut sections = Vec::new();
        for i in 0..shnum {
            let at = shoff
                .checked_add(i * SECTION_HEADER_SIZE as u64)
                .ok_or(ObjectError::Truncated("section headers"))?;
            let what = "section headers";
            sections.push(Section {
                name: bytes.u32(at, what)?,
                kind: bytes.u32(at + 4, what)?,
                offset: bytes.u64(at + 24, what)?,
                size: bytes.u64(at + 32, what)?,
                link: bytes.u32(at + 40, what)?,
                info: bytes.u32(at + 44, what)?,
            });
        }
        if shstrndx >= sections.len() {
            return Err(ObjectError::BadReference("section name table index"));
        }
        Ok(Elf { bytes, sections, shstrndx })
    }

    fn contents(&self, s: &Section, what: &'static str) -> Result<&'a [u8], ObjectError> {
        if s.kind == SHT_NOBITS {
            return Ok(&[]);
        }
        self.bytes.slice(s.offset, s.size, what)
    }

    /// NUL-terminated string at `off` in string-table section `table`.
    fn string(&self, table: usize, off: u32) -> Result<&'a str, ObjectError> {
        let s = self.sections.get(table).ok_or(ObjectError::BadReference("string table index"))?;
        let data = self.contents(s, "string table")?;
        let rest = data.get(off as usize..).ok_or(ObjectError::BadReference("string offset"))?;
        let len =
            rest.iter().position(|&b| b == 0).ok_or(ObjectError::BadReference("unterminated string"))?;
        core::str::from_utf8(&rest[..len]).map_err(|_| ObjectError::BadReference("string encoding"))
    }

    fn section_named(&self, name: &str) -> Result<usize, ObjectError> {
        for (i, s) in self.sections.iter().enumerate() {
            if self.string(self.shstrndx, s.name)? == name {
                return Ok(i);
            }
        }
        Err(ObjectError::NoSuchSection(name.to_string()))
    }

    /// Name of symbol `index` in symbol table `symtab`.
    fn symbol_name(&self, symtab: usize, index: u64) -> Result<&'a str, ObjectError> {
        let s = self.sections[symtab];
        let data = Bytes(self.contents(&s, "symbol table")?);
        let at = index.checked_mul(SYMBOL_SIZE as u64).ok_or(ObjectError::BadReference("symbol index"))?;
        let name = data.u32(at, "symbol").map_err(|_| ObjectError::BadReference("symbol index"))?;
        self.string(s.link as usize, name)
    }
}

/// Extracts the program in `section` and binds each region reference to
/// the index of its symbol name in `regions`. The result still has to be
/// verified.
pub fn load(object: &[u8], section: &str, regions: &[&str]) -> Result<Vec<Insn>, ObjectError> {
    let elf = Elf::parse(object)?;
    let target = elf.section_named(section)?;
    let code = elf.contents(&elf.sections[target], "program section")?;
    let mut insns = decode(code).map_err(|_| ObjectError::PartialInstruction { size: code.len() as u64 })?;

    for s in &elf.sections {
        if s.info as usize != target || !(s.kind == SHT_REL || s.kind == SHT_RELA) {
            continue;
        }
        if s.kind == SHT_RELA {
            return Err(ObjectError::RelaUnsupported);
        }
        let symtab = s.link as usize;
        if elf.sections.get(symtab).map(|t| t.kind) != Some(SHT_SYMTAB) {
            return Err(ObjectError::BadReference("relocation symbol table"));
        }
        let rels = Bytes(elf.contents(s, "relocations")?);
        for i in 0..(rels.0.len() / REL_SIZE) as u64 {
            let offset = rels.u64(i * REL_SIZE as u64, "relocation")?;
            let info = rels.u64(i * REL_SIZE as u64 + 8, "relocation")?;
            let kind = info as u32;
            match kind {
                R_BPF_NONE => continue,
                R_BPF_64_64 => {}
                _ => return Err(ObjectError::UnknownRelocation { kind, offset }),
            }
            let name = elf.symbol_name(symtab, info >> 32)?;
            let region = regions
                .iter()
                .position(|r| *r == name && !name.is_empty())
                .ok_or_else(|| ObjectError::UnknownSymbol(name.to_string()))?;
            bind(&mut insns, offset, region as u32)?;
        }
    }
    Ok(insns)
}

/// Rewrites the ld_imm64 at byte `offset` into a region reference. The
/// instruction's immediate is the offset into the symbol (REL addend).
fn bind(insns: &mut [Insn], offset: u64, region: u32) -> Result<(), ObjectError> {
    let bad = ObjectError::BadRelocationSite { offset };
    if !offset.is_multiple_of(INSN_SIZE as u64) {
        return Err(bad);
    }
    let i = (offset / INSN_SIZE as u64) as usize;
    if i + 1 >= insns.len() {
        return Err(bad);
    }
    let (first, second) = (insns[i], insns[i + 1]);
    if first.code != LD_IMM64 || first.src != 0 || second.imm != 0 {
        return Err(bad);
    }
    insns[i].src = PSEUDO_REGION;
    insns[i].imm = region as i32;
    insns[i + 1].imm = first.imm;
    Ok(())
}
