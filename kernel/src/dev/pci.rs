//! PCI configuration space: enumeration through the legacy ports
//! (0xCF8/0xCFC, present on QEMU's default machine), BARs with their sizes,
//! and a checked walk of each function's capability list. The walk is
//! written against [`ConfigSpace`] so it is unit-tested on the host against
//! model configuration spaces, malformed ones included.

/// One function's configuration space, read a 32-bit word at a time.
pub trait ConfigSpace {
    /// The word at `offset` (a multiple of 4 below 256).
    fn read32(&self, offset: u8) -> u32;
}

pub const CAP_MSIX: u8 = 0x11;
const STATUS_CAP_LIST: u32 = 1 << (16 + 4);
const CAP_POINTER: u8 = 0x34;
/// Capabilities live after the standard header.
const CAP_MIN: u8 = 0x40;
/// At most this many capabilities fit in the device-specific area.
pub const MAX_CAPS: usize = 48;

/// One capability: its ID and where it starts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cap {
    pub id: u8,
    pub offset: u8,
}

/// Why a capability list was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CapError {
    /// The list comes back to the capability at this offset.
    Loop(u8),
    /// A pointer into the standard header (below 0x40).
    OutOfRange(u8),
}

impl core::fmt::Display for CapError {
    fn fmt(&self, f: &mut core::fmt::Formatter) -> core::fmt::Result {
        match self {
            CapError::Loop(at) => write!(f, "the list loops back to offset {at:#x}"),
            CapError::OutOfRange(p) => write!(f, "pointer {p:#x} points into the header"),
        }
    }
}

/// The capability list of a function, checked: every pointer lies in the
/// device-specific area and no capability is visited twice.
pub fn capabilities(cs: &impl ConfigSpace) -> Result<([Cap; MAX_CAPS], usize), CapError> {
    let mut caps = [Cap::default(); MAX_CAPS];
    let mut n = 0;
    if cs.read32(4) & STATUS_CAP_LIST == 0 {
        return Ok((caps, 0));
    }
    // The low two bits of every pointer are reserved (PCI 3.0 §6.7).
    let mut ptr = cs.read32(CAP_POINTER) as u8 & 0xFC;
    let mut seen = 0u64;
    while ptr != 0 {
        if ptr < CAP_MIN {
            return Err(CapError::OutOfRange(ptr));
        }
        let bit = 1u64 << (ptr >> 2);
        if seen & bit != 0 {
            return Err(CapError::Loop(ptr));
        }
        seen |= bit;
        let head = cs.read32(ptr);
        // A list without a loop visits each of the 48 dwords at most once.
        caps[n] = Cap { id: head as u8, offset: ptr };
        n += 1;
        ptr = (head >> 8) as u8 & 0xFC;
    }
    Ok((caps, n))
}

/// Where a function's MSI-X table and pending bits live.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Msix {
    /// Offset of the capability (for enabling it).
    pub cap: u8,
    pub entries: u16,
    pub table_bar: u8,
    pub table_offset: u32,
}

/// The MSI-X capability at `cap`.
pub fn msix(cs: &impl ConfigSpace, cap: u8) -> Msix {
    let control = cs.read32(cap) >> 16;
    let table = cs.read32(cap + 4);
    Msix {
        cap,
        entries: (control & 0x7FF) as u16 + 1,
        table_bar: (table & 7) as u8,
        table_offset: table & !7,
    }
}

/// A base address register, decoded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Bar {
    #[default]
    None,
    Io {
        port: u32,
        size: u32,
    },
    Memory {
        addr: u64,
        size: u64,
        prefetchable: bool,
        is64: bool,
    },
}

/// Decodes a BAR from its value (`lo`, and `hi` for a 64-bit one) and the
/// value read back after writing all ones (`mask_lo`, `mask_hi`).
pub fn decode_bar(lo: u32, hi: u32, mask_lo: u32, mask_hi: u32) -> Bar {
    if lo & 1 == 1 {
        let mask = mask_lo & !3;
        return match mask {
            0 => Bar::None,
            m => Bar::Io { port: lo & !3, size: (!m).wrapping_add(1) & 0xFFFF },
        };
    }
    let is64 = (lo >> 1) & 3 == 2;
    let mask = if is64 { (mask_hi as u64) << 32 | (mask_lo & !0xF) as u64 } else { (mask_lo & !0xF) as u64 };
    if mask == 0 {
        return Bar::None;
    }
    let size = if is64 { (!mask).wrapping_add(1) } else { (!(mask as u32)).wrapping_add(1) as u64 };
    let addr = if is64 { (hi as u64) << 32 | (lo & !0xF) as u64 } else { (lo & !0xF) as u64 };
    Bar::Memory { addr, size, prefetchable: lo & 8 != 0, is64 }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A model function: 64 words of configuration space.
    struct Model([u32; 64]);

    impl ConfigSpace for Model {
        fn read32(&self, offset: u8) -> u32 {
            self.0[offset as usize / 4]
        }
    }

    fn model(first: u8, chain: &[(u8, u8, u8)]) -> Model {
        let mut m = Model([0; 64]);
        m.0[1] = STATUS_CAP_LIST;
        m.0[CAP_POINTER as usize / 4] = first as u32;
        for &(at, id, next) in chain {
            m.0[at as usize / 4] = id as u32 | (next as u32) << 8;
        }
        m
    }

    #[test]
    fn a_well_formed_list_is_walked_in_order() {
        let m = model(0x98, &[(0x98, CAP_MSIX, 0x84), (0x84, 9, 0x40), (0x40, 9, 0)]);
        let (caps, n) = capabilities(&m).unwrap();
        assert_eq!(
            &caps[..n],
            &[Cap { id: CAP_MSIX, offset: 0x98 }, Cap { id: 9, offset: 0x84 }, Cap { id: 9, offset: 0x40 }]
        );
    }

    #[test]
    fn no_capability_list_bit_means_no_capabilities() {
        let mut m = model(0x40, &[(0x40, 9, 0)]);
        m.0[1] = 0;
        assert_eq!(capabilities(&m).unwrap().1, 0);
    }

    #[test]
    fn a_looping_list_is_refused() {
        let m = model(0x40, &[(0x40, 9, 0x50), (0x50, 9, 0x60), (0x60, 9, 0x50)]);
        assert_eq!(capabilities(&m).unwrap_err(), CapError::Loop(0x50));
        let selfloop = model(0xFC, &[(0xFC, 9, 0xFF)]);
        assert_eq!(capabilities(&selfloop).unwrap_err(), CapError::Loop(0xFC));
    }

    #[test]
    fn a_pointer_into_the_header_is_refused() {
        let m = model(0x40, &[(0x40, 9, 0x10)]);
        assert_eq!(capabilities(&m).unwrap_err(), CapError::OutOfRange(0x10));
        assert_eq!(capabilities(&model(0x3C, &[])).unwrap_err(), CapError::OutOfRange(0x3C));
    }

    #[test]
    fn the_longest_possible_list_fits() {
        let chain: Vec<(u8, u8, u8)> = (0..MAX_CAPS)
            .map(|i| (0x40 + 4 * i as u8, 9, if i + 1 < MAX_CAPS { 0x44 + 4 * i as u8 } else { 0 }))
            .collect();
        assert_eq!(capabilities(&model(0x40, &chain)).unwrap().1, MAX_CAPS);
    }

    #[test]
    fn msix_location_is_decoded() {
        let mut m = Model([0; 64]);
        m.0[0x98 / 4] = 0x11 | (0x0002 << 16);
        m.0[0x9C / 4] = 0x3000 | 1;
        assert_eq!(msix(&m, 0x98), Msix { cap: 0x98, entries: 3, table_bar: 1, table_offset: 0x3000 });
    }

    #[test]
    fn bars_are_sized() {
        assert_eq!(
            decode_bar(0xFEBD_1000, 0, 0xFFFF_F000, 0),
            Bar::Memory { addr: 0xFEBD_1000, size: 0x1000, prefetchable: false, is64: false }
        );
        assert_eq!(
            decode_bar(0xFE00_000C, 0x1, 0xFFFF_C00C, 0xFFFF_FFFF),
            Bar::Memory { addr: 0x1_FE00_0000, size: 0x4000, prefetchable: true, is64: true }
        );
        assert_eq!(decode_bar(0xC041, 0, 0xFFFF_FFE1, 0), Bar::Io { port: 0xC040, size: 0x20 });
        assert_eq!(decode_bar(0, 0, 0, 0), Bar::None);
    }
}

/// A function reached through the legacy configuration ports.
#[cfg(target_os = "none")]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Function {
    pub bus: u8,
    pub device: u8,
    pub function: u8,
}

#[cfg(target_os = "none")]
impl Function {
    fn select(&self, offset: u8) {
        let addr = 1 << 31
            | (self.bus as u32) << 16
            | (self.device as u32) << 11
            | (self.function as u32) << 8
            | (offset & 0xFC) as u32;
        // SAFETY: the configuration address port; selecting a register has
        // no other effect.
        unsafe { core::arch::asm!("out dx, eax", in("dx") 0xCF8u16, in("eax") addr, options(nostack)) };
    }

    pub fn write32(&self, offset: u8, value: u32) {
        self.select(offset);
        // SAFETY: the configuration data port, for the register selected;
        // callers keep to registers of devices the kernel manages.
        unsafe { core::arch::asm!("out dx, eax", in("dx") 0xCFCu16, in("eax") value, options(nostack)) };
    }
}

#[cfg(target_os = "none")]
impl ConfigSpace for Function {
    fn read32(&self, offset: u8) -> u32 {
        self.select(offset);
        let v: u32;
        // SAFETY: reading the configuration data port has no side effects.
        unsafe { core::arch::asm!("in eax, dx", in("dx") 0xCFCu16, out("eax") v, options(nostack)) };
        v
    }
}

/// What enumeration found about one function.
#[cfg(target_os = "none")]
#[derive(Clone, Copy, Debug, Default)]
pub struct Device {
    pub at: Function,
    pub vendor: u16,
    pub id: u16,
    pub bars: [Bar; 6],
    /// Each BAR register's value, and what it reads back after all ones
    /// are written (for emulating a driver's sizing of it).
    pub bar_raw: [u32; 6],
    pub bar_mask: [u32; 6],
    pub msix: Option<Msix>,
    /// The INTx line the firmware assigned (none when the function has no
    /// interrupt pin or no line was assigned).
    pub line: Option<u8>,
}

#[cfg(target_os = "none")]
const COMMAND_IO_MEMORY_MASTER: u32 = 0x7;

/// Sizes the six BARs of a type-0 function (decoding off meanwhile).
#[cfg(target_os = "none")]
fn size_bars(d: &mut Device) {
    let f = d.at;
    let command = f.read32(4);
    f.write32(4, command & 0xFFFF & !COMMAND_IO_MEMORY_MASTER);
    for i in 0..6 {
        let off = 0x10 + 4 * i as u8;
        d.bar_raw[i] = f.read32(off);
        f.write32(off, !0);
        d.bar_mask[i] = f.read32(off);
        f.write32(off, d.bar_raw[i]);
    }
    f.write32(4, command & 0xFFFF);
    let mut i = 0;
    while i < 6 {
        let lo = d.bar_raw[i];
        let is64 = lo & 1 == 0 && (lo >> 1) & 3 == 2 && i < 5;
        let (hi, mask_hi) = if is64 { (d.bar_raw[i + 1], d.bar_mask[i + 1]) } else { (0, 0) };
        d.bars[i] = decode_bar(lo, hi, d.bar_mask[i], mask_hi);
        i += if is64 { 2 } else { 1 };
    }
}

/// Every function on bus 0 and the buses behind its bridges, calling
/// `found` with each usable one. A function whose capability list is
/// malformed is reported on the console and left alone.
#[cfg(target_os = "none")]
pub fn enumerate(found: &mut dyn FnMut(Device)) {
    let mut buses = [false; 256];
    buses[0] = true;
    for bus in 0..=255u8 {
        if !buses[bus as usize] {
            continue;
        }
        for device in 0..32 {
            for function in 0..8 {
                let f = Function { bus, device, function };
                let id = f.read32(0);
                if id & 0xFFFF == 0xFFFF {
                    if function == 0 {
                        break;
                    }
                    continue;
                }
                let header = (f.read32(0xC) >> 16) as u8;
                if header & 0x7F == 1 {
                    buses[(f.read32(0x18) >> 8) as u8 as usize] = true;
                } else if header & 0x7F == 0 {
                    if let Some(d) = probe(f, id) {
                        found(d);
                    }
                }
                if function == 0 && header & 0x80 == 0 {
                    break;
                }
            }
        }
    }
}

#[cfg(target_os = "none")]
fn probe(f: Function, id: u32) -> Option<Device> {
    let (caps, n) = match capabilities(&f) {
        Ok(c) => c,
        Err(e) => {
            crate::kprintln!(
                "pci {:02x}:{:02x}.{}: capability list rejected ({e}); device left alone",
                f.bus,
                f.device,
                f.function
            );
            return None;
        }
    };
    let msix = caps[..n].iter().find(|c| c.id == CAP_MSIX).map(|c| msix(&f, c.offset));
    let intr = f.read32(0x3C);
    let line = (intr >> 8 & 0xFF != 0 && intr & 0xFF < 0xFF).then_some(intr as u8);
    let mut d = Device { at: f, vendor: id as u16, id: (id >> 16) as u16, msix, line, ..Device::default() };
    size_bars(&mut d);
    Some(d)
}
