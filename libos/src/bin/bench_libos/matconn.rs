//! matconn (paper 003 §6): connectivity of adjacency matrices by Warshall's
//! algorithm, for successively larger matrices from 2x2 to 128x128, with
//! IPC between the parts: the parent makes each matrix and sends it
//! through a pipe to a forked worker, which computes its closure and sends
//! it back. Mostly computation, as Fluke's: one operation is one round of
//! the seven sizes.

use super::procs::{close, exit, fork, pipe, transfer, wait_status};
use super::rdtsc;
use alloc::vec;
use alloc::vec::Vec;

const LARGEST: usize = 128;

/// The sizes of one round: 2, 4, ... 128.
fn sizes() -> impl Iterator<Item = usize> {
    (1..=7).map(|s| 1 << s)
}

/// Warshall's transitive closure of a `size` x `size` 0/1 matrix, in place.
fn warshall(m: &mut [u8], size: usize) {
    for k in 0..size {
        for i in 0..size {
            if m[i * size + k] != 0 {
                for j in 0..size {
                    m[i * size + j] |= m[k * size + j];
                }
            }
        }
    }
}

/// A sparse pseudo-random matrix (about two edges a row), from `seed`.
fn matrix(size: usize, seed: &mut u64) -> Vec<u8> {
    let mut m = vec![0u8; size * size];
    for cell in m.iter_mut() {
        *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        *cell = u8::from((*seed >> 33) % (size as u64) < 2);
    }
    m
}

/// `n` timed rounds after an untimed one in which the worker's closures
/// are checked against the parent's own. Total instructions, or why it
/// failed.
pub fn matconn(n: u64) -> Result<u64, &'static str> {
    let (there_r, there_w) = pipe();
    let (back_r, back_w) = pipe();
    let pid = fork();
    if pid == 0 {
        let mut m = vec![0u8; LARGEST * LARGEST];
        for _ in 0..=n {
            for size in sizes() {
                let m = &mut m[..size * size];
                transfer(there_r, m, false);
                warshall(m, size);
                transfer(back_w, m, true);
            }
        }
        exit(0);
    }
    let mut seed = 1;
    let mut wrong = false;
    let mut t = 0;
    for round in 0..=n {
        if round == 1 {
            t = rdtsc();
        }
        for size in sizes() {
            let mut m = matrix(size, &mut seed);
            let sent = (round == 0).then(|| m.clone());
            transfer(there_w, &mut m, true);
            transfer(back_r, &mut m, false);
            if let Some(mut own) = sent {
                warshall(&mut own, size);
                wrong |= own != m;
            }
        }
    }
    let total = rdtsc() - t;
    let status = wait_status(pid);
    close(&[there_r, there_w, back_r, back_w]);
    match (wrong, status) {
        (true, _) => Err("the worker's closure differs from the parent's"),
        (false, 0) => Ok(total),
        _ => Err("the worker did not exit with 0"),
    }
}
