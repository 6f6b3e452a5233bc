//! The boot file system, mapped read-only at `abi::layout::BOOTFS_VA`.

pub fn archive() -> &'static [u8] {
    let len = crate::kinfo::kernel().bootfs_size as usize;
    // SAFETY: the kernel maps `bootfs_size` bytes there, read-only, for
    // the machine's lifetime.
    unsafe { core::slice::from_raw_parts(abi::layout::BOOTFS_VA as *const u8, len) }
}

/// The contents of `path` (e.g. `bin/hello`).
pub fn find(path: &str) -> Option<&'static [u8]> {
    binfmt::cpio::find(archive(), path).map(|e| e.data)
}
