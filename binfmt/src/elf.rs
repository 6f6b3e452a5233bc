//! ELF64 executables for x86-64.

/// Why an executable was rejected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElfError {
    TooShort,
    BadMagic,
    Not64Bit,
    NotLittleEndian,
    BadVersion,
    NotExecutable,
    WrongMachine,
    BadProgramHeaders,
    SegmentOutsideFile,
    SegmentFileLargerThanMemory,
    SegmentAddressOverflow,
    SegmentOutsideUserSpace,
    UnalignedSegment,
    NeedsInterpreter,
    NoLoadableSegment,
    EntryNotExecutable,
    SegmentsOverlap,
    BadInterpreterPath,
}

impl ElfError {
    pub const fn describe(self) -> &'static str {
        match self {
            ElfError::TooShort => "file too short for an ELF header",
            ElfError::BadMagic => "not an ELF file (bad magic)",
            ElfError::Not64Bit => "not a 64-bit ELF file",
            ElfError::NotLittleEndian => "not little-endian",
            ElfError::BadVersion => "unknown ELF version",
            ElfError::NotExecutable => "not an executable (ET_EXEC or ET_DYN)",
            ElfError::WrongMachine => "not an x86-64 program",
            ElfError::BadProgramHeaders => "program header table malformed",
            ElfError::SegmentOutsideFile => "segment data lies outside the file",
            ElfError::SegmentFileLargerThanMemory => "segment file size exceeds memory size",
            ElfError::SegmentAddressOverflow => "segment address range overflows",
            ElfError::SegmentOutsideUserSpace => "segment outside user address space",
            ElfError::UnalignedSegment => "segment offset and address disagree modulo the page size",
            ElfError::NeedsInterpreter => "dynamically linked (has PT_INTERP)",
            ElfError::NoLoadableSegment => "no loadable segment",
            ElfError::EntryNotExecutable => "entry point not in an executable segment",
            ElfError::SegmentsOverlap => "loadable segments overlap or are out of address order",
            ElfError::BadInterpreterPath => "PT_INTERP is not one NUL-terminated path inside the file",
        }
    }
}

pub const PT_LOAD: u32 = 1;
pub const PT_INTERP: u32 = 3;
pub const PT_PHDR: u32 = 6;
pub const PT_TLS: u32 = 7;
pub const PF_X: u32 = 1;
pub const PF_W: u32 = 2;
pub const PF_R: u32 = 4;
pub const ET_EXEC: u16 = 2;
pub const ET_DYN: u16 = 3;

/// A program header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    pub kind: u32,
    pub flags: u32,
    pub offset: u64,
    pub vaddr: u64,
    pub filesz: u64,
    pub memsz: u64,
    pub align: u64,
}

/// A validated executable.
#[derive(Clone, Copy, Debug)]
pub struct Elf<'a> {
    data: &'a [u8],
    pub kind: u16,
    pub entry: u64,
    phoff: usize,
    phnum: usize,
    pub phentsize: usize,
    /// The `PT_INTERP` path (without its NUL), if the program names one.
    pub interp: Option<&'a [u8]>,
}

/// Longest interpreter path accepted (Linux: PATH_MAX).
const INTERP_MAX: u64 = 4096;

pub(crate) fn u16_at(b: &[u8], o: usize) -> u16 {
    u16::from_le_bytes([b[o], b[o + 1]])
}
pub(crate) fn u32_at(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes(b[o..o + 4].try_into().unwrap())
}
pub(crate) fn u64_at(b: &[u8], o: usize) -> u64 {
    u64::from_le_bytes(b[o..o + 8].try_into().unwrap())
}

impl<'a> Elf<'a> {
    /// Checks the header and every program header of a static executable.
    /// Loadable segments must lie in `[user_min, user_end)` once shifted by
    /// `bias` (0 for ET_EXEC).
    pub fn parse(data: &'a [u8], user_min: u64, user_end: u64, bias: u64) -> Result<Self, ElfError> {
        let elf = Self::parse_dynamic(data, user_min, user_end, bias)?;
        if elf.interp.is_some() {
            return Err(ElfError::NeedsInterpreter);
        }
        Ok(elf)
    }

    /// As `parse`, but a program may name an interpreter (`interp`).
    pub fn parse_dynamic(data: &'a [u8], user_min: u64, user_end: u64, bias: u64) -> Result<Self, ElfError> {
        if data.len() < 64 {
            return Err(ElfError::TooShort);
        }
        if &data[0..4] != b"\x7fELF" {
            return Err(ElfError::BadMagic);
        }
        if data[4] != 2 {
            return Err(ElfError::Not64Bit);
        }
        if data[5] != 1 {
            return Err(ElfError::NotLittleEndian);
        }
        if data[6] != 1 || u32_at(data, 20) != 1 {
            return Err(ElfError::BadVersion);
        }
        let kind = u16_at(data, 16);
        if kind != ET_EXEC && kind != ET_DYN {
            return Err(ElfError::NotExecutable);
        }
        if u16_at(data, 18) != 62 {
            return Err(ElfError::WrongMachine);
        }
        let phoff = u64_at(data, 32);
        let phentsize = u16_at(data, 54) as usize;
        let phnum = u16_at(data, 56) as usize;
        let table_len = (phentsize as u64).checked_mul(phnum as u64);
        match (phoff.checked_add(table_len.unwrap_or(u64::MAX)), phentsize) {
            (Some(end), 56..) if end <= data.len() as u64 && phnum > 0 => {}
            _ => return Err(ElfError::BadProgramHeaders),
        }
        let mut elf = Elf {
            data,
            kind,
            entry: u64_at(data, 24).wrapping_add(bias),
            phoff: phoff as usize,
            phnum,
            phentsize,
            interp: None,
        };
        let mut loadable = false;
        let mut entry_ok = false;
        // Linux maps segments in address order; one past the last's end.
        let mut prev_end = 0;
        for s in elf.segments() {
            if s.kind == PT_INTERP {
                if elf.interp.is_some() {
                    return Err(ElfError::BadInterpreterPath);
                }
                elf.interp = Some(interp_path(data, &s)?);
            }
            if s.kind != PT_LOAD {
                continue;
            }
            loadable = true;
            match s.offset.checked_add(s.filesz) {
                Some(end) if end <= data.len() as u64 => {}
                _ => return Err(ElfError::SegmentOutsideFile),
            }
            if s.filesz > s.memsz {
                return Err(ElfError::SegmentFileLargerThanMemory);
            }
            let start = s.vaddr.checked_add(bias).ok_or(ElfError::SegmentAddressOverflow)?;
            let end = start.checked_add(s.memsz).ok_or(ElfError::SegmentAddressOverflow)?;
            if start < user_min || end > user_end {
                return Err(ElfError::SegmentOutsideUserSpace);
            }
            if s.offset % 4096 != s.vaddr % 4096 {
                return Err(ElfError::UnalignedSegment);
            }
            if start < prev_end {
                return Err(ElfError::SegmentsOverlap);
            }
            prev_end = end;
            if s.flags & PF_X != 0 && (start..end).contains(&elf.entry) {
                entry_ok = true;
            }
        }
        if !loadable {
            return Err(ElfError::NoLoadableSegment);
        }
        if !entry_ok {
            return Err(ElfError::EntryNotExecutable);
        }
        Ok(elf)
    }

    /// The lowest and one past the highest address the loadable segments
    /// cover, before any bias (what a position-independent program needs
    /// room for).
    pub fn span(&self) -> (u64, u64) {
        let loads = self.segments().filter(|s| s.kind == PT_LOAD);
        loads.fold((u64::MAX, 0), |(lo, hi), s| (lo.min(s.vaddr), hi.max(s.vaddr + s.memsz)))
    }

    /// Every program header.
    pub fn segments(&self) -> impl Iterator<Item = Segment> + 'a {
        let (data, phoff, size) = (self.data, self.phoff, self.phentsize);
        (0..self.phnum).map(move |i| {
            let h = &data[phoff + i * size..];
            Segment {
                kind: u32_at(h, 0),
                flags: u32_at(h, 4),
                offset: u64_at(h, 8),
                vaddr: u64_at(h, 16),
                filesz: u64_at(h, 32),
                memsz: u64_at(h, 40),
                align: u64_at(h, 48),
            }
        })
    }

    /// The file bytes of a checked loadable segment.
    pub fn file_bytes(&self, s: &Segment) -> &'a [u8] {
        &self.data[s.offset as usize..(s.offset + s.filesz) as usize]
    }

    /// File offset of the program headers (for the auxiliary vector).
    pub fn phoff(&self) -> u64 {
        self.phoff as u64
    }

    pub fn phnum(&self) -> usize {
        self.phnum
    }
}

/// The path a checked `PT_INTERP` header names: inside the file, at most
/// `INTERP_MAX` bytes ending in a NUL; the path is what precedes the first
/// NUL (as Linux reads it), and is not empty.
fn interp_path<'a>(data: &'a [u8], s: &Segment) -> Result<&'a [u8], ElfError> {
    let end = s.offset.checked_add(s.filesz).filter(|&e| e <= data.len() as u64);
    let (Some(end), 2..=INTERP_MAX) = (end, s.filesz) else {
        return Err(ElfError::BadInterpreterPath);
    };
    match &data[s.offset as usize..end as usize] {
        [first, .., 0] if *first != 0 => {
            Ok(data[s.offset as usize..].split(|&c| c == 0).next().unwrap_or(&[]))
        }
        _ => Err(ElfError::BadInterpreterPath),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A minimal valid executable: one RX segment at 0x400000.
    pub(crate) fn tiny() -> std::vec::Vec<u8> {
        let mut f = std::vec![0u8; 0x1000 + 64];
        f[0..4].copy_from_slice(b"\x7fELF");
        f[4] = 2;
        f[5] = 1;
        f[6] = 1;
        f[16..18].copy_from_slice(&ET_EXEC.to_le_bytes());
        f[18..20].copy_from_slice(&62u16.to_le_bytes());
        f[20..24].copy_from_slice(&1u32.to_le_bytes());
        f[24..32].copy_from_slice(&0x401000u64.to_le_bytes());
        f[32..40].copy_from_slice(&64u64.to_le_bytes());
        f[54..56].copy_from_slice(&56u16.to_le_bytes());
        f[56..58].copy_from_slice(&1u16.to_le_bytes());
        let ph = &mut f[64..120];
        ph[0..4].copy_from_slice(&PT_LOAD.to_le_bytes());
        ph[4..8].copy_from_slice(&(PF_R | PF_X).to_le_bytes());
        ph[8..16].copy_from_slice(&0x1000u64.to_le_bytes());
        ph[16..24].copy_from_slice(&0x401000u64.to_le_bytes());
        ph[32..40].copy_from_slice(&16u64.to_le_bytes());
        ph[40..48].copy_from_slice(&0x2000u64.to_le_bytes());
        f
    }

    const LO: u64 = 0x1000;
    const HI: u64 = 0x7f80_0000_0000;

    #[test]
    fn accepts_valid() {
        let f = tiny();
        let e = Elf::parse(&f, LO, HI, 0).unwrap();
        assert_eq!(e.entry, 0x401000);
        let s: std::vec::Vec<_> = e.segments().collect();
        assert_eq!(s.len(), 1);
        assert_eq!(e.file_bytes(&s[0]).len(), 16);
    }

    fn patched(at: usize, bytes: &[u8]) -> std::vec::Vec<u8> {
        let mut f = tiny();
        f[at..at + bytes.len()].copy_from_slice(bytes);
        f
    }

    #[test]
    fn rejects_each_defect() {
        let cases: &[(std::vec::Vec<u8>, ElfError)] = &[
            (std::vec![0u8; 10], ElfError::TooShort),
            (patched(0, b"\x7fELG"), ElfError::BadMagic),
            (patched(4, &[1]), ElfError::Not64Bit),
            (patched(5, &[2]), ElfError::NotLittleEndian),
            (patched(6, &[9]), ElfError::BadVersion),
            (patched(16, &[1, 0]), ElfError::NotExecutable),
            (patched(18, &[3, 0]), ElfError::WrongMachine),
            (patched(56, &[0xff, 0xff]), ElfError::BadProgramHeaders),
            (patched(54, &[8, 0]), ElfError::BadProgramHeaders),
            (patched(64 + 32, &0x5000u64.to_le_bytes()), ElfError::SegmentOutsideFile),
            (patched(64 + 40, &1u64.to_le_bytes()), ElfError::SegmentFileLargerThanMemory),
            (patched(64 + 16, &u64::MAX.to_le_bytes()), ElfError::SegmentAddressOverflow),
            (patched(64 + 16, &0x7fff_0000_0000u64.to_le_bytes()), ElfError::SegmentOutsideUserSpace),
            (patched(64 + 8, &0x1008u64.to_le_bytes()), ElfError::UnalignedSegment),
            (with_interp(b"/lib/ld.so\0"), ElfError::NeedsInterpreter),
            (patched(64, &PT_TLS.to_le_bytes()), ElfError::NoLoadableSegment),
            (patched(24, &0x900000u64.to_le_bytes()), ElfError::EntryNotExecutable),
            (patched(64 + 4, &PF_R.to_le_bytes()), ElfError::EntryNotExecutable),
        ];
        for (f, want) in cases {
            assert_eq!(Elf::parse(f, LO, HI, 0).unwrap_err(), *want, "{}", want.describe());
        }
    }

    /// `tiny` with a second program header: `kind` at `offset`, `filesz`
    /// bytes, `vaddr`, `memsz`.
    pub(crate) fn with_header(
        kind: u32,
        offset: u64,
        filesz: u64,
        vaddr: u64,
        memsz: u64,
    ) -> std::vec::Vec<u8> {
        let mut f = tiny();
        f[56..58].copy_from_slice(&2u16.to_le_bytes());
        let ph = &mut f[120..176];
        ph[0..4].copy_from_slice(&kind.to_le_bytes());
        ph[4..8].copy_from_slice(&PF_R.to_le_bytes());
        ph[8..16].copy_from_slice(&offset.to_le_bytes());
        ph[16..24].copy_from_slice(&vaddr.to_le_bytes());
        ph[32..40].copy_from_slice(&filesz.to_le_bytes());
        ph[40..48].copy_from_slice(&memsz.to_le_bytes());
        f
    }

    /// `tiny` naming `path` (with its NUL, or not) as its interpreter.
    fn with_interp(path: &[u8]) -> std::vec::Vec<u8> {
        let mut f = with_header(PT_INTERP, 0x1040, path.len() as u64, 0, 0);
        f.extend_from_slice(path);
        f
    }

    #[test]
    fn interpreter_path_is_checked() {
        let f = with_interp(b"/lib/ld.so\0");
        assert_eq!(Elf::parse_dynamic(&f, LO, HI, 0).unwrap().interp, Some(&b"/lib/ld.so"[..]));
        assert_eq!(Elf::parse_dynamic(&tiny(), LO, HI, 0).unwrap().interp, None);
        let cut = with_interp(b"/lib\0ld.so\0");
        assert_eq!(Elf::parse_dynamic(&cut, LO, HI, 0).unwrap().interp, Some(&b"/lib"[..]));
        let long = std::vec![b'a'; 5000];
        let bad: &[std::vec::Vec<u8>] = &[
            with_interp(b"/lib/ld.so"),
            with_interp(b"\0/lib\0"),
            with_interp(b"\0"),
            with_interp(&long),
            with_header(PT_INTERP, 0x1000, 0x100, 0, 0),
            with_header(PT_INTERP, u64::MAX, 2, 0, 0),
        ];
        for f in bad {
            assert_eq!(Elf::parse_dynamic(f, LO, HI, 0).unwrap_err(), ElfError::BadInterpreterPath);
        }
        let mut two = with_interp(b"/a\0");
        two[56..58].copy_from_slice(&3u16.to_le_bytes());
        two.copy_within(120..176, 176);
        assert_eq!(Elf::parse_dynamic(&two, LO, HI, 0).unwrap_err(), ElfError::BadInterpreterPath);
    }

    #[test]
    fn segments_in_order_without_overlap() {
        // tiny's segment covers [0x401000, 0x403000).
        let after = with_header(PT_LOAD, 0x1000, 0, 0x403000, 0x1000);
        let e = Elf::parse(&after, LO, HI, 0).unwrap();
        assert_eq!(e.span(), (0x401000, 0x404000));
        for vaddr in [0x402000, 0x401000, 0x400000] {
            let f = with_header(PT_LOAD, 0x1000, 0, vaddr, 0x1000);
            assert_eq!(Elf::parse(&f, LO, HI, 0).unwrap_err(), ElfError::SegmentsOverlap);
        }
        // A huge segment runs past the window whatever its bias.
        let huge = with_header(PT_LOAD, 0x1000, 0, 0x403000, 1 << 47);
        assert_eq!(Elf::parse(&huge, LO, HI, 0).unwrap_err(), ElfError::SegmentOutsideUserSpace);
        let biased = Elf::parse(&after, LO, HI, 0x10000).unwrap();
        assert_eq!(biased.entry, 0x411000);
        assert_eq!(Elf::parse(&after, LO, HI, HI).unwrap_err(), ElfError::SegmentOutsideUserSpace);
    }

    #[test]
    fn random_corruption_never_panics() {
        let base = tiny();
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..20_000 {
            let mut f = base.clone();
            for _ in 0..4 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let i = (x % 128) as usize;
                f[i] = (x >> 32) as u8;
            }
            let _ = Elf::parse_dynamic(&f, LO, HI, 0);
            let _ = Elf::parse_dynamic(&f[..(x % 200) as usize], LO, HI, 0);
        }
    }
}
