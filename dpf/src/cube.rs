//! A *cube*: the set of frames that satisfy a conjunction of masked byte
//! equalities (`frame[off] & mask == value`) and a minimum length. It is
//! the canonical form of a filter (DPF's "atoms"), and the claim the
//! protection rules compare: two cubes share a frame exactly when no byte
//! both constrain disagrees under both masks.

use alloc::vec::Vec;

/// `frame[off] & mask == value` (`value` has no bits outside `mask`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ByteTest {
    pub off: u16,
    pub mask: u8,
    pub value: u8,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Cube {
    /// Sorted by offset, one entry per byte, masks non-zero.
    tests: Vec<ByteTest>,
    /// Frames shorter than this are outside the cube.
    pub min_len: u16,
}

/// A fixed slice of the frame the merged tree tests as one key. The
/// boundaries follow Ethernet + IPv4 (header length 20) + TCP/UDP so that
/// a port or an address is one lookup; beyond byte 38, 4-byte words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    pub start: u16,
    pub len: u8,
}

/// One field of a cube: `field(frame) & mask == value`, big-endian.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FieldTest {
    pub field: Field,
    pub mask: u64,
    pub value: u64,
}

const HEAD: [(u16, u8); 15] = [
    (0, 6),  // Ethernet destination
    (6, 6),  // Ethernet source
    (12, 2), // EtherType
    (14, 1), // IPv4 version and header length
    (15, 1), // type of service
    (16, 2), // total length
    (18, 2), // identification
    (20, 2), // flags, fragment offset
    (22, 1), // time to live
    (23, 1), // protocol
    (24, 2), // header checksum
    (26, 4), // source address
    (30, 4), // destination address
    (34, 2), // source port
    (36, 2), // destination port
];
const HEAD_END: u16 = 38;

impl Field {
    /// The field that holds byte `off`.
    pub fn of(off: u16) -> Field {
        if off >= HEAD_END {
            let start = HEAD_END + (off - HEAD_END) / 4 * 4;
            return Field { start, len: 4 };
        }
        let (start, len) = HEAD.iter().copied().rfind(|&(s, _)| s <= off).unwrap_or((0, 6));
        Field { start, len }
    }

    /// The field's bytes as a big-endian number, or `None` when the frame
    /// ends inside it (a truncated frame never matches by reading past
    /// its end).
    pub fn load(self, frame: &[u8]) -> Option<u64> {
        let start = usize::from(self.start);
        let bytes = frame.get(start..start + usize::from(self.len))?;
        Some(bytes.iter().fold(0u64, |acc, &b| acc << 8 | u64::from(b)))
    }
}

impl Cube {
    /// Every frame.
    pub fn universal() -> Cube {
        Cube::default()
    }

    pub fn tests(&self) -> &[ByteTest] {
        &self.tests
    }

    /// Adds `frame[off] & mask == value & mask`; false (and the cube
    /// unchanged) when it contradicts what the cube already requires.
    pub fn constrain(&mut self, off: u16, mask: u8, value: u8) -> bool {
        let value = value & mask;
        if mask == 0 {
            return true;
        }
        match self.tests.binary_search_by_key(&off, |t| t.off) {
            Ok(i) => {
                let t = &mut self.tests[i];
                if (t.value ^ value) & t.mask & mask != 0 {
                    return false;
                }
                t.mask |= mask;
                t.value |= value;
                true
            }
            Err(i) => {
                self.tests.insert(i, ByteTest { off, mask, value });
                true
            }
        }
    }

    /// The bits of byte `off` this cube fixes: (mask, value).
    pub fn known(&self, off: u16) -> (u8, u8) {
        match self.tests.binary_search_by_key(&off, |t| t.off) {
            Ok(i) => (self.tests[i].mask, self.tests[i].value),
            Err(_) => (0, 0),
        }
    }

    pub fn contains(&self, frame: &[u8]) -> bool {
        frame.len() >= usize::from(self.min_len)
            && self
                .tests
                .iter()
                .all(|t| frame.get(usize::from(t.off)).is_some_and(|&b| b & t.mask == t.value))
    }

    /// Whether some frame lies in both cubes (lengths never conflict: a
    /// longer frame satisfies both minimums).
    pub fn intersects(&self, other: &Cube) -> bool {
        let (mut a, mut b) = (self.tests.iter().peekable(), other.tests.iter().peekable());
        while let (Some(x), Some(y)) = (a.peek(), b.peek()) {
            match x.off.cmp(&y.off) {
                core::cmp::Ordering::Less => _ = a.next(),
                core::cmp::Ordering::Greater => _ = b.next(),
                core::cmp::Ordering::Equal => {
                    if (x.value ^ y.value) & x.mask & y.mask != 0 {
                        return false;
                    }
                    a.next();
                    b.next();
                }
            }
        }
        true
    }

    /// How many bits the cube fixes: the more, the more specific.
    pub fn bits(&self) -> u32 {
        self.tests.iter().map(|t| t.mask.count_ones()).sum()
    }

    /// The cube as field tests, in frame order (what the merged tree
    /// walks).
    pub fn fields(&self) -> Vec<FieldTest> {
        let mut out: Vec<FieldTest> = Vec::new();
        for t in &self.tests {
            let field = Field::of(t.off);
            let shift = 8 * u32::from(field.start + u16::from(field.len) - 1 - t.off);
            let (mask, value) = (u64::from(t.mask) << shift, u64::from(t.value) << shift);
            match out.last_mut() {
                Some(last) if last.field == field => {
                    last.mask |= mask;
                    last.value |= value;
                }
                _ => out.push(FieldTest { field, mask, value }),
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_cover_every_byte_once() {
        for off in 0..200u16 {
            let f = Field::of(off);
            assert!(f.start <= off && off < f.start + u16::from(f.len), "byte {off} in {f:?}");
            for o in f.start..f.start + u16::from(f.len) {
                assert_eq!(Field::of(o), f);
            }
        }
    }

    #[test]
    fn contradictions_and_intersection() {
        let mut a = Cube::universal();
        assert!(a.constrain(36, 0xff, 0));
        assert!(a.constrain(37, 0xff, 80));
        assert!(!a.constrain(37, 0x0f, 1), "80 & 0xf is 0");
        let mut b = Cube::universal();
        b.constrain(37, 0xff, 81);
        assert!(!a.intersects(&b));
        let mut c = Cube::universal();
        c.constrain(37, 0xf0, 0x50);
        assert!(a.intersects(&c) && c.intersects(&a));
        assert!(Cube::universal().intersects(&a));
        let f = a.fields();
        assert_eq!(f, [FieldTest { field: Field { start: 36, len: 2 }, mask: 0xffff, value: 80 }]);
    }

    #[test]
    fn truncated_frames_are_outside() {
        let mut a = Cube::universal();
        a.constrain(37, 0xff, 80);
        a.min_len = 38;
        let mut frame = [0u8; 38];
        frame[37] = 80;
        assert!(a.contains(&frame));
        assert!(!a.contains(&frame[..37]));
        assert_eq!(Field::of(36).load(&frame[..37]), None);
    }
}
