//! Cheetah's file cache (paper 000 §7.3, "merged file cache and
//! retransmission pool"): each published file is kept once, as the
//! complete HTTP response (header then body), together with the Internet
//! checksum of every segment-sized chunk, computed when the file is
//! published. Segments are cut at chunk boundaries, so a segment's payload
//! checksum is one stored word: sending (and resending) a segment reads the
//! file's bytes straight from here and never sums them again.

use alloc::vec::Vec;

use crate::cksum::{fold, sum};

/// Payload bytes per full segment: an Ethernet MTU (and loopback's) less
/// the IPv4 and TCP headers. Even, so every chunk starts on an even offset
/// and its sum is independent of where it lies in the file.
pub const CHUNK: usize = 1460;

/// One cached response.
#[derive(Debug)]
pub struct Doc {
    bytes: Vec<u8>,
    /// `sum` of each `CHUNK` of `bytes` (the last one may be shorter).
    sums: Vec<u16>,
}

/// A segment's payload and its checksum contribution.
pub struct Piece<'a> {
    pub data: &'a [u8],
    pub sum: u32,
    /// The sum came from the cache (false: computed now).
    pub cached: bool,
}

impl Doc {
    /// `status` is the status line's text after "HTTP/1.1 ".
    pub fn new(status: &str, content_type: &str, body: &[u8]) -> Doc {
        let mut bytes = Vec::with_capacity(160 + body.len());
        for part in [
            "HTTP/1.1 ",
            status,
            "\r\nServer: cheetah\r\nContent-Type: ",
            content_type,
            "\r\nContent-Length: ",
        ] {
            bytes.extend_from_slice(part.as_bytes());
        }
        let mut digits = [0u8; 20];
        let mut n = body.len();
        let mut i = digits.len();
        loop {
            i -= 1;
            digits[i] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        bytes.extend_from_slice(&digits[i..]);
        bytes.extend_from_slice(b"\r\nConnection: close\r\n\r\n");
        bytes.extend_from_slice(body);
        let sums = bytes.chunks(CHUNK).map(|c| sum(c) as u16).collect();
        Doc { bytes, sums }
    }

    /// No response at all: a connection closed before it asked anything
    /// gets only our FIN.
    pub fn nothing() -> Doc {
        Doc { bytes: Vec::new(), sums: Vec::new() }
    }

    /// The whole response's length.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The payload of the segment at `off`, at most `max` bytes: whole
    /// chunks (the file's last may be shorter) with their stored sums
    /// added when `off` is on a chunk boundary and `max` holds at least
    /// one (a loopback peer's segment holds many); otherwise the part up
    /// to the end of `off`'s chunk, summed now (a peer with a smaller
    /// segment size, a resend from inside a chunk).
    pub fn piece(&self, off: usize, max: usize) -> Piece<'_> {
        let len = self.bytes.len();
        let whole_end = if len.saturating_sub(off) <= max { len } else { off + max / CHUNK * CHUNK };
        if off.is_multiple_of(CHUNK) && whole_end > off {
            let chunks = off / CHUNK..whole_end.div_ceil(CHUNK);
            let sum = fold(self.sums[chunks].iter().map(|&s| u64::from(s)).sum()) as u32;
            return Piece { data: &self.bytes[off..whole_end], sum, cached: true };
        }
        let end = len.min(off + max).min((off / CHUNK + 1) * CHUNK);
        let data = &self.bytes[off.min(end)..end];
        Piece { data, sum: sum(data), cached: false }
    }
}
