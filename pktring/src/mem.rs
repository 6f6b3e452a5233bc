//! Access to the ring's memory, which the other side may change at any
//! moment: each access reads or writes once (the kernel's implementation
//! uses volatile accesses to the pinned frames; writes become visible in
//! program order, which x86 gives with a compiler fence).

/// The bytes of one ring. Out-of-range accesses are a bug of the caller:
/// implementations ignore such writes and read zeros, never fault.
pub trait RingMem {
    fn read_u32(&self, off: usize) -> u32;
    fn write_u32(&mut self, off: usize, v: u32);
    fn write_u64(&mut self, off: usize, v: u64);
    fn read_bytes(&self, off: usize, dst: &mut [u8]);
    fn write_bytes(&mut self, off: usize, src: &[u8]);
}

/// A ring in an ordinary byte slice (the library's view of its own pages,
/// and the tests').
pub struct SliceMem<'a>(pub &'a mut [u8]);

impl RingMem for SliceMem<'_> {
    fn read_u32(&self, off: usize) -> u32 {
        self.0.get(off..off + 4).map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn write_u32(&mut self, off: usize, v: u32) {
        self.write_bytes(off, &v.to_le_bytes());
    }

    fn write_u64(&mut self, off: usize, v: u64) {
        self.write_bytes(off, &v.to_le_bytes());
    }

    fn read_bytes(&self, off: usize, dst: &mut [u8]) {
        match self.0.get(off..off + dst.len()) {
            Some(src) => dst.copy_from_slice(src),
            None => dst.fill(0),
        }
    }

    fn write_bytes(&mut self, off: usize, src: &[u8]) {
        if let Some(dst) = self.0.get_mut(off..off + src.len()) {
            dst.copy_from_slice(src);
        }
    }
}
