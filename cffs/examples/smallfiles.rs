//! The small-file workload on the host: create, write, sync, remount
//! (cold cache), read back, delete and sync a few thousand files of 1-8
//! KiB in 20 directories, with C-FFS's embedding and grouping on and off;
//! prints the disk requests of each phase (what virtio-blk would see).
use cffs::{Fs, Local, Options, ROOT_INO};
use xn::{Cred, HostPages, MemDisk, Xn};

const ROOT: Cred = Cred::new(0, 0);

fn counts(d: &MemDisk) -> (u64, u64, u64) {
    (d.reads, d.writes, d.flushes)
}

fn main() {
    let files: u32 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(2000);
    for opts in [Options::default(), Options { embed: false, group: false }] {
        let mut disk = MemDisk::new(32768);
        Xn::<MemDisk, HostPages>::format(&mut disk).unwrap();
        let mut fs = Fs::mkfs(Local::mount(disk, 1, ROOT).unwrap(), opts, 1).unwrap();
        fs.sync().unwrap();
        let c0 = counts(fs.xn.xn.disk());
        let dirs: Vec<u64> =
            (0..20).map(|i| fs.mkdir(ROOT_INO, format!("d{i}").as_bytes(), 0o755).unwrap()).collect();
        for i in 0..files {
            let f = fs.create(dirs[(i % 20) as usize], format!("f{i}").as_bytes(), 0o644).unwrap();
            fs.write(f, 0, &vec![i as u8; 1024 * (1 + (i as usize % 8))]).unwrap();
        }
        fs.sync().unwrap();
        let c1 = counts(fs.xn.xn.disk());
        let disk = fs.xn.into_disk();
        let mut fs = Fs::mount(Local::mount(disk, 1, ROOT).unwrap()).unwrap();
        let r0 = counts(fs.xn.xn.disk());
        let mut buf = vec![0u8; 8192];
        for i in 0..files {
            let f = fs.resolve(&format!("/d{}/f{i}", i % 20)).unwrap();
            let n = fs.read(f, 0, &mut buf).unwrap();
            assert_eq!(n, 1024 * (1 + (i as usize % 8)));
        }
        let c2 = counts(fs.xn.xn.disk());
        for i in 0..files {
            let d = fs.resolve(&format!("/d{}", i % 20)).unwrap();
            fs.unlink(d, format!("f{i}").as_bytes()).unwrap();
        }
        fs.sync().unwrap();
        let c3 = counts(fs.xn.xn.disk());
        let total = |a: (u64, u64, u64), b: (u64, u64, u64)| (b.0 - a.0) + (b.1 - a.1) + (b.2 - a.2);
        println!(
            "{opts:?}: {files} files: create+write+sync {} requests ({} writes, {} flushes), cold read {} reads (mount {}), delete+sync {} requests; total {}",
            total(c0, c1),
            c1.1 - c0.1,
            c1.2 - c0.2,
            c2.0 - r0.0,
            r0.0,
            total(c2, c3),
            total(c0, c1) + (c2.0 - r0.0) + r0.0 + total(c2, c3)
        );
    }
}
