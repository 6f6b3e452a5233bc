//! `PT_GNU_RELRO`: the part of a writable segment that only relocation
//! writes. A static executable that is not position-independent has no
//! relocations to apply at run time, so the part is read-only from its
//! start; making it so lets a fork share those pages instead of copying
//! them (lxrt, `relro::seal`).

use crate::elf::{u16_at, u32_at, u64_at};

pub const PT_GNU_RELRO: u32 = 0x6474_e552;

const PAGE: u64 = 4096;

/// The whole pages of `PT_GNU_RELRO` named by the program headers in
/// `headers` (bytes from the ELF header on, as mapped), as `(start, end)`:
/// from the page of its start to the page of its end, as glibc's
/// `_dl_protect_relro` takes them (the linker lays the range at the start
/// of its segment, and a last page it shares with data stays writable).
/// `None` when there is none, it covers no whole page, or the headers are
/// malformed or not all inside `headers`.
pub fn pages(headers: &[u8]) -> Option<(u64, u64)> {
    if headers.len() < 64 || &headers[0..4] != b"\x7fELF" || headers[4] != 2 || headers[5] != 1 {
        return None;
    }
    let phoff = usize::try_from(u64_at(headers, 32)).ok()?;
    let (size, count) = (u16_at(headers, 54) as usize, u16_at(headers, 56) as usize);
    let end = phoff.checked_add(size.checked_mul(count)?)?;
    if size < 56 || end > headers.len() {
        return None;
    }
    let h = (0..count).map(|i| &headers[phoff + i * size..]).find(|h| u32_at(h, 0) == PT_GNU_RELRO)?;
    let (va, len) = (u64_at(h, 16), u64_at(h, 40));
    let (start, end) = (va & !(PAGE - 1), va.checked_add(len)? & !(PAGE - 1));
    (start < end).then_some((start, end))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::elf::tests::{tiny, with_header};

    /// `tiny` with a second program header, `PT_GNU_RELRO` over
    /// `[va, va + len)`.
    fn with_relro(va: u64, len: u64) -> std::vec::Vec<u8> {
        with_header(PT_GNU_RELRO, 0, 0, va, len)
    }

    #[test]
    fn whole_pages_from_the_start_page_to_the_end_page() {
        assert_eq!(pages(&with_relro(0x60120108, 0x6ef8)), Some((0x60120000, 0x60127000)));
        // The last page is shared with what follows: left out.
        assert_eq!(pages(&with_relro(0x60120108, 0x6e00)), Some((0x60120000, 0x60126000)));
        assert_eq!(pages(&with_relro(0x60120108, 0x100)), None);
    }

    #[test]
    fn none_without_the_header() {
        assert_eq!(pages(&tiny()), None);
    }

    #[test]
    fn malformed_headers_give_none() {
        let f = with_relro(0x60120108, 0x6ef8);
        // Headers past the bytes given.
        assert_eq!(pages(&f[..150]), None);
        let mut bad = f.clone();
        bad[0] = 0;
        assert_eq!(pages(&bad), None);
        let mut short = f.clone();
        short[54..56].copy_from_slice(&40u16.to_le_bytes());
        assert_eq!(pages(&short), None);
        let mut far = f.clone();
        far[32..40].copy_from_slice(&u64::MAX.to_le_bytes());
        assert_eq!(pages(&far), None);
        let mut wraps = f;
        wraps[120 + 16..120 + 24].copy_from_slice(&(u64::MAX - 8).to_le_bytes());
        assert_eq!(pages(&wraps), None);
        for len in 0..200 {
            let _ = pages(&with_relro(0x1000, 0x3000)[..len]);
        }
    }
}
