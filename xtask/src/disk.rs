//! The disk image every boot gets as its virtio-blk device, filled with
//! the pattern the kernel's block self-test checks
//! (`drvapi::disk_pattern_byte`).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Sectors in a fresh image (4 MiB).
pub const SECTORS: u64 = 8192;
const SECTOR: usize = 512;

/// Writes a fresh image with the pattern in every sector.
pub fn create(path: &Path) -> Result<(), String> {
    let mut data = vec![0u8; SECTORS as usize * SECTOR];
    for (s, sector) in data.chunks_mut(SECTOR).enumerate() {
        for (i, b) in sector.iter_mut().enumerate() {
            *b = drvapi::disk_pattern_byte(s as u64, i);
        }
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    }
    std::fs::write(path, data).map_err(|e| format!("writing {}: {e}", path.display()))
}

/// A path for one boot's own image (boots run in parallel, and QEMU locks
/// its image files).
pub fn scratch_path() -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::SeqCst);
    crate::build::root().join("target/disks").join(format!("boot-{}-{n}.img", std::process::id()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_sector_starts_with_its_number_and_differs_from_its_neighbour() {
        let p = std::env::temp_dir().join(format!("veneer-disk-test-{}.img", std::process::id()));
        create(&p).unwrap();
        let data = std::fs::read(&p).unwrap();
        std::fs::remove_file(&p).unwrap();
        assert_eq!(data.len() as u64, SECTORS * SECTOR as u64);
        let sector = |s: usize| &data[s * SECTOR..(s + 1) * SECTOR];
        assert_eq!(u64::from_le_bytes(sector(4097)[..8].try_into().unwrap()), 4097);
        assert_ne!(sector(1)[8..], sector(2)[8..]);
    }
}
