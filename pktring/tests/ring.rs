//! Producer and consumer logic, including a hostile other side that
//! scribbles on every word of the ring between operations.

use abi::net::{ring_bytes, RingHeader, RING_SLOTS_OFFSET, SLOT_TRUNCATED};
use bpf::gen::Rng;
use bpf::{Memory, ProgramSpec};
use core::mem::offset_of;
use pktring::{
    nonempty_predicate, Consumer, Corrupt, Geometry, Producer, Push, RingError, RingMem, SliceMem, Slot,
    PREDICATE_CTX_SIZE,
};

/// Ring memory that records every access outside the ring or, for the
/// kernel's side, any write to a word only the other side owns.
struct Watched {
    bytes: Vec<u8>,
    /// Offsets (ranges) the side under test may write.
    may_write: Vec<core::ops::Range<usize>>,
    violations: Vec<String>,
}

impl Watched {
    fn check(&mut self, off: usize, n: usize, write: bool) -> bool {
        let inside = off.checked_add(n).is_some_and(|e| e <= self.bytes.len());
        if !inside {
            self.violations.push(format!("access {off}+{n} outside {} bytes", self.bytes.len()));
            return false;
        }
        if write && !self.may_write.iter().any(|r| r.start <= off && off + n <= r.end) {
            self.violations.push(format!("write {off}+{n} to a word it does not own"));
        }
        true
    }
}

impl RingMem for Watched {
    fn read_u32(&self, off: usize) -> u32 {
        let b = &self.bytes[off..off + 4];
        u32::from_le_bytes([b[0], b[1], b[2], b[3]])
    }
    fn write_u32(&mut self, off: usize, v: u32) {
        if self.check(off, 4, true) {
            self.bytes[off..off + 4].copy_from_slice(&v.to_le_bytes());
        }
    }
    fn write_u64(&mut self, off: usize, v: u64) {
        if self.check(off, 8, true) {
            self.bytes[off..off + 8].copy_from_slice(&v.to_le_bytes());
        }
    }
    fn read_bytes(&self, off: usize, dst: &mut [u8]) {
        dst.copy_from_slice(&self.bytes[off..off + dst.len()]);
    }
    fn write_bytes(&mut self, off: usize, src: &[u8]) {
        if self.check(off, src.len(), true) {
            self.bytes[off..off + src.len()].copy_from_slice(src);
        }
    }
}

const HEAD: usize = offset_of!(RingHeader, head);
const TAIL: usize = offset_of!(RingHeader, tail);

fn frame(i: u32, len: usize) -> Vec<u8> {
    (0..len).map(|k| (i as usize * 7 + k) as u8).collect()
}

#[test]
fn geometry_is_validated() {
    assert_eq!(Geometry::new(0, 2048, 1 << 20), Err(RingError::BadSlots));
    assert_eq!(Geometry::new(3, 2048, 1 << 20), Err(RingError::BadSlots));
    assert_eq!(Geometry::new(8192, 2048, 1 << 30), Err(RingError::BadSlots));
    assert_eq!(Geometry::new(8, 2049, 1 << 20), Err(RingError::BadSlotSize));
    assert_eq!(Geometry::new(8, 4096, 1 << 20), Err(RingError::BadSlotSize));
    assert_eq!(Geometry::new(8, 32, 1 << 20), Err(RingError::BadSlotSize));
    assert_eq!(Geometry::new(8, 2048, ring_bytes(8, 2048) - 1), Err(RingError::TooSmall));
    assert!(Geometry::new(8, 2048, ring_bytes(8, 2048)).is_ok());
}

#[test]
fn frames_pass_in_order_across_wraparound_with_overflow_and_truncation() {
    let geo = Geometry::new(8, 256, ring_bytes(8, 256)).unwrap();
    let mut bytes = vec![0u8; ring_bytes(8, 256)];
    let mut mem = SliceMem(&mut bytes);
    let mut p = Producer::attach(geo, &mut mem);
    let mut c = Consumer::attach(geo, &mut mem);
    let mut rng = Rng::new(3);
    let (mut sent, mut got, mut full) = (0u32, 0u32, 0u64);
    let mut expect = std::collections::VecDeque::new();
    let mut buf = vec![0u8; 2048];
    for _ in 0..20_000 {
        if rng.chance(55) {
            let len = rng.below(300) as usize;
            let f = frame(sent, len);
            match p.push(&mut mem, &f, 0) {
                Push::Full => full += 1,
                r => {
                    assert_eq!(r == Push::Truncated, len > 248);
                    expect.push_back(f);
                }
            }
            sent += 1;
        } else if let Some(slot) = c.pop(&mut mem, &mut buf).unwrap() {
            let want = expect.pop_front().unwrap();
            let Slot::Frame { len, flags } = slot else { panic!("malformed") };
            assert_eq!(&buf[..len], &want[..len.min(want.len())]);
            assert_eq!(flags & SLOT_TRUNCATED != 0, want.len() > 248);
            got += 1;
        }
    }
    assert!(got > 5000 && full > 100, "{got} {full}");
    assert_eq!(p.overflow(), full);
    let overflow_word = u64::from_le_bytes(bytes[16..24].try_into().unwrap());
    assert_eq!(overflow_word, full);
}

#[test]
fn a_hostile_consumer_cannot_make_the_kernel_write_outside_its_words() {
    let geo = Geometry::new(16, 128, ring_bytes(16, 128)).unwrap();
    let size = ring_bytes(16, 128);
    let mut mem = Watched {
        bytes: vec![0u8; size],
        // The kernel may write head, overflow, damaged and the slots.
        may_write: vec![8..12, 16..32, RING_SLOTS_OFFSET..size],
        violations: Vec::new(),
    };
    let mut p = Producer::attach(geo, &mut mem);
    let mut rng = Rng::new(0xbad);
    let mut stored = 0u32;
    for i in 0..50_000u32 {
        // The consumer writes anything anywhere: its tail (near, far,
        // behind the head), the geometry words, the head, slot lengths.
        match rng.below(6) {
            0 => mem.bytes[TAIL..TAIL + 4]
                .copy_from_slice(&(p.head().wrapping_sub(rng.below(20) as u32)).to_le_bytes()),
            1 => mem.bytes[TAIL..TAIL + 4].copy_from_slice(&(rng.next_u64() as u32).to_le_bytes()),
            2 => {
                let at = rng.below(size as u64 - 4) as usize;
                mem.bytes[at..at + 4].copy_from_slice(&(rng.next_u64() as u32).to_le_bytes());
            }
            3 => mem.bytes[HEAD..HEAD + 4].copy_from_slice(&u32::MAX.to_le_bytes()),
            _ => {}
        }
        let before = p.head();
        let room = p.room(&mem);
        match p.push(&mut mem, &frame(i, rng.below(400) as usize), 0) {
            Push::Full => assert_eq!(p.head(), before),
            _ => {
                assert!(room > 0);
                assert_eq!(p.head(), before.wrapping_add(1));
                // Its own counter, not what the consumer scribbled.
                assert_eq!(mem.read_u32(HEAD), p.head());
                stored += 1;
            }
        }
    }
    assert!(mem.violations.is_empty(), "{:?}", &mem.violations[..mem.violations.len().min(5)]);
    assert!(stored > 1000 && p.overflow() > 1000, "{stored} {}", p.overflow());
}

#[test]
fn a_hostile_producer_cannot_make_the_kernel_read_outside_the_ring() {
    // The transmit direction: the owner produces, the kernel consumes.
    let geo = Geometry::new(8, 2048, ring_bytes(8, 2048)).unwrap();
    let size = ring_bytes(8, 2048);
    let mut mem = Watched { bytes: vec![0u8; size], may_write: vec![12..16, 24..32], violations: Vec::new() };
    let mut c = Consumer::attach(geo, &mut mem);
    let mut rng = Rng::new(0x7a);
    let mut buf = vec![0u8; 1514];
    let (mut frames, mut malformed, mut corrupt) = (0, 0, 0);
    for _ in 0..50_000 {
        match rng.below(4) {
            0 => {
                let h = c.tail().wrapping_add(rng.below(12) as u32);
                mem.bytes[HEAD..HEAD + 4].copy_from_slice(&h.to_le_bytes());
            }
            1 => {
                let at = RING_SLOTS_OFFSET + rng.below(8) as usize * 2048;
                let len = if rng.chance(50) { rng.below(1515) as u32 } else { rng.next_u64() as u32 };
                mem.bytes[at..at + 4].copy_from_slice(&len.to_le_bytes());
            }
            2 => {
                let at = rng.below(size as u64 - 4) as usize;
                mem.bytes[at..at + 4].copy_from_slice(&(rng.next_u64() as u32).to_le_bytes());
            }
            _ => {}
        }
        let before = c.tail();
        match c.pop(&mut mem, &mut buf) {
            Err(Corrupt) => {
                corrupt += 1;
                assert_eq!(c.tail(), before, "a refused batch changes nothing");
            }
            Ok(None) => assert_eq!(c.tail(), before),
            Ok(Some(Slot::Frame { len, .. })) => {
                assert!(len <= 1514);
                frames += 1;
            }
            Ok(Some(Slot::Malformed)) => malformed += 1,
        }
    }
    assert!(mem.violations.is_empty(), "{:?}", &mem.violations[..mem.violations.len().min(5)]);
    assert!(frames > 1000 && malformed > 1000 && corrupt > 1000, "{frames} {malformed} {corrupt}");
}

#[test]
fn the_wakeup_predicate_is_true_exactly_when_frames_wait() {
    let spec = ProgramSpec::new(PREDICATE_CTX_SIZE).with_regions(&[64]);
    let pred = bpf::verify(&nonempty_predicate(), &spec).unwrap();
    let geo = Geometry::new(4, 64, ring_bytes(4, 64)).unwrap();
    let mut bytes = vec![0u8; ring_bytes(4, 64)];
    let ctx = [0u8; 16];
    let run = |b: &[u8]| bpf::run(&pred, &Memory { ctx: &ctx, regions: &[&b[..64]], packet: &[] }).unwrap();
    let mut mem = SliceMem(&mut bytes);
    let mut p = Producer::attach(geo, &mut mem);
    let mut c = Consumer::attach(geo, &mut mem);
    assert_eq!(run(mem.0), 0);
    p.push(&mut mem, &[1, 2, 3], 0);
    assert_eq!(run(mem.0), 1);
    let mut buf = [0u8; 56];
    c.pop(&mut mem, &mut buf).unwrap();
    assert_eq!(run(mem.0), 0);
}
