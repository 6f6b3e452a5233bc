//! A disk image file as an XN disk (positioned reads and writes; a flush
//! is `fsync`).

use std::fs::File;
use std::os::unix::fs::FileExt;

use xn::disk::{span, Disk, DiskError};

pub struct FileDisk {
    pub file: File,
    pub blocks: u64,
}

impl FileDisk {
    pub fn open(path: &str) -> Result<FileDisk, String> {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(|e| format!("{path}: {e}"))?;
        let len = file.metadata().map_err(|e| format!("{path}: {e}"))?.len();
        Ok(FileDisk { file, blocks: len / xn::BLOCK as u64 })
    }
}

impl Disk for FileDisk {
    fn blocks(&self) -> u64 {
        self.blocks
    }
    fn read(&mut self, start: u64, buf: &mut [u8]) -> Result<(), DiskError> {
        let r = span(self.blocks, start, buf.len())?;
        self.file.read_exact_at(buf, r.start as u64).map_err(|_| DiskError::Io)
    }
    fn write(&mut self, start: u64, buf: &[u8]) -> Result<(), DiskError> {
        let r = span(self.blocks, start, buf.len())?;
        self.file.write_all_at(buf, r.start as u64).map_err(|_| DiskError::Io)
    }
    fn flush(&mut self) -> Result<(), DiskError> {
        self.file.sync_data().map_err(|_| DiskError::Io)
    }
}
