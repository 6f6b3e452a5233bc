//! `prctl`: the options glibc programs, coreutils and python use. The
//! state is this process's own (lxrt's statics, copied at fork like the
//! rest of its memory); other options give EINVAL as on Linux.
//!
//! `rseq` is not here: lxrt answers it with ENOSYS, as a kernel built
//! without rseq does, and glibc (2.35 on) then runs without it.

use crate::errno::Errno;
use crate::errno::{LxResult, EINVAL};
use crate::fs::procstatus::CAP_LAST_CAP;
use crate::uaccess;
use core::sync::atomic::{AtomicU64, AtomicU8, Ordering::Relaxed};

const PR_SET_PDEATHSIG: u64 = 1;
const PR_GET_PDEATHSIG: u64 = 2;
const PR_GET_DUMPABLE: u64 = 3;
const PR_SET_DUMPABLE: u64 = 4;
const PR_SET_NAME: u64 = 15;
const PR_GET_NAME: u64 = 16;
const PR_CAPBSET_READ: u64 = 23;
const PR_SET_NO_NEW_PRIVS: u64 = 38;
const PR_GET_NO_NEW_PRIVS: u64 = 39;

/// The name PR_SET_NAME gave a thread other than the first (16 bytes,
/// NUL-padded; all zero: none), shared by those threads; the first's is
/// the process's, in its process-table entry (`comm`, `ps`), and exec
/// forgets it.
static NAME: [AtomicU64; 2] = [AtomicU64::new(0), AtomicU64::new(0)];
static PDEATHSIG: AtomicU8 = AtomicU8::new(0);
static DUMPABLE: AtomicU8 = AtomicU8::new(1);
static NO_NEW_PRIVS: AtomicU8 = AtomicU8::new(0);

/// The thread's name as PR_GET_NAME gives it: the one set, else the
/// program's name (the first argument's last part, 15 bytes at most).
fn name() -> [u8; 16] {
    let mut out = [0u8; 16];
    if !crate::proc::thread::is_first() {
        out[..8].copy_from_slice(&NAME[0].load(Relaxed).to_le_bytes());
        out[8..].copy_from_slice(&NAME[1].load(Relaxed).to_le_bytes());
    }
    if out[0] == 0 {
        let me = crate::proc::table::mine();
        let comm = crate::fs::procfile::comm(&me);
        out[..comm.len()].copy_from_slice(comm);
    }
    out
}

/// Reads the name at `ptr`: up to its NUL or 15 bytes, touching no byte
/// past 16 (the string may end just before an unmapped page).
fn read_name(ptr: u64) -> Result<[u8; 16], Errno> {
    let first = (crate::layout::page_up(ptr + 1) - ptr).min(16);
    let mut b = uaccess::bytes(ptr, first)?;
    if !b.contains(&0) && first < 16 {
        b = uaccess::bytes(ptr, 16)?;
    }
    let len = b.iter().position(|&c| c == 0).unwrap_or(b.len()).min(15);
    let mut out = [0u8; 16];
    out[..len].copy_from_slice(&b[..len]);
    Ok(out)
}

pub fn prctl(option: u64, a2: u64, a3: u64, a4: u64, a5: u64) -> LxResult {
    match option {
        PR_SET_NAME => {
            let n = read_name(a2)?;
            if crate::proc::thread::is_first() {
                crate::proc::table::update_mine(|e| e.name = n);
                return Ok(0);
            }
            for (i, word) in NAME.iter().enumerate() {
                let mut w = [0u8; 8];
                w.copy_from_slice(&n[8 * i..8 * i + 8]);
                word.store(u64::from_le_bytes(w), Relaxed);
            }
            Ok(0)
        }
        PR_GET_NAME => uaccess::put(a2, name()),
        PR_SET_PDEATHSIG => {
            if a2 > 64 {
                return Err(EINVAL);
            }
            PDEATHSIG.store(a2 as u8, Relaxed);
            Ok(0)
        }
        PR_GET_PDEATHSIG => uaccess::put(a2, PDEATHSIG.load(Relaxed) as i32),
        PR_GET_DUMPABLE => Ok(DUMPABLE.load(Relaxed) as i64),
        PR_SET_DUMPABLE => {
            if a2 > 1 {
                return Err(EINVAL);
            }
            DUMPABLE.store(a2 as u8, Relaxed);
            Ok(0)
        }
        // Once set it stays set (and passes to children and across exec).
        PR_SET_NO_NEW_PRIVS => {
            if a2 != 1 || a3 | a4 | a5 != 0 {
                return Err(EINVAL);
            }
            NO_NEW_PRIVS.store(1, Relaxed);
            Ok(0)
        }
        PR_GET_NO_NEW_PRIVS => {
            if a2 | a3 | a4 | a5 != 0 {
                return Err(EINVAL);
            }
            Ok(NO_NEW_PRIVS.load(Relaxed) as i64)
        }
        // Everyone is root with every capability.
        PR_CAPBSET_READ if a2 <= CAP_LAST_CAP => Ok(1),
        _ => Err(EINVAL),
    }
}
