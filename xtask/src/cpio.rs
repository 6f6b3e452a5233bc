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
}

impl Archive {
    /// Adds a directory entry.
    pub fn dir(&mut self, name: &str) {
        self.entry(name, 0o040755, &[]);
    }

    /// Adds a regular file with the given permission bits.
    pub fn file(&mut self, name: &str, mode: u32, data: &[u8]) {
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
        self.bytes
    }

    fn entry(&mut self, name: &str, mode: u32, data: &[u8]) {
        let name = name.trim_start_matches('/');
        if !self.names.insert(name.to_string()) {
            return;
        }
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
