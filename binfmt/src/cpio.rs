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

/// The data of the member called `name`.
pub fn find<'a>(archive: &'a [u8], name: &str) -> Option<Entry<'a>> {
    entries(archive).map_while(Result::ok).find(|e| e.name == name)
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

    #[test]
    fn header_fields_are_eight_hex_digits() {
        assert_eq!(hex(b"0000ABcd"), Ok(0xabcd));
        assert_eq!(hex(b"ffffffff"), Ok(0xffff_ffff));
        for bad in [&b"+0000001"[..], b"0000 001", b"0000000g", b"000000\xc3\xa9"] {
            assert_eq!(hex(bad), Err(CpioError::BadNumber), "{bad:?}");
        }
    }
}
