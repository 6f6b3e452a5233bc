//! The corrupt-image campaign (issue 23 §4): damage the metadata of real
//! images (bit flips, garbage, truncation, pointers out of range, into
//! XN's blocks, loops to an ancestor, claims of another file's blocks,
//! fields with checksums fixed so the checks behind them are reached) and
//! mount each through the same code the kernel and the library run. A
//! mount must refuse with a specific error or come up (and then `fsck`,
//! a walk of every file and a write must end), never panic, never hang:
//! every loop is bounded.

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use crate::check::fsck;
use crate::client::{Local, XnClient};
use crate::format::{ENTRIES, ENTRY, S_IFDIR, S_IFMT};
use crate::fs::{Fs, ROOT_INO};
use crate::sim::disk::Rng;
use crate::sim::workload::ROOT;
use crate::BLOCK;
use xn::MemDisk;

/// What became of the damaged images.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    pub images: u64,
    /// Mounted, and `fsck` found nothing (the damage hit unused bytes or
    /// a value that is valid).
    pub clean: u64,
    /// Mounted; `fsck` named the damage.
    pub found: u64,
    /// Refused at mount, by reason.
    pub refused: BTreeMap<String, u64>,
}

fn kind_of(e: &str) -> String {
    let end = e.find(['(', ' ', '{']).unwrap_or(e.len());
    String::from(&e[..end])
}

fn put(img: &mut [u8], at: usize, v: &[u8]) {
    if at + v.len() <= img.len() {
        img[at..at + v.len()].copy_from_slice(v);
    }
}

/// The blocks worth damaging: XN's own and every metadata block.
pub fn metadata_blocks(img: &[u8]) -> Vec<u64> {
    let Ok(local) = Local::mount(MemDisk::from_image(img.to_vec()), 1, ROOT) else { return Vec::new() };
    (0..local.nblocks()).filter(|&b| b < xn::RESERVED || local.claims(b).is_some()).collect()
}

/// A pointer worth planting: out of range, into XN's area, at metadata (a
/// loop or a duplicate claim), at a data block another file owns.
fn pointer(rng: &mut Rng, img: &[u8], meta: &[u64]) -> u64 {
    let n = (img.len() / BLOCK) as u64;
    match rng.below(8) {
        0 => 0,
        1 => 1 + rng.below(xn::RESERVED),
        2 => n + rng.below(1 << 20),
        3 => u64::MAX - rng.below(4),
        4 | 5 => meta[rng.below(meta.len() as u64) as usize],
        _ => xn::RESERVED + rng.below(n - xn::RESERVED),
    }
}

/// One damaged copy of `img`.
pub fn mutate(img: &[u8], meta: &[u64], rng: &mut Rng) -> Vec<u8> {
    let mut m = img.to_vec();
    let b = meta[rng.below(meta.len() as u64) as usize] as usize * BLOCK;
    let entry = b + ENTRY * (1 + rng.below(ENTRIES as u64) as usize);
    match rng.below(12) {
        0 | 1 => {
            for _ in 0..1 + rng.below(8) {
                let bit = rng.below(8 * BLOCK as u64) as usize;
                m[b + bit / 8] ^= 1 << (bit % 8);
            }
        }
        2 => {
            let at = rng.below(BLOCK as u64) as usize;
            let len = (1 + rng.below(64) as usize).min(BLOCK - at);
            for x in &mut m[b + at..b + at + len] {
                *x = rng.step() as u8;
            }
        }
        3 => {
            let keep = rng.below(img.len() as u64 / BLOCK as u64) as usize * BLOCK;
            m.truncate(keep);
        }
        4 => {
            let p = pointer(rng, img, meta);
            put(&mut m, entry + 64 + 16 * rng.below(4) as usize, &p.to_le_bytes());
        }
        5 => {
            let counts = [0u32, 1, 2, 1 << 31, u32::MAX, rng.step() as u32];
            put(
                &mut m,
                entry + 72 + 16 * rng.below(4) as usize,
                &counts[rng.below(6) as usize].to_le_bytes(),
            );
        }
        6 => {
            let p = pointer(rng, img, meta);
            put(&mut m, entry + 128, &p.to_le_bytes());
        }
        7 => {
            let p = pointer(rng, img, meta);
            put(&mut m, b + if rng.below(2) == 0 { 24 } else { 8 }, &p.to_le_bytes());
        }
        8 => {
            // Kind, name length, flags, mode, size.
            let field = [0usize, 1, 2, 4, 32][rng.below(5) as usize];
            let v = match rng.below(3) {
                0 => rng.step(),
                1 => u64::MAX,
                _ => [73u64, 4096, S_IFDIR as u64, 1, 3][rng.below(5) as usize],
            };
            let width =
                [1usize, 1, 2, 4, 8][[0usize, 1, 2, 4, 32].iter().position(|&f| f == field).unwrap_or(0)];
            put(&mut m, entry + field, &v.to_le_bytes()[..width]);
        }
        9 => m[b..b + BLOCK].fill(0),
        10 => {
            // A superblock field, with its checksum made right again.
            let field = [16usize, 24, 28, 32, 64 + 32, 64 + 40, 64 + 48][rng.below(7) as usize];
            let v = match rng.below(3) {
                0 => rng.step() % 1024,
                1 => u64::MAX,
                _ => rng.step(),
            };
            let width = if field == 24 || field == 28 || field == 32 {
                4
            } else if field == 112 {
                2
            } else {
                8
            };
            put(&mut m, field, &v.to_le_bytes()[..width]);
            resum_super(&mut m);
        }
        _ => {
            // UDF code bytes of the catalogue, with the record's checksum
            // fixed so the verifier has to judge them.
            let at = BLOCK + 64 + rng.below(2048) as usize;
            m[at] ^= 1 << rng.below(8);
            resum_record(&mut m);
        }
    }
    m
}

fn resum_super(m: &mut [u8]) {
    if m.len() < BLOCK {
        return;
    }
    m[36..40].fill(0);
    let sum = xn::layout::checksum(&m[..BLOCK]);
    m[36..40].copy_from_slice(&sum.to_le_bytes());
}

/// Recomputes the first catalogue record's checksum.
fn resum_record(m: &mut [u8]) {
    let c = BLOCK;
    if m.len() < c + 64 {
        return;
    }
    let lens: usize = (0..3)
        .map(|i| {
            u32::from_le_bytes(m[c + 16 + 4 * i..c + 20 + 4 * i].try_into().unwrap_or_default()) as usize
        })
        .sum();
    let end = c + 64 + 8 * lens.min(8192);
    if end > m.len() {
        return;
    }
    m[c + 28..c + 32].fill(0);
    let sum = xn::layout::checksum(&m[c..end]);
    m[c + 28..c + 32].copy_from_slice(&sum.to_le_bytes());
}

/// Mounts one image and uses it: `Ok(problems found by fsck)` or the
/// refusal.
pub fn try_image(img: Vec<u8>) -> Result<usize, String> {
    let local = Local::mount(MemDisk::from_image(img), 1, ROOT).map_err(|e| format!("{e:?}"))?;
    let mut fs = Fs::mount(local).map_err(|e| format!("{e:?}"))?;
    let problems = fsck(&mut fs).problems.len();
    // Walk and read everything (at most 64 KiB of each file), then write.
    let mut dirs = alloc::vec![ROOT_INO];
    let mut buf = alloc::vec![0u8; 1 << 16];
    let mut steps = 0u64;
    while let Some(d) = dirs.pop() {
        let Ok(list) = fs.readdir(d) else { continue };
        for (_, ino, kind) in list {
            steps += 1;
            if steps > 1 << 16 {
                return Err(String::from("the tree never ends"));
            }
            if kind == S_IFDIR & S_IFMT {
                dirs.push(ino);
            } else {
                let _ = fs.read(ino, 0, &mut buf);
                let _ = fs.stat(ino);
            }
        }
    }
    if let Ok(f) = fs.create(ROOT_INO, b"probe", 0o644) {
        let _ = fs.write(f, 0, &[1; 10_000]);
        let _ = fs.truncate(f, 10);
    }
    let _ = fs.sync();
    Ok(problems)
}

/// Damages `n` copies of the images, round robin, and tries each;
/// `progress` sees the figures and the image about to be tried.
pub fn campaign(images: &[Vec<u8>], n: u64, seed: u64, mut progress: impl FnMut(&Stats, u64)) -> Stats {
    let mut st = Stats::default();
    let mut rng = Rng(seed | 1);
    let metas: Vec<Vec<u64>> = images.iter().map(|i| metadata_blocks(i)).collect();
    for k in 0..n {
        let i = (k % images.len() as u64) as usize;
        if metas[i].is_empty() {
            continue;
        }
        let img = mutate(&images[i], &metas[i], &mut rng);
        progress(&st, k);
        st.images += 1;
        match try_image(img) {
            Ok(0) => st.clean += 1,
            Ok(_) => st.found += 1,
            Err(e) => *st.refused.entry(kind_of(&e)).or_default() += 1,
        }
    }
    st
}
