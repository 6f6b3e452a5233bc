//! The little of ACPI the kernel reads: the firmware's root pointer
//! (RSDP), its table of tables (XSDT, or the older RSDT) and the DMA
//! remapping table (DMAR), which says where the IOMMU's registers are
//! (Intel VT-d spec §8). Every checksum and length is checked before a
//! byte of a table is believed; a malformed table is refused with the
//! reason. Physical memory is read through `mem`, so that the host tests
//! can hand model memory.

/// Reads `len` bytes of physical memory at `pa`, if they exist.
pub type Mem<'a> = &'a dyn Fn(u64, usize) -> Option<&'a [u8]>;

/// Why no remapping unit was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AcpiError {
    NoRsdp,
    BadRsdp,
    /// A table's signature, length or checksum is wrong (its signature).
    BadTable(&'static str),
    NoDmar,
    /// The DMAR's remapping structures run past its end or are too short.
    BadStructure,
    NoUnit,
}

impl core::fmt::Display for AcpiError {
    fn fmt(&self, f: &mut core::fmt::Formatter) -> core::fmt::Result {
        match self {
            AcpiError::NoRsdp => write!(f, "no ACPI root pointer (RSDP) in the BIOS area"),
            AcpiError::BadRsdp => write!(f, "the ACPI root pointer's checksum or length is wrong"),
            AcpiError::BadTable(s) => write!(f, "ACPI table {s}: bad signature, length or checksum"),
            AcpiError::NoDmar => write!(f, "no DMAR table (no IOMMU)"),
            AcpiError::BadStructure => write!(f, "DMAR: a remapping structure runs past the table"),
            AcpiError::NoUnit => write!(f, "DMAR: no remapping unit for PCI segment 0"),
        }
    }
}

fn u16_at(b: &[u8], o: usize) -> u16 {
    u16::from_le_bytes([b[o], b[o + 1]])
}
fn u32_at(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes(b[o..o + 4].try_into().expect("4 bytes"))
}
fn u64_at(b: &[u8], o: usize) -> u64 {
    u64::from_le_bytes(b[o..o + 8].try_into().expect("8 bytes"))
}

fn sums_to_zero(b: &[u8]) -> bool {
    b.iter().fold(0u8, |s, &x| s.wrapping_add(x)) == 0
}

/// The RSDP in `area` (the BIOS area, 16-byte aligned): the address and
/// whether it is XSDT (true) or RSDT (false), after its checksums.
pub fn rsdp(area: &[u8]) -> Result<(u64, bool), AcpiError> {
    let at = (0..area.len().saturating_sub(20))
        .step_by(16)
        .find(|&o| &area[o..o + 8] == b"RSD PTR ")
        .ok_or(AcpiError::NoRsdp)?;
    let r = &area[at..];
    if !sums_to_zero(&r[..20]) {
        return Err(AcpiError::BadRsdp);
    }
    if r[15] >= 2 {
        let len = u32_at(r, 20) as usize;
        if r.len() < 36 || len < 36 || len > r.len() || !sums_to_zero(&r[..len]) {
            return Err(AcpiError::BadRsdp);
        }
        Ok((u64_at(r, 24), true))
    } else {
        Ok((u32_at(r, 16) as u64, false))
    }
}

/// The table at `pa` whose signature must be `sig`: its bytes, after its
/// length and checksum.
pub fn table<'a>(mem: Mem<'a>, pa: u64, sig: &'static str) -> Result<&'a [u8], AcpiError> {
    let bad = AcpiError::BadTable(sig);
    let head = mem(pa, 36).ok_or(bad)?;
    let len = u32_at(head, 4) as usize;
    if &head[..4] != sig.as_bytes() || !(36..=1 << 20).contains(&len) {
        return Err(bad);
    }
    let t = mem(pa, len).ok_or(bad)?;
    if !sums_to_zero(t) {
        return Err(bad);
    }
    Ok(t)
}

/// The DMAR table, found through the root table at `root` (XSDT: 8-byte
/// entries; RSDT: 4-byte ones).
pub fn dmar<'a>(mem: Mem<'a>, root: u64, xsdt: bool) -> Result<&'a [u8], AcpiError> {
    let (sig, width) = if xsdt { ("XSDT", 8) } else { ("RSDT", 4) };
    let t = table(mem, root, sig)?;
    for e in t[36..].chunks_exact(width) {
        let pa = if xsdt { u64_at(e, 0) } else { u32_at(e, 0) as u64 };
        if mem(pa, 4).is_some_and(|h| h == b"DMAR") {
            return table(mem, pa, "DMAR");
        }
    }
    Err(AcpiError::NoDmar)
}

/// A remapping unit (DRHD): its register base, and the devices it
/// translates: every PCI device of segment 0 (`all`), or the endpoints
/// its device scope lists by bus, device and function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unit {
    pub base: u64,
    pub all: bool,
    pub devices: [Option<(u8, u8, u8)>; 16],
}

impl Unit {
    pub fn covers(&self, bus: u8, device: u8, function: u8) -> bool {
        self.all || self.devices.contains(&Some((bus, device, function)))
    }
}

/// The first remapping unit of PCI segment 0, every structure and scope
/// of the table checked. Endpoints behind bridges (a scope path of more
/// than one step) are not listed: the kernel does not follow bridges
/// here, so such a device is not covered.
pub fn unit(dmar: &[u8]) -> Result<Unit, AcpiError> {
    let mut o = 48;
    let mut found = None;
    while o < dmar.len() {
        if o + 4 > dmar.len() {
            return Err(AcpiError::BadStructure);
        }
        let (kind, len) = (u16_at(dmar, o), u16_at(dmar, o + 2) as usize);
        if len < 4 || o + len > dmar.len() || (kind == 0 && len < 16) {
            return Err(AcpiError::BadStructure);
        }
        // DRHD: flags (bit 0: all PCI devices), segment, register base,
        // then device scopes.
        if kind == 0 && u16_at(dmar, o + 6) == 0 {
            let mut u = Unit { base: u64_at(dmar, o + 8), all: dmar[o + 4] & 1 != 0, devices: [None; 16] };
            let mut n = 0;
            let mut at = o + 16;
            while at < o + len {
                let slen = *dmar.get(at + 1).ok_or(AcpiError::BadStructure)? as usize;
                if slen < 6 || at + slen > o + len || !(slen - 6).is_multiple_of(2) {
                    return Err(AcpiError::BadStructure);
                }
                // Type 1: a PCI endpoint; start bus, then one (device,
                // function) step.
                if dmar[at] == 1 && slen == 8 && n < u.devices.len() {
                    u.devices[n] = Some((dmar[at + 5], dmar[at + 6], dmar[at + 7]));
                    n += 1;
                }
                at += slen;
            }
            found = found.or(Some(u));
        }
        o += len;
    }
    found.ok_or(AcpiError::NoUnit)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seal(t: &mut [u8], at: usize) {
        t[at] = 0;
        t[at] = 0u8.wrapping_sub(t.iter().fold(0u8, |s, &x| s.wrapping_add(x)));
    }

    fn header(sig: &[u8; 4], body: &[u8]) -> Vec<u8> {
        let mut t = vec![0u8; 36];
        t[..4].copy_from_slice(sig);
        t.extend_from_slice(body);
        let n = t.len() as u32;
        t[4..8].copy_from_slice(&n.to_le_bytes());
        seal(&mut t, 9);
        t
    }

    fn drhd(flags: u8, base: u64) -> Vec<u8> {
        drhd_scoped(flags, base, &[])
    }

    /// A DRHD with device scopes (type, start bus, path bytes).
    fn drhd_scoped(flags: u8, base: u64, scopes: &[(u8, u8, &[u8])]) -> Vec<u8> {
        let mut s = vec![0u8; 16];
        s[4] = flags;
        s[8..16].copy_from_slice(&base.to_le_bytes());
        for (kind, bus, path) in scopes {
            s.extend_from_slice(&[*kind, 6 + path.len() as u8, 0, 0, 0, *bus]);
            s.extend_from_slice(path);
        }
        let n = s.len() as u16;
        s[2..4].copy_from_slice(&n.to_le_bytes());
        s
    }

    fn dmar_body(structs: &[u8]) -> Vec<u8> {
        let mut b = vec![0u8; 12];
        b[0] = 38;
        b.extend_from_slice(structs);
        b
    }

    /// Model memory: tables at fixed addresses.
    struct Model(Vec<(u64, Vec<u8>)>);
    impl Model {
        fn read(&self, pa: u64, len: usize) -> Option<&[u8]> {
            self.0.iter().find_map(|(at, t)| {
                let o = pa.checked_sub(*at)? as usize;
                t.get(o..o + len)
            })
        }
    }

    fn rsdp_v2(xsdt: u64) -> Vec<u8> {
        let mut r = vec![0u8; 36];
        r[..8].copy_from_slice(b"RSD PTR ");
        r[15] = 2;
        r[20..24].copy_from_slice(&36u32.to_le_bytes());
        r[24..32].copy_from_slice(&xsdt.to_le_bytes());
        seal(&mut r[..20], 8);
        seal(&mut r, 32);
        r
    }

    #[test]
    fn finds_the_unit_through_rsdp_xsdt_and_dmar() {
        let mut area = vec![0u8; 64];
        area.extend(rsdp_v2(0x1000));
        assert_eq!(rsdp(&area), Ok((0x1000, true)));
        let xsdt = header(b"XSDT", &[0x3000u64.to_le_bytes(), 0x2000u64.to_le_bytes()].concat());
        // QEMU's shape: one unit listing an I/O APIC, endpoints, and
        // (here) one behind a bridge, which is not covered.
        let scopes: &[(u8, u8, &[u8])] =
            &[(3, 0xFF, &[0, 0]), (1, 0, &[2, 0]), (1, 0, &[3, 1]), (1, 0, &[1, 0, 0, 0])];
        let dmar_t = header(b"DMAR", &dmar_body(&drhd_scoped(0, 0xFED9_0000, scopes)));
        let m = Model(vec![(0x1000, xsdt), (0x2000, dmar_t), (0x3000, header(b"APIC", &[0; 8]))]);
        let mem = |pa, n| m.read(pa, n);
        let u = unit(dmar(&mem, 0x1000, true).unwrap()).unwrap();
        assert_eq!(u.base, 0xFED9_0000);
        assert!(u.covers(0, 2, 0) && u.covers(0, 3, 1));
        assert!(!u.covers(0, 3, 0) && !u.covers(0, 0, 0) && !u.covers(1, 0, 0) && !u.all);
        let all = unit(&header(b"DMAR", &dmar_body(&drhd(1, 0xAAAA)))).unwrap();
        assert!(all.all && all.covers(5, 6, 7));
    }

    #[test]
    fn refuses_bad_checksums_lengths_and_structures() {
        let mut r = rsdp_v2(0x1000);
        r[24] ^= 1;
        assert_eq!(rsdp(&r), Err(AcpiError::BadRsdp));
        assert_eq!(rsdp(&[0u8; 64]), Err(AcpiError::NoRsdp));

        let mut bad_sum = header(b"XSDT", &0x2000u64.to_le_bytes());
        bad_sum[40] ^= 1;
        let m = Model(vec![(0x1000, bad_sum)]);
        let mem = |pa, n| m.read(pa, n);
        assert_eq!(dmar(&mem, 0x1000, true), Err(AcpiError::BadTable("XSDT")));

        // A length beyond the memory that holds the table.
        let mut long = header(b"XSDT", &0x2000u64.to_le_bytes());
        long[4] = 200;
        let m = Model(vec![(0x1000, long)]);
        let mem = |pa, n| m.read(pa, n);
        assert_eq!(dmar(&mem, 0x1000, true), Err(AcpiError::BadTable("XSDT")));

        // No DMAR among the tables.
        let m =
            Model(vec![(0x1000, header(b"RSDT", &0x2000u32.to_le_bytes())), (0x2000, header(b"APIC", &[]))]);
        let mem = |pa, n| m.read(pa, n);
        assert_eq!(dmar(&mem, 0x1000, false), Err(AcpiError::NoDmar));

        // A structure whose length runs past the table, or is zero.
        let mut s = drhd(1, 0xFED9_0000);
        s[2] = 40;
        assert_eq!(unit(&header(b"DMAR", &dmar_body(&s))), Err(AcpiError::BadStructure));
        let mut z = drhd(1, 0xFED9_0000);
        z[2] = 0;
        assert_eq!(unit(&header(b"DMAR", &dmar_body(&z))), Err(AcpiError::BadStructure));
        // A scope that runs past its unit.
        let mut sc = drhd_scoped(0, 1, &[(1, 0, &[2, 0])]);
        sc[17] = 12;
        assert_eq!(unit(&header(b"DMAR", &dmar_body(&sc))), Err(AcpiError::BadStructure));
        assert_eq!(unit(&header(b"DMAR", &dmar_body(&[]))), Err(AcpiError::NoUnit));
    }
}
