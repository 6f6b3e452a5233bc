#![allow(dead_code)]

use cffs::{Fs, Local, Options};
use xn::{Cred, MemDisk, Xn};

pub type TestFs = Fs<Local<MemDisk>>;
pub const ROOT: Cred = Cred::new(0, 0);
pub const ALICE: Cred = Cred::new(1000, 100);
pub const BOB: Cred = Cred::new(1001, 101);

/// A fresh C-FFS on a disk of `blocks` blocks.
pub fn fresh(blocks: u64, opts: Options) -> TestFs {
    let mut disk = MemDisk::new(blocks);
    Xn::<MemDisk, xn::HostPages>::format(&mut disk).unwrap();
    let local = Local::mount(disk, 1, ROOT).unwrap();
    Fs::mkfs(local, opts, 1_000_000_000).unwrap()
}

/// Syncs, then mounts the disk again (a clean reboot).
pub fn reboot(mut fs: TestFs) -> TestFs {
    fs.sync().unwrap();
    let disk = fs.xn.into_disk();
    Fs::mount(Local::mount(disk, 1, ROOT).unwrap()).unwrap()
}

/// Mounts the disk as the last write left it (a crash).
pub fn crash(fs: TestFs) -> TestFs {
    let disk = fs.xn.into_disk();
    Fs::mount(Local::mount(disk, 1, ROOT).unwrap()).unwrap()
}

pub fn read_all(fs: &mut TestFs, ino: u64) -> Vec<u8> {
    let size = fs.stat(ino).unwrap().size as usize;
    let mut buf = vec![0u8; size];
    assert_eq!(fs.read(ino, 0, &mut buf).unwrap(), size);
    buf
}

pub fn fsck(fs: TestFs) -> cffs::check::Report {
    let disk = fs.xn.into_disk();
    let mut fs = Fs::open(Local::mount(disk, 1, ROOT).unwrap(), false).unwrap();
    cffs::check::fsck(&mut fs)
}
