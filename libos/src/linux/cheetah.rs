//! Cheetah's calls (paper 000 §7.3; `netstack::cheetah`), Veneer's own
//! socket options at level `SOL_VENEER` on a listening TCP socket:
//!
//! - `setsockopt(fd, SOL_VENEER, VENEER_CHEETAH_PUBLISH, &file, 32)`, with
//!   `struct { const char *path; u64 path_len; const void *data; u64 len; }`:
//!   the file's bytes go once into the stack's file cache, with their
//!   checksums; from then on the socket's connections are Cheetah's
//!   (`accept` never returns one). EINVAL: not a listening TCP socket, a
//!   path not starting with `/` (or with blanks, `?`, over 255 bytes), a
//!   wrong length; EBUSY: another socket is Cheetah's; EMSGSIZE: over
//!   16 MiB; ENOBUFS: over 1,024 files; EFAULT: bad pointers.
//! - `getsockopt(fd, SOL_VENEER, VENEER_CHEETAH_STATS, u64[17], &len)`: the
//!   server's counters (`netstack::cheetah::Stats`, in its field order)
//!   and the live connections.

use crate::errno::{LxResult, EINVAL, ENOPROTOOPT};
use crate::obj::inet::{self, errno, on_stack};
use crate::obj::File;
use crate::uaccess;
use alloc::vec::Vec;

pub const SOL_VENEER: u64 = 0x5645;
const PUBLISH: u64 = 1;
const STATS: u64 = 2;

pub fn setsockopt(f: &File, name: u64, val: u64, len: u64) -> LxResult {
    if name != PUBLISH {
        return Err(ENOPROTOOPT);
    }
    if len != 32 {
        return Err(EINVAL);
    }
    let [path, path_len, data, data_len]: [u64; 4] = uaccess::get(val)?;
    if path_len > 255 || data_len > netstack::cheetah::MAX_DOC_BYTES as u64 {
        return Err(if path_len > 255 { EINVAL } else { errno(netstack::Errno::EMSGSIZE) });
    }
    let path = uaccess::bytes(path, path_len)?;
    let data = uaccess::bytes(data, data_len)?;
    let me = inet::id(f);
    on_stack(|s| s.cheetah_publish(me, path, data))?.map_err(errno)?;
    Ok(0)
}

pub fn getsockopt(f: &File, name: u64, val: u64, lenp: u64) -> LxResult {
    if name != STATS {
        return Err(ENOPROTOOPT);
    }
    let me = inet::id(f);
    let (s, live) = on_stack(|s| s.cheetah_stats(me))?.map_err(errno)?;
    let words = [
        s.connections,
        s.requests,
        s.not_found,
        s.bad_requests,
        s.segments,
        s.data_segments,
        s.cached_sums,
        s.computed_sums,
        s.bare_acks,
        s.merged_fins,
        s.retransmits,
        s.resets_sent,
        s.resets_received,
        s.malformed,
        s.syn_dropped,
        s.timed_out,
        live as u64,
    ];
    let b: Vec<u8> = words.iter().flat_map(|w| w.to_ne_bytes()).collect();
    super::inet::put_opt(val, lenp, &b)
}
