//! Writes cpio "newc" archives: the boot file system handed to the kernel
//! as a boot module, and the Linux benchmark initramfs.

/// An archive being built in memory. The first entry of a name wins: a
/// later one is dropped (Veneer's boot file system reads archives so, and
/// Linux's initramfs would let the last win).
#[derive(Default)]
pub struct Archive {
    bytes: Vec<u8>,
    inode: u32,
    names: std::collections::HashSet<String>,
    /// The uid and gid of the entry being added (root's but in `dir_owned`).
    owner: (u32, u32),
    /// Files of a page or more start on a page boundary (`page_aligned`).
    align: bool,
    /// Each member's name and header offset, for the index
    /// (`page_aligned`; fillers left out).
    listed: Vec<(String, usize)>,
}

/// The page size the boot file system's users map files in.
const PAGE: usize = 4096;
/// A newc header's length.
const HEADER: usize = 110;
/// The name of the filler members `page_aligned` inserts.
const FILLER: &str = "pad";

impl Archive {
    /// An archive whose files of a page or more have their data on a page
    /// boundary of the archive (a filler member before each that needs it):
    /// the boot file system, whose pages the library OS maps into programs
    /// instead of copying them (`map_from_range` from the boot window).
    /// It starts with an index of its members' names
    /// (`binfmt::cpio::INDEX`), a whole number of pages long.
    pub fn page_aligned() -> Archive {
        Archive { align: true, ..Archive::default() }
    }

    /// Adds a directory entry.
    pub fn dir(&mut self, name: &str) {
        self.entry(name, 0o040755, &[]);
    }

    /// Adds a regular file with the given permission bits.
    pub fn file(&mut self, name: &str, mode: u32, data: &[u8]) {
        let plain = name.trim_start_matches('/');
        if self.align && data.len() >= PAGE && !self.names.contains(plain) {
            // A filler whose data runs up to where this member's header and
            // name end on a page boundary.
            let head = align4(HEADER + plain.len() + 1);
            if !(self.bytes.len() + head).is_multiple_of(PAGE) {
                let after = self.bytes.len() + align4(HEADER + FILLER.len() + 1) + head;
                self.member(FILLER, 0o100000, &vec![0; (PAGE - after % PAGE) % PAGE]);
            }
        }
        self.entry(name, 0o100000 | (mode & 0o7777), data);
    }

    /// Adds a directory with the given permission bits, owner and group.
    pub fn dir_owned(&mut self, name: &str, mode: u32, owner: (u32, u32)) {
        self.owner = owner;
        self.entry(name, 0o040000 | (mode & 0o7777), &[]);
        self.owner = (0, 0);
    }

    /// Adds a symbolic link to `target`.
    pub fn symlink(&mut self, name: &str, target: &str) {
        self.entry(name, 0o120777, target.as_bytes());
    }

    /// Terminates the archive and returns its bytes.
    pub fn finish(mut self) -> Vec<u8> {
        self.entry("TRAILER!!!", 0, &[]);
        if !self.align {
            return self.bytes;
        }
        // The index goes first and is a whole number of pages, so every
        // member moves by the same multiple of a page and stays aligned.
        let head = align4(HEADER + binfmt::cpio::INDEX.len() + 1);
        let table = binfmt::cpio::INDEX_HEAD + binfmt::cpio::INDEX_ENTRY * self.listed.len();
        let size = (head + table).next_multiple_of(PAGE);
        let mut entries: Vec<(u32, u32)> = self
            .listed
            .iter()
            .map(|(name, at)| {
                let at = u32::try_from(size + at).expect("a boot archive under 4 GiB");
                (binfmt::cpio::name_hash(name), at)
            })
            .collect();
        entries.sort();
        let mut data = Vec::with_capacity(size - head);
        data.extend_from_slice(&(entries.len() as u32).to_le_bytes());
        data.extend_from_slice(&[0; 4]);
        for (hash, at) in entries {
            data.extend_from_slice(&hash.to_le_bytes());
            data.extend_from_slice(&at.to_le_bytes());
        }
        data.resize(size - head, 0);
        let body = std::mem::take(&mut self.bytes);
        self.member(binfmt::cpio::INDEX, 0o100000, &data);
        debug_assert_eq!(self.bytes.len(), size);
        self.bytes.extend_from_slice(&body);
        self.bytes
    }

    fn entry(&mut self, name: &str, mode: u32, data: &[u8]) {
        let name = name.trim_start_matches('/');
        if !self.names.insert(name.to_string()) {
            return;
        }
        if self.align && name != "TRAILER!!!" {
            // Named as `binfmt::cpio::Entries` reads it.
            self.listed.push((name.trim_start_matches("./").to_string(), self.bytes.len()));
        }
        self.member(name, mode, data);
    }

    /// Writes one member, whatever its name.
    fn member(&mut self, name: &str, mode: u32, data: &[u8]) {
        self.inode += 1;
        let (uid, gid) = self.owner;
        let fields =
            [self.inode, mode, uid, gid, 1, 0, data.len() as u32, 0, 0, 0, 0, name.len() as u32 + 1, 0];
        self.bytes.extend_from_slice(b"070701");
        for f in fields {
            self.bytes.extend_from_slice(format!("{f:08x}").as_bytes());
        }
        self.bytes.extend_from_slice(name.as_bytes());
        self.bytes.push(0);
        self.pad();
        self.bytes.extend_from_slice(data);
        self.pad();
    }

    fn pad(&mut self) {
        while !self.bytes.len().is_multiple_of(4) {
            self.bytes.push(0);
        }
    }
}

fn align4(n: usize) -> usize {
    n.next_multiple_of(4)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_aligned_archives_put_large_files_on_page_boundaries() {
        let mut ar = Archive::page_aligned();
        ar.dir("root");
        let sizes = [5000, 3, 4096, 70000, 4095, 12288];
        for (i, n) in sizes.iter().enumerate() {
            let data: Vec<u8> = (0..*n).map(|b| (b * 7 + i) as u8).collect();
            ar.file(&format!("root/f{i}-with-a-name-of-some-length{}", "x".repeat(i)), 0o644, &data);
        }
        ar.file("root/f0-with-a-name-of-some-length", 0o644, &[1; 8192]);
        let bytes = ar.finish();
        let base = bytes.as_ptr() as usize;
        let files: Vec<_> = binfmt::cpio::entries(&bytes)
            .map(Result::unwrap)
            .filter(|e| e.name.starts_with("root/f"))
            .collect();
        assert_eq!(files.len(), sizes.len(), "the second member of one name is dropped");
        let first = binfmt::cpio::entries(&bytes).next().unwrap().unwrap();
        assert_eq!(first.name, binfmt::cpio::INDEX);
        for e in binfmt::cpio::entries(&bytes).skip(1).map(Result::unwrap) {
            // Each member is found through the index, at its own place.
            let found = binfmt::cpio::find(&bytes, e.name);
            assert_eq!(
                found.map(|f| f.data.as_ptr()),
                (e.name != FILLER).then_some(e.data.as_ptr()),
                "{}",
                e.name
            );
        }
        for (i, (e, n)) in files.iter().zip(sizes).enumerate() {
            assert_eq!(e.data.len(), n);
            assert!(e.data.iter().enumerate().all(|(b, &v)| v == (b * 7 + i) as u8), "member {i}'s bytes");
            let at = e.data.as_ptr() as usize - base;
            assert_eq!(at.is_multiple_of(PAGE), n >= PAGE, "member {i} ({n} bytes) at {at:#x}");
        }
        // A plain archive has no fillers.
        let mut plain = Archive::default();
        plain.file("a", 0o644, &[0; 5000]);
        assert!(binfmt::cpio::entries(&plain.finish()).all(|e| e.unwrap().name != FILLER));
    }
}
