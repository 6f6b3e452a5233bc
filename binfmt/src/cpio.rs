//! cpio "newc" archives (the boot file system and initramfs format).

/// One archive member.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry<'a> {
    pub name: &'a str,
    pub mode: u32,
    /// Its owner and group.
    pub uid: u32,
    pub gid: u32,
    pub data: &'a [u8],
}

/// Why an archive could not be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpioError {
    Truncated,
    BadMagic,
    BadNumber,
    BadName,
}

/// Iterates the members of an archive, stopping at the trailer. A
/// malformed member ends the iteration with an error.
pub struct Entries<'a> {
    rest: &'a [u8],
    off: usize,
    done: bool,
}

pub fn entries(archive: &[u8]) -> Entries<'_> {
    Entries { rest: archive, off: 0, done: false }
}

/// The member called `name` (the first of that name). Through the
/// archive's index when its first member is one (`INDEX`); otherwise by
/// reading every member before it.
pub fn find<'a>(archive: &'a [u8], name: &str) -> Option<Entry<'a>> {
    match index(archive) {
        Some(table) => find_indexed(archive, table, name),
        None => entries(archive).map_while(Result::ok).find(|e| e.name == name),
    }
}

/// The name of the index member. An archive that starts with it lists in
/// its data every other member's name hash and offset, so `find` parses
/// one member instead of all those before it (a native program's spawn
/// scanned over a hundred members of the boot archive, a third of its
/// cost). Its data: the entry count (u32, little-endian), four zero bytes,
/// then `count` entries of `name_hash(name)` and the member's header offset
/// in the archive (u32 each), sorted by hash, then by offset; then padding.
/// Written by xtask's `cpio::Archive::page_aligned`; the trailer and its
/// filler members are not listed.
pub const INDEX: &str = "INDEX!!!";
/// Bytes before the first index entry, and of each entry.
pub const INDEX_HEAD: usize = 8;
pub const INDEX_ENTRY: usize = 8;

/// FNV-1a over a member's name (after the `./` prefixes `Entries` strips).
pub fn name_hash(name: &str) -> u32 {
    name.bytes().fold(0x811c_9dc5, |h: u32, b| (h ^ b as u32).wrapping_mul(0x0100_0193))
}

/// The entries of the archive's index, if its first member is one with a
/// table that fits its data.
fn index(archive: &[u8]) -> Option<&[u8]> {
    let first = entries(archive).next()?.ok()?;
    if first.name != INDEX {
        return None;
    }
    let count = u32_at(first.data, 0)? as usize;
    first.data.get(INDEX_HEAD..INDEX_HEAD.checked_add(count.checked_mul(INDEX_ENTRY)?)?)
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// `find` through the index `table`: a binary search for the name's hash,
/// then the members of that hash parsed and their names compared. An entry
/// whose offset holds no member is passed over; a name the index does not
/// list is not in the archive.
fn find_indexed<'a>(archive: &'a [u8], table: &[u8], name: &str) -> Option<Entry<'a>> {
    let hash = name_hash(name);
    let n = table.len() / INDEX_ENTRY;
    let entry = |i: usize| (u32_at(table, i * INDEX_ENTRY).unwrap_or(0), u32_at(table, i * INDEX_ENTRY + 4));
    // The first entry whose hash is not below `hash`.
    let (mut lo, mut hi) = (0, n);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if entry(mid).0 < hash {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    (lo..n).map(entry).take_while(|&(h, _)| h == hash).find_map(|(_, off)| {
        let mut at = Entries { rest: archive, off: off? as usize, done: false };
        at.next_entry().ok().flatten().filter(|e| e.name == name)
    })
}

/// A header field: eight hex digits. By hand, a digit at a time: `find`
/// parses every member before the one it looks for (a native program's
/// spawn scans the boot archive), and going through `str` and
/// `from_str_radix` cost about 150 instructions a field.
fn hex(field: &[u8]) -> Result<usize, CpioError> {
    field.iter().try_fold(0usize, |n, &c| {
        let digit = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            b'A'..=b'F' => c - b'A' + 10,
            _ => return Err(CpioError::BadNumber),
        };
        Ok(n << 4 | digit as usize)
    })
}

fn align4(n: usize) -> usize {
    (n + 3) & !3
}

impl<'a> Entries<'a> {
    fn next_entry(&mut self) -> Result<Option<Entry<'a>>, CpioError> {
        let a = self.rest;
        let h = a.get(self.off..self.off + 110).ok_or(CpioError::Truncated)?;
        if &h[0..6] != b"070701" {
            return Err(CpioError::BadMagic);
        }
        let field = |i: usize| hex(&h[6 + 8 * i..14 + 8 * i]);
        let mode = field(1)? as u32;
        let (uid, gid) = (field(2)? as u32, field(3)? as u32);
        let size = field(6)?;
        let namesize = field(11)?;
        let name_start = self.off + 110;
        let name_end = name_start.checked_add(namesize).ok_or(CpioError::Truncated)?;
        let raw = a.get(name_start..name_end).ok_or(CpioError::Truncated)?;
        let raw = raw.strip_suffix(&[0]).ok_or(CpioError::BadName)?;
        let name = core::str::from_utf8(raw).map_err(|_| CpioError::BadName)?;
        let data_start = align4(name_end);
        let data_end = data_start.checked_add(size).ok_or(CpioError::Truncated)?;
        let data = a.get(data_start..data_end).ok_or(CpioError::Truncated)?;
        self.off = align4(data_end);
        if name == "TRAILER!!!" {
            return Ok(None);
        }
        // `trim_start_matches("./")`, without building a substring searcher
        // for every member.
        let mut name = name;
        while let Some(rest) = name.strip_prefix("./") {
            name = rest;
        }
        Ok(Some(Entry { name, mode, uid, gid, data }))
    }
}

impl<'a> Iterator for Entries<'a> {
    type Item = Result<Entry<'a>, CpioError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.next_entry() {
            Ok(Some(e)) => Some(Ok(e)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    fn member(out: &mut Vec<u8>, name: &str, mode: u32, data: &[u8]) {
        out.extend_from_slice(b"070701");
        for f in [1, mode, 0, 0, 1, 0, data.len() as u32, 0, 0, 0, 0, name.len() as u32 + 1, 0] {
            out.extend_from_slice(std::format!("{f:08x}").as_bytes());
        }
        out.extend_from_slice(name.as_bytes());
        out.push(0);
        while !out.len().is_multiple_of(4) {
            out.push(0);
        }
        out.extend_from_slice(data);
        while !out.len().is_multiple_of(4) {
            out.push(0);
        }
    }

    fn sample() -> Vec<u8> {
        let mut a = Vec::new();
        member(&mut a, "bin", 0o40755, b"");
        member(&mut a, "bin/hello", 0o100755, b"hello world");
        member(&mut a, "TRAILER!!!", 0, b"");
        a
    }

    #[test]
    fn lists_and_finds() {
        let a = sample();
        let names: Vec<_> = entries(&a).map(|e| e.unwrap().name).collect();
        assert_eq!(names, ["bin", "bin/hello"]);
        assert_eq!(find(&a, "bin/hello").unwrap().data, b"hello world");
        assert!(find(&a, "bin/nope").is_none());
        let mut dotted = Vec::new();
        member(&mut dotted, "././bin/x", 0o100644, b"x");
        member(&mut dotted, "TRAILER!!!", 0, b"");
        assert_eq!(find(&dotted, "bin/x").unwrap().data, b"x");
    }

    #[test]
    fn malformed_archives_end_with_an_error() {
        let a = sample();
        for cut in 0..a.len() - 120 {
            let r: Vec<_> = entries(&a[..cut]).collect();
            assert!(r.last().is_none_or(|e| e.is_err()), "cut at {cut}");
        }
        let mut bad = a.clone();
        bad[0] = b'9';
        assert_eq!(entries(&bad).next(), Some(Err(CpioError::BadMagic)));
        let mut bad = a;
        bad[6 + 8 * 6] = b'z';
        assert_eq!(entries(&bad).next(), Some(Err(CpioError::BadNumber)));
    }

    /// `members` behind an index member listing `listed` of them (by
    /// position; the offsets `shift`ed), the first page of the archive.
    fn indexed(members: &[(&str, &[u8])], listed: &[usize], shift: i64) -> Vec<u8> {
        let mut body = Vec::new();
        let mut offsets = Vec::new();
        for (name, data) in members {
            offsets.push(body.len());
            member(&mut body, name, 0o100644, data);
        }
        member(&mut body, "TRAILER!!!", 0, b"");
        let mut entries: Vec<(u32, u32)> =
            listed.iter().map(|&i| (name_hash(members[i].0), (offsets[i] + 4096) as i64 as u32)).collect();
        entries.sort();
        let mut table = Vec::new();
        table.extend_from_slice(&(entries.len() as u32).to_le_bytes());
        table.extend_from_slice(&[0; 4]);
        for (h, off) in entries {
            table.extend_from_slice(&h.to_le_bytes());
            table.extend_from_slice(&((off as i64 + shift) as u32).to_le_bytes());
        }
        table.resize(4096 - 120, 0);
        let mut a = Vec::new();
        member(&mut a, INDEX, 0o100000, &table);
        assert_eq!(a.len(), 4096);
        a.extend_from_slice(&body);
        a
    }

    #[test]
    fn the_index_finds_members_without_reading_those_before() {
        let members: &[(&str, &[u8])] = &[("bin", b""), ("bin/a", b"A"), ("bin/b", b"BB"), ("bin/c", b"C")];
        let mut a = indexed(members, &[0, 1, 2, 3], 0);
        for (name, data) in members {
            assert_eq!(find(&a, name).map(|e| e.data), Some(*data), "{name}");
        }
        assert!(find(&a, "bin/d").is_none());
        // A broken member before `bin/c` ends a scan; the index goes past it.
        let b_at = 4096 + a[4096..].windows(5).position(|w| w == b"bin/b").unwrap() - 110;
        a[b_at] = b'9';
        assert_eq!(entries(&a).map_while(Result::ok).count(), 3, "the index, bin, bin/a");
        assert_eq!(find(&a, "bin/c").unwrap().data, b"C");
        // A name the index does not list is absent, even if a member has it.
        let a = indexed(members, &[0, 1, 3], 0);
        assert!(find(&a, "bin/b").is_none());
        assert_eq!(find(&a, "bin/c").unwrap().data, b"C");
        // Without an index, `find` scans.
        assert_eq!(find(&a[4096..], "bin/b").unwrap().data, b"BB");
    }

    #[test]
    fn a_hostile_index_misleads_into_no_bad_read() {
        let members: &[(&str, &[u8])] = &[("bin/a", b"A"), ("bin/b", b"BB")];
        // Offsets that point into the middle of members, past the end, or
        // wrap: nothing found, no panic.
        for shift in [1, 4, 110, -4096, 1 << 20, i64::from(u32::MAX)] {
            let a = indexed(members, &[0, 1], shift);
            assert!(find(&a, "bin/a").is_none() && find(&a, "bin/b").is_none(), "shift {shift}");
        }
        // A count beyond the member's data: the index is ignored, and the
        // archive scanned.
        let mut a = indexed(members, &[0, 1], 0);
        a[120..124].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(find(&a, "bin/b").unwrap().data, b"BB");
        a[120..124].copy_from_slice(&1000u32.to_le_bytes());
        assert_eq!(find(&a, "bin/b").unwrap().data, b"BB");
        // Unsorted entries can hide a member, never read out of bounds.
        let mut a = indexed(members, &[0, 1], 0);
        a.copy_within(128..136, 200);
        a.copy_within(136..144, 128);
        a.copy_within(200..208, 136);
        for name in ["bin/a", "bin/b"] {
            assert!(find(&a, name).is_none_or(|e| e.name == name));
        }
    }

    #[test]
    fn header_fields_are_eight_hex_digits() {
        assert_eq!(hex(b"0000ABcd"), Ok(0xabcd));
        assert_eq!(hex(b"ffffffff"), Ok(0xffff_ffff));
        for bad in [&b"+0000001"[..], b"0000 001", b"0000000g", b"000000\xc3\xa9"] {
            assert_eq!(hex(bad), Err(CpioError::BadNumber), "{bad:?}");
        }
    }
}
