//! What the boot loader tells us: memory map, boot module, command line.
//! Understands PVH (`hvm_start_info`, QEMU's `-kernel`) and Multiboot2
//! (GRUB). Parsing is defensive: a malformed structure yields an error,
//! never an out-of-bounds read.

/// Multiboot2's magic value in `eax` at entry.
pub const MULTIBOOT2_MAGIC: u32 = 0x36d7_6289;
/// `hvm_start_info.magic`.
pub const PVH_MAGIC: u32 = 0x336e_c578;

const MAX_REGIONS: usize = 64;
const CMDLINE_MAX: usize = 256;

/// Read access to physical memory during boot.
pub trait Phys {
    /// `len` bytes at physical address `addr`, if they are readable.
    fn bytes(&self, addr: u64, len: usize) -> Option<&[u8]>;
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Region {
    pub start: u64,
    pub end: u64,
}

/// Which protocol booted us.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loader {
    Pvh,
    Multiboot2,
}

#[derive(Debug)]
pub struct BootInfo {
    pub loader: Loader,
    ram: [Region; MAX_REGIONS],
    nram: usize,
    pub module: Option<Region>,
    cmdline: [u8; CMDLINE_MAX],
    cmdline_len: usize,
}

#[derive(Debug, PartialEq, Eq)]
pub enum BootError {
    UnknownLoader,
    Unreadable(&'static str),
    NoMemoryMap,
}

impl BootInfo {
    fn new(loader: Loader) -> Self {
        BootInfo {
            loader,
            ram: [Region::default(); MAX_REGIONS],
            nram: 0,
            module: None,
            cmdline: [0; CMDLINE_MAX],
            cmdline_len: 0,
        }
    }

    /// Usable RAM regions, page-aligned inward.
    pub fn ram(&self) -> &[Region] {
        &self.ram[..self.nram]
    }

    pub fn cmdline(&self) -> &[u8] {
        &self.cmdline[..self.cmdline_len]
    }

    /// Parses the loader's structure at `info` given the entry `magic`.
    pub fn parse(magic: u32, info: u64, mem: &dyn Phys) -> Result<BootInfo, BootError> {
        if magic == MULTIBOOT2_MAGIC {
            return Self::parse_multiboot2(info, mem);
        }
        match mem.bytes(info, 4) {
            Some(b) if u32_at(b, 0) == PVH_MAGIC => Self::parse_pvh(info, mem),
            _ => Err(BootError::UnknownLoader),
        }
    }

    fn add_ram(&mut self, start: u64, len: u64) {
        let s = start.saturating_add(4095) & !4095;
        let e = start.saturating_add(len) & !4095;
        if e > s && self.nram < MAX_REGIONS {
            self.ram[self.nram] = Region { start: s, end: e };
            self.nram += 1;
        }
    }

    fn set_cmdline(&mut self, addr: u64, mem: &dyn Phys) {
        for i in 0..CMDLINE_MAX as u64 {
            match mem.bytes(addr + i, 1) {
                Some([0]) | None => break,
                Some(b) => {
                    self.cmdline[i as usize] = b[0];
                    self.cmdline_len = i as usize + 1;
                }
            }
        }
    }

    fn parse_pvh(info: u64, mem: &dyn Phys) -> Result<BootInfo, BootError> {
        let s = mem.bytes(info, 56).ok_or(BootError::Unreadable("start_info"))?;
        let mut bi = BootInfo::new(Loader::Pvh);
        let version = u32_at(s, 4);
        let nr_modules = u32_at(s, 12);
        let modlist = u64_at(s, 16);
        let cmdline = u64_at(s, 24);
        if cmdline != 0 {
            bi.set_cmdline(cmdline, mem);
        }
        if nr_modules > 0 {
            let m = mem.bytes(modlist, 32).ok_or(BootError::Unreadable("modlist"))?;
            bi.module = module_region(u64_at(m, 0), u64_at(m, 8));
        }
        if version < 1 {
            return Err(BootError::NoMemoryMap);
        }
        let (map, n) = (u64_at(s, 40), u32_at(s, 48) as usize);
        for i in 0..n.min(256) {
            let e = mem.bytes(map + 24 * i as u64, 24).ok_or(BootError::Unreadable("memmap"))?;
            if u32_at(e, 16) == 1 {
                bi.add_ram(u64_at(e, 0), u64_at(e, 8));
            }
        }
        Ok(bi)
    }

    fn parse_multiboot2(info: u64, mem: &dyn Phys) -> Result<BootInfo, BootError> {
        let head = mem.bytes(info, 8).ok_or(BootError::Unreadable("mbi"))?;
        let total = u32_at(head, 0) as u64;
        let mut bi = BootInfo::new(Loader::Multiboot2);
        let mut saw_map = false;
        let mut off = 8;
        while off + 8 <= total {
            let tag = mem.bytes(info + off, 8).ok_or(BootError::Unreadable("tag"))?;
            let (ty, size) = (u32_at(tag, 0), u32_at(tag, 4) as u64);
            if ty == 0 || size < 8 || off + size > total {
                break;
            }
            let body = mem.bytes(info + off, size as usize).ok_or(BootError::Unreadable("tag"))?;
            match ty {
                1 => bi.set_cmdline(info + off + 8, mem),
                3 if size >= 16 && bi.module.is_none() => {
                    let (start, end) = (u32_at(body, 8) as u64, u32_at(body, 12) as u64);
                    bi.module = module_region(start, end.saturating_sub(start));
                }
                6 if size >= 16 => {
                    saw_map = true;
                    let esize = u32_at(body, 8) as u64;
                    if esize >= 24 {
                        let mut e = 16;
                        while e + esize <= size {
                            let ent = &body[e as usize..];
                            if u32_at(ent, 16) == 1 {
                                bi.add_ram(u64_at(ent, 0), u64_at(ent, 8));
                            }
                            e += esize;
                        }
                    }
                }
                _ => {}
            }
            off += (size + 7) & !7;
        }
        if saw_map {
            Ok(bi)
        } else {
            Err(BootError::NoMemoryMap)
        }
    }
}

fn module_region(start: u64, len: u64) -> Option<Region> {
    (len > 0).then(|| Region { start, end: start.saturating_add(len) })
}

fn u32_at(b: &[u8], off: usize) -> u32 {
    u32::from_le_bytes(b[off..off + 4].try_into().unwrap())
}

fn u64_at(b: &[u8], off: usize) -> u64 {
    u64::from_le_bytes(b[off..off + 8].try_into().unwrap())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    /// Physical memory starting at 0x1000.
    struct Mem(Vec<u8>);
    impl Phys for Mem {
        fn bytes(&self, addr: u64, len: usize) -> Option<&[u8]> {
            let off = addr.checked_sub(0x1000)? as usize;
            self.0.get(off..off.checked_add(len)?)
        }
    }

    fn put(m: &mut Vec<u8>, at: usize, v: &[u8]) {
        if m.len() < at + v.len() {
            m.resize(at + v.len(), 0);
        }
        m[at..at + v.len()].copy_from_slice(v);
    }

    #[test]
    fn pvh_start_info() {
        let mut m = Vec::new();
        put(&mut m, 0, &PVH_MAGIC.to_le_bytes());
        put(&mut m, 4, &1u32.to_le_bytes());
        put(&mut m, 12, &1u32.to_le_bytes());
        put(&mut m, 16, &0x1100u64.to_le_bytes()); // modlist
        put(&mut m, 24, &0x1200u64.to_le_bytes()); // cmdline
        put(&mut m, 40, &0x1300u64.to_le_bytes()); // memmap
        put(&mut m, 48, &2u32.to_le_bytes());
        put(&mut m, 0x100, &0x80_0000u64.to_le_bytes());
        put(&mut m, 0x108, &0x1234u64.to_le_bytes());
        put(&mut m, 0x200, b"init=hello\0");
        put(&mut m, 0x300, &0u64.to_le_bytes());
        put(&mut m, 0x308, &0x9fc00u64.to_le_bytes());
        put(&mut m, 0x310, &1u32.to_le_bytes());
        put(&mut m, 0x318, &0x10_0000u64.to_le_bytes());
        put(&mut m, 0x320, &0x1000_0000u64.to_le_bytes());
        put(&mut m, 0x328, &2u32.to_le_bytes()); // reserved: skipped
        put(&mut m, 0x32c, &0u32.to_le_bytes());
        let bi = BootInfo::parse(0, 0x1000, &Mem(m)).unwrap();
        assert_eq!(bi.loader, Loader::Pvh);
        assert_eq!(bi.cmdline(), b"init=hello");
        assert_eq!(bi.module, Some(Region { start: 0x80_0000, end: 0x80_1234 }));
        assert_eq!(bi.ram(), &[Region { start: 0, end: 0x9f000 }]);
    }

    #[test]
    fn multiboot2_tags() {
        let mut m = Vec::new();
        let mut off = 8;
        let mut tag = |m: &mut Vec<u8>, ty: u32, body: &[u8]| {
            let size = 8 + body.len() as u32;
            put(m, off, &ty.to_le_bytes());
            put(m, off + 4, &size.to_le_bytes());
            put(m, off + 8, body);
            off += (size as usize + 7) & !7;
        };
        tag(&mut m, 1, b"init=sh\0");
        let mut module = Vec::new();
        module.extend_from_slice(&0x200000u32.to_le_bytes());
        module.extend_from_slice(&0x200100u32.to_le_bytes());
        module.extend_from_slice(b"bootfs\0");
        tag(&mut m, 3, &module);
        let mut map = Vec::new();
        map.extend_from_slice(&24u32.to_le_bytes());
        map.extend_from_slice(&0u32.to_le_bytes());
        for (base, len, ty) in [(0x100000u64, 0x7f00000u64, 1u32), (0xfffc0000, 0x40000, 2)] {
            map.extend_from_slice(&base.to_le_bytes());
            map.extend_from_slice(&len.to_le_bytes());
            map.extend_from_slice(&ty.to_le_bytes());
            map.extend_from_slice(&0u32.to_le_bytes());
        }
        tag(&mut m, 6, &map);
        tag(&mut m, 0, &[]);
        let total = off as u32;
        put(&mut m, 0, &total.to_le_bytes());
        let bi = BootInfo::parse(MULTIBOOT2_MAGIC, 0x1000, &Mem(m)).unwrap();
        assert_eq!(bi.loader, Loader::Multiboot2);
        assert_eq!(bi.cmdline(), b"init=sh");
        assert_eq!(bi.module, Some(Region { start: 0x200000, end: 0x200100 }));
        assert_eq!(bi.ram(), &[Region { start: 0x100000, end: 0x8000000 }]);
    }

    #[test]
    fn garbage_is_rejected_not_read_past() {
        let m = Mem(std::vec![0xff; 64]);
        assert_eq!(BootInfo::parse(1, 0x1000, &m).unwrap_err(), BootError::UnknownLoader);
        // A Multiboot2 header whose size runs past readable memory.
        let mut v = std::vec![0u8; 16];
        v[0..4].copy_from_slice(&4096u32.to_le_bytes());
        v[8..12].copy_from_slice(&6u32.to_le_bytes());
        v[12..16].copy_from_slice(&4000u32.to_le_bytes());
        assert!(BootInfo::parse(MULTIBOOT2_MAGIC, 0x1000, &Mem(v)).is_err());
    }
}
