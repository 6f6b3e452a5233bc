//! A disk that records every write and flush, and the crash states a
//! recorded run can leave: everything up to a flush is on disk, and of the
//! writes after it any subset may be (a disk reorders what it has not
//! flushed). Each block of a multi-block request counts on its own: a
//! request is not atomic either.

use alloc::boxed::Box;
use alloc::vec::Vec;

use xn::disk::{span, Disk, DiskError};

use crate::BLOCK;

/// One recorded event.
#[derive(Clone, Debug)]
pub enum Event {
    Write(u64, Box<[u8; BLOCK]>),
    Flush,
}

/// A disk image in memory that records what happens to it.
#[derive(Clone)]
pub struct RecDisk {
    pub data: Vec<u8>,
    pub log: Vec<Event>,
}

impl RecDisk {
    pub fn new(image: Vec<u8>) -> RecDisk {
        RecDisk { data: image, log: Vec::new() }
    }
}

impl Disk for RecDisk {
    fn blocks(&self) -> u64 {
        (self.data.len() / BLOCK) as u64
    }
    fn read(&mut self, start: u64, buf: &mut [u8]) -> Result<(), DiskError> {
        let r = span(self.blocks(), start, buf.len())?;
        buf.copy_from_slice(&self.data[r]);
        Ok(())
    }
    fn write(&mut self, start: u64, buf: &[u8]) -> Result<(), DiskError> {
        let r = span(self.blocks(), start, buf.len())?;
        self.data[r].copy_from_slice(buf);
        for (i, chunk) in buf.chunks_exact(BLOCK).enumerate() {
            let mut b = Box::new([0u8; BLOCK]);
            b.copy_from_slice(chunk);
            self.log.push(Event::Write(start + i as u64, b));
        }
        Ok(())
    }
    fn flush(&mut self) -> Result<(), DiskError> {
        self.log.push(Event::Flush);
        Ok(())
    }
}

/// A crash state: epoch `epoch` (the writes after the `epoch`-th flush)
/// with the writes of it at `kept` (indices into the log) on disk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Crash {
    pub epoch: usize,
    /// Log index where the epoch starts (everything before is durable).
    pub from: usize,
    pub kept: Vec<usize>,
}

/// A small deterministic generator (xorshift).
#[derive(Clone, Debug)]
pub struct Rng(pub u64);

impl Rng {
    pub fn step(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.step() % n.max(1)
    }
}

/// Epochs of at most this many writes are enumerated exhaustively (every
/// subset); longer ones get every prefix and `samples` random subsets.
pub const EXHAUSTIVE: usize = 10;

/// Every crash state of a log (exhaustive or sampled per epoch, see
/// `EXHAUSTIVE`).
pub fn crashes(log: &[Event], samples: usize, rng: &mut Rng) -> Vec<Crash> {
    let mut out = Vec::new();
    let mut from = 0;
    let mut epoch = 0;
    loop {
        let end = log[from..].iter().position(|e| matches!(e, Event::Flush)).map_or(log.len(), |p| from + p);
        let writes: Vec<usize> = (from..end).collect();
        let n = writes.len();
        if n <= EXHAUSTIVE {
            for mask in 0u32..(1 << n) {
                let kept = (0..n).filter(|i| mask & (1 << i) != 0).map(|i| writes[i]).collect();
                out.push(Crash { epoch, from, kept });
            }
        } else {
            for k in 0..=n {
                out.push(Crash { epoch, from, kept: writes[..k].to_vec() });
            }
            for _ in 0..samples {
                let kept = writes.iter().copied().filter(|_| rng.step() & 1 == 1).collect();
                out.push(Crash { epoch, from, kept });
            }
        }
        if end >= log.len() {
            return out;
        }
        from = end + 1;
        epoch += 1;
    }
}

/// The image a crash state leaves, from the image before the log.
pub fn image(base: &[u8], log: &[Event], c: &Crash) -> Vec<u8> {
    let mut img = base.to_vec();
    let mut apply = |i: usize| {
        if let Event::Write(b, data) = &log[i] {
            let at = *b as usize * BLOCK;
            img[at..at + BLOCK].copy_from_slice(&data[..]);
        }
    };
    for i in 0..c.from {
        apply(i);
    }
    for &i in &c.kept {
        apply(i);
    }
    img
}

/// A fingerprint of a crash image's difference from the base (to count
/// distinct states).
pub fn fingerprint(log: &[Event], c: &Crash) -> u64 {
    // The last write to each block among the applied ones decides it.
    let mut last: alloc::collections::BTreeMap<u64, usize> = alloc::collections::BTreeMap::new();
    for i in (0..c.from).chain(c.kept.iter().copied()) {
        if let Event::Write(b, _) = &log[i] {
            last.insert(*b, i);
        }
    }
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for (b, i) in last {
        if let Event::Write(_, data) = &log[i] {
            for x in b.to_le_bytes().iter().chain(data.iter()) {
                h = (h ^ u64::from(*x)).wrapping_mul(0x0100_0000_01b3);
            }
        }
    }
    h
}
