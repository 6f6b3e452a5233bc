//! C-FFS's operations, each compared with what POSIX says, surviving a
//! clean reboot, and leaving a disk `fsck` finds clean.

mod common;

use cffs::format::ENTRY;
use cffs::{Errno, Options, Step, XnClient, ROOT_INO, ROUNDS};
use common::*;

fn both() -> [Options; 2] {
    [Options::default(), Options { embed: false, group: false }]
}

#[test]
fn files_and_directories_survive_a_reboot() {
    for opts in both() {
        let mut fs = fresh(512, opts);
        let d = fs.mkdir(ROOT_INO, b"etc", 0o755).unwrap();
        let f = fs.create(d, b"motd", 0o644).unwrap();
        fs.write(f, 0, b"hello").unwrap();
        let big: Vec<u8> = (0..50_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let g = fs.create(d, b"big", 0o600).unwrap();
        fs.write(g, 0, &big).unwrap();
        let long = vec![b'n'; 200];
        let h = fs.create(ROOT_INO, &long, 0o644).unwrap();
        fs.write(h, 3, b"x").unwrap();
        fs.symlink(ROOT_INO, b"link", b"/etc/motd").unwrap();
        let mut fs = reboot(fs);
        let d = fs.resolve("/etc").unwrap();
        let f = fs.lookup(d, b"motd").unwrap();
        assert_eq!(read_all(&mut fs, f), b"hello");
        let g = fs.lookup(d, b"big").unwrap();
        assert_eq!(read_all(&mut fs, g), big, "{opts:?}");
        let h = fs.lookup(ROOT_INO, &long).unwrap();
        assert_eq!(read_all(&mut fs, h), b"\0\0\0x");
        let l = fs.lookup(ROOT_INO, b"link").unwrap();
        assert_eq!(fs.readlink(l).unwrap(), b"/etc/motd");
        let mut names: Vec<Vec<u8>> = fs.readdir(ROOT_INO).unwrap().into_iter().map(|e| e.0).collect();
        names.sort();
        assert_eq!(names, [b"etc".to_vec(), b"link".to_vec(), long.clone()]);
        assert_eq!(fs.stat(d).unwrap().nlink, 2);
        assert!(fsck(fs).clean());
    }
}

#[test]
fn names_are_checked() {
    let mut fs = fresh(256, Options::default());
    assert_eq!(fs.create(ROOT_INO, b"a/b", 0o644), Err(Errno::Inval));
    assert_eq!(fs.create(ROOT_INO, b"..", 0o644), Err(Errno::Inval));
    assert_eq!(fs.create(ROOT_INO, b"", 0o644), Err(Errno::Inval));
    assert_eq!(fs.create(ROOT_INO, &[b'x'; 256], 0o644), Err(Errno::NameTooLong));
    let f = fs.create(ROOT_INO, b"f", 0o644).unwrap();
    assert_eq!(fs.create(ROOT_INO, b"f", 0o644), Err(Errno::Exist));
    assert_eq!(fs.create(f, b"g", 0o644), Err(Errno::NotDir));
    assert_eq!(fs.lookup(ROOT_INO, b"nope"), Err(Errno::NoEnt));
}

#[test]
fn many_files_fill_many_directory_blocks() {
    for opts in both() {
        let mut fs = fresh(1024, opts);
        let d = fs.mkdir(ROOT_INO, b"d", 0o755).unwrap();
        for i in 0..100u32 {
            let f = fs.create(d, format!("file{i}").as_bytes(), 0o644).unwrap();
            fs.write(f, 0, &vec![i as u8; 100 + i as usize * 40]).unwrap();
        }
        for i in (0..100u32).step_by(3) {
            fs.unlink(d, format!("file{i}").as_bytes()).unwrap();
        }
        let mut fs = reboot(fs);
        let d = fs.resolve("/d").unwrap();
        assert_eq!(fs.readdir(d).unwrap().len(), 66);
        for i in (1..100u32).filter(|i| i % 3 != 0) {
            let f = fs.lookup(d, format!("file{i}").as_bytes()).unwrap();
            assert_eq!(read_all(&mut fs, f), vec![i as u8; 100 + i as usize * 40]);
        }
        let r = fsck(fs);
        assert!(r.clean(), "{:?}", r.problems);
        assert_eq!(r.files, 66);
    }
}

#[test]
fn unlink_and_rmdir_free_everything() {
    for opts in both() {
        let mut fs = fresh(512, opts);
        // The root directory's first block and the first table block stay.
        fs.create(ROOT_INO, b"keep", 0o644).unwrap();
        fs.sync().unwrap();
        let free = fs.statfs().bfree;
        let d = fs.mkdir(ROOT_INO, b"d", 0o755).unwrap();
        let f = fs.create(d, b"f", 0o644).unwrap();
        // Five extents: an extent block too.
        for i in 0..6u64 {
            fs.write(f, i * 40_960, &[1; 4096]).unwrap();
        }
        fs.sync().unwrap();
        assert_eq!(fs.rmdir(ROOT_INO, b"d"), Err(Errno::NotEmpty));
        fs.unlink(d, b"f").unwrap();
        fs.rmdir(ROOT_INO, b"d").unwrap();
        fs.sync().unwrap();
        fs.sync().unwrap();
        let mut fs = reboot(fs);
        assert_eq!(fs.statfs().bfree, free);
        assert_eq!(fs.resolve("/d"), Err(Errno::NoEnt));
        assert!(fsck(fs).clean());
    }
}

#[test]
fn truncate_sparse_append_and_large_offsets() {
    let mut fs = fresh(512, Options::default());
    let f = fs.create(ROOT_INO, b"f", 0o644).unwrap();
    fs.write(f, 0, &[7; 10_000]).unwrap();
    fs.truncate(f, 5000).unwrap();
    fs.truncate(f, 9000).unwrap();
    let data = read_all(&mut fs, f);
    assert_eq!(&data[..5000], &[7; 5000][..]);
    assert!(data[5000..].iter().all(|&b| b == 0));
    assert_eq!(fs.append(f, b"end").unwrap(), 9000);
    // Past 4 GiB: sparse, two blocks used.
    let far = 5 << 30;
    fs.write(f, far, b"far away").unwrap();
    let st = fs.stat(f).unwrap();
    assert_eq!(st.size, far + 8);
    assert!(st.blocks <= 8 * 4);
    let mut buf = [1u8; 16];
    assert_eq!(fs.read(f, far - 8, &mut buf).unwrap(), 16);
    assert_eq!(&buf, b"\0\0\0\0\0\0\0\0far away");
    let mut fs = reboot(fs);
    let f = fs.lookup(ROOT_INO, b"f").unwrap();
    let mut buf = [0u8; 8];
    fs.read(f, far, &mut buf).unwrap();
    assert_eq!(&buf, b"far away");
    fs.truncate(f, 3).unwrap();
    assert_eq!(read_all(&mut fs, f), [7, 7, 7]);
    assert!(fsck(fs).clean());
}

#[test]
fn seek_finds_data_and_holes() {
    let mut fs = fresh(512, Options::default());
    let f = fs.create(ROOT_INO, b"f", 0o644).unwrap();
    // Blocks 0-1 data, 2-9 a hole, block 10 data, then a hole to the end.
    fs.write(f, 0, &[1; 8192]).unwrap();
    fs.write(f, 10 * 4096 + 100, b"x").unwrap();
    fs.truncate(f, 20 * 4096).unwrap();
    assert_eq!(fs.seek(f, 0, false).unwrap(), Some(0));
    assert_eq!(fs.seek(f, 0, true).unwrap(), Some(8192));
    assert_eq!(fs.seek(f, 5000, true).unwrap(), Some(8192));
    assert_eq!(fs.seek(f, 8192, false).unwrap(), Some(10 * 4096));
    assert_eq!(fs.seek(f, 9000, true).unwrap(), Some(9000));
    assert_eq!(fs.seek(f, 10 * 4096 + 5, false).unwrap(), Some(10 * 4096 + 5));
    assert_eq!(fs.seek(f, 10 * 4096, true).unwrap(), Some(11 * 4096));
    assert_eq!(fs.seek(f, 11 * 4096, false).unwrap(), None, "no data after the last extent");
    assert_eq!(fs.seek(f, 20 * 4096, true).unwrap(), None, "at the end");
    let g = fs.create(ROOT_INO, b"small", 0o644).unwrap();
    fs.write(g, 0, b"inline").unwrap();
    assert_eq!(fs.seek(g, 2, false).unwrap(), Some(2));
    assert_eq!(fs.seek(g, 2, true).unwrap(), Some(6));
}

#[test]
fn hard_links_share_one_inode() {
    for opts in both() {
        let mut fs = fresh(512, opts);
        let a = fs.mkdir(ROOT_INO, b"a", 0o755).unwrap();
        let b = fs.mkdir(ROOT_INO, b"b", 0o755).unwrap();
        let f = fs.create(a, b"f", 0o644).unwrap();
        fs.write(f, 0, &[5; 9000]).unwrap();
        fs.link(f, b, b"g").unwrap();
        fs.link(f, a, b"h").unwrap();
        assert_eq!(fs.stat(f).unwrap().nlink, 3);
        let g = fs.lookup(b, b"g").unwrap();
        assert_eq!(g, f);
        fs.write(g, 9000, b"more").unwrap();
        fs.unlink(a, b"f").unwrap();
        let mut fs = reboot(fs);
        let a = fs.resolve("/a").unwrap();
        let h = fs.lookup(a, b"h").unwrap();
        assert_eq!(fs.stat(h).unwrap().nlink, 2);
        assert_eq!(fs.stat(h).unwrap().size, 9004);
        assert_eq!(fs.link(a, a, b"x"), Err(Errno::Perm));
        fs.unlink(a, b"h").unwrap();
        let b = fs.resolve("/b").unwrap();
        fs.unlink(b, b"g").unwrap();
        let r = fsck(reboot(fs));
        assert!(r.clean(), "{:?}", r.problems);
        assert_eq!(r.files, 0);
    }
}

#[test]
fn rename_moves_replaces_and_refuses_loops() {
    for opts in both() {
        let mut fs = fresh(512, opts);
        let a = fs.mkdir(ROOT_INO, b"a", 0o755).unwrap();
        let b = fs.mkdir(ROOT_INO, b"b", 0o755).unwrap();
        let f = fs.create(a, b"f", 0o644).unwrap();
        fs.write(f, 0, &[1; 5000]).unwrap();
        let v = fs.create(b, b"v", 0o644).unwrap();
        fs.write(v, 0, &[2; 5000]).unwrap();
        fs.rename(a, b"f", a, b"f2").unwrap();
        fs.rename(a, b"f2", b, b"v").unwrap();
        assert_eq!(fs.lookup(a, b"f2"), Err(Errno::NoEnt));
        let v = fs.lookup(b, b"v").unwrap();
        assert_eq!(read_all(&mut fs, v), vec![1; 5000]);
        let sub = fs.mkdir(a, b"sub", 0o755).unwrap();
        assert_eq!(fs.rename(ROOT_INO, b"a", sub, b"x"), Err(Errno::Inval));
        fs.rename(ROOT_INO, b"a", b, b"a").unwrap();
        assert_eq!(fs.resolve("/b/a/sub").unwrap(), sub);
        assert_eq!(fs.rename(b, b"v", b, b"a"), Err(Errno::IsDir));
        let mut fs = reboot(fs);
        assert_eq!(fs.resolve("/b/a/sub").unwrap(), sub);
        let v = fs.resolve("/b/v").unwrap();
        assert_eq!(read_all(&mut fs, v), vec![1; 5000]);
        let r = fsck(fs);
        assert!(r.clean(), "{:?}", r.problems);
    }
}

#[test]
fn permissions_are_enforced_by_the_library_and_by_xn() {
    let mut fs = fresh(512, Options::default());
    let home = fs.mkdir(ROOT_INO, b"home", 0o755).unwrap();
    fs.setattr(home, None, Some((ALICE.uid, ALICE.gid))).unwrap();
    fs.xn.cred = ALICE;
    let f = fs.create(home, b"secret", 0o600).unwrap();
    fs.write(f, 0, b"alice's").unwrap();
    fs.xn.cred = BOB;
    let mut buf = [0u8; 8];
    assert_eq!(fs.read(f, 0, &mut buf), Err(Errno::Access));
    assert_eq!(fs.create(home, b"bob", 0o644), Err(Errno::Access));
    assert_eq!(fs.unlink(home, b"secret"), Err(Errno::Access));
    assert_eq!(fs.setattr(f, Some(0o666), None), Err(Errno::Perm));
    // Bob skips the library's checks and asks XN directly: acl refuses.
    let loc = fs.location(f).unwrap();
    let ch = [xn::Change { block: loc.block, off: loc.off() + 32, bytes: &[0xff; 8] }];
    assert_eq!(fs.xn.modify(&ch, &[], &[]), Err(xn::Error::Denied { block: loc.block }));
    let clear = [xn::Change { block: loc.block, off: loc.off(), bytes: &[0; 256] }];
    assert_eq!(fs.xn.modify(&clear, &[], &[]), Err(xn::Error::Denied { block: loc.block }));
    fs.xn.cred = ALICE;
    fs.xn.modify(&ch, &[], &[]).unwrap();
}

/// A file its group may read and write, by a user in that group only as
/// a supplementary one: the library and XN's `acl` both let it in, and
/// both keep it out without the group.
#[test]
fn supplementary_groups_count_in_the_library_and_in_xn() {
    let mut fs = fresh(512, Options::default());
    let home = fs.mkdir(ROOT_INO, b"home", 0o755).unwrap();
    fs.setattr(home, None, Some((ALICE.uid, ALICE.gid))).unwrap();
    fs.xn.cred = ALICE;
    let f = fs.create(home, b"shared", 0o660).unwrap();
    fs.write(f, 0, b"alice's").unwrap();
    let loc = fs.location(f).unwrap();
    let ch = [xn::Change { block: loc.block, off: loc.off() + 32, bytes: &[0xff; 8] }];
    let mut buf = [0u8; 7];
    fs.xn.cred = BOB;
    assert_eq!(fs.read(f, 0, &mut buf), Err(Errno::Access));
    assert_eq!(fs.xn.modify(&ch, &[], &[]), Err(xn::Error::Denied { block: loc.block }));
    fs.xn.cred = BOB.with_groups(&[7, 8, ALICE.gid]);
    assert_eq!(fs.read(f, 0, &mut buf), Ok(7));
    assert_eq!(&buf, b"alice's");
    fs.write(f, 0, b"bob's").unwrap();
    // Past the library: XN's `acl` sees the group too.
    fs.xn.modify(&ch, &[], &[]).unwrap();
}

/// A small file keeps its bytes in its entry only while everyone may read
/// it: the entry's block is bound by anyone who may search the directory
/// (root_hostile's `xnsteal` read a 0600 file's bytes there).
#[test]
fn a_private_file_keeps_no_bytes_in_its_entry() {
    let mut fs = fresh(512, Options::default());
    let in_entry = |fs: &TestFs, f: u64, bytes: &[u8]| {
        let at = fs.location(f).unwrap();
        let e = &fs.xn.block(at.block).unwrap()[at.off()..at.off() + ENTRY];
        e.windows(bytes.len()).any(|w| w == bytes)
    };
    let open = fs.create(ROOT_INO, b"open", 0o644).unwrap();
    fs.write(open, 0, b"OPENBYTES").unwrap();
    assert!(in_entry(&fs, open, b"OPENBYTES"), "a 0644 file's few bytes stay inline");
    fs.setattr(open, Some(0o600), None).unwrap();
    assert!(!in_entry(&fs, open, b"OPENBYTES"), "chmod 600 left the bytes in the entry");
    let secret = fs.create(ROOT_INO, b"secret", 0o600).unwrap();
    fs.write(secret, 0, b"SECRETBYTES").unwrap();
    assert!(!in_entry(&fs, secret, b"SECRETBYTES"), "a 0600 file was written inline");
    let mut buf = [0u8; 16];
    assert_eq!(fs.read(open, 0, &mut buf), Ok(9));
    assert_eq!(&buf[..9], b"OPENBYTES");
    let r = fsck(fs);
    assert!(r.clean(), "{:?}", r.problems);
}

#[test]
fn statfs_and_times() {
    let mut fs = fresh(512, Options::default());
    let f = fs.create(ROOT_INO, b"f", 0o644).unwrap();
    let before = fs.statfs();
    assert_eq!(before.blocks, 512);
    fs.set_time(2_000_000_000);
    fs.write(f, 0, &[0; 20_000]).unwrap();
    assert_eq!(fs.stat(f).unwrap().mtime, 2_000_000_000);
    assert_eq!(fs.statfs().bfree, before.bfree - 5);
    fs.utimes(f, 5, 6).unwrap();
    let st = fs.stat(f).unwrap();
    assert_eq!((st.atime, st.mtime), (5, 6));
}

/// `fsync` of a file created in a directory's first block makes the name
/// reachable too: the block is new, named only by its parent's new
/// extent, which must reach the disk with it (found by the power-cut
/// boot test: 190 records acknowledged, none after the cut).
#[test]
fn fsync_in_a_new_directory_block_survives_a_crash() {
    for opts in both() {
        let mut fs = fresh(512, opts);
        let d = fs.mkdir(ROOT_INO, b"d", 0o40755).unwrap();
        fs.sync().unwrap();
        for (dir, name) in [(ROOT_INO, &b"log"[..]), (d, &b"inner"[..])] {
            let f = fs.create(dir, name, 0o100644).unwrap();
            fs.write(f, 0, b"acknowledged").unwrap();
            fs.fsync(f).unwrap();
        }
        let mut fs = crash(fs);
        let f = fs.resolve("/log").unwrap_or_else(|e| panic!("{opts:?}: /log lost: {e:?}"));
        assert_eq!(read_all(&mut fs, f), b"acknowledged");
        let f = fs.resolve("/d/inner").unwrap_or_else(|e| panic!("{opts:?}: /d/inner lost: {e:?}"));
        assert_eq!(read_all(&mut fs, f), b"acknowledged");
    }
}

/// What lxrt's `/data` does when a file's last writer closes it
/// (`libos/src/fs/disk.rs`, `write_back`): the size set first, then the
/// whole file written, then `fsync`.
#[test]
fn grown_by_truncate_then_written_whole() {
    for opts in both() {
        let mut fs = fresh(512, opts);
        let data: Vec<u8> = (1..20_001).flat_map(|i: u32| format!("{i}\n").into_bytes()).collect();
        let f = fs.create(ROOT_INO, b"big", 0o100644).unwrap();
        fs.truncate(f, data.len() as u64).unwrap();
        let mut off = 0;
        while off < data.len() {
            off += fs.write(f, off as u64, &data[off..]).unwrap();
        }
        fs.fsync(f).unwrap();
        assert_eq!(read_all(&mut fs, f), data, "{opts:?} before the reboot");
        let mut fs = reboot(fs);
        let f = fs.lookup(ROOT_INO, b"big").unwrap();
        assert_eq!(read_all(&mut fs, f), data, "{opts:?}");
        assert!(fsck(fs).clean());
    }
}

/// lxrt's `/data` under the small-file benchmark (`libos/tests/c/iobench.c`):
/// a thousand files of 1-4 KiB made one by one in a new directory, each
/// written whole and fsynced when closed, then all removed.
#[test]
fn a_thousand_small_files_written_back_one_by_one() {
    let mut fs = fresh(4096, Options::default());
    let d = fs.mkdir(ROOT_INO, b"small", 0o40755).unwrap();
    let size = |i: u32| 1024 + (i as usize * 997) % 3072;
    for i in 0..1000u32 {
        let f = fs
            .create(d, format!("f{i}").as_bytes(), 0o100644)
            .unwrap_or_else(|e| panic!("create {i}: {e:?}"));
        let data = vec![i as u8; size(i)];
        assert_eq!(fs.stat(f).unwrap().size, 0);
        fs.write(f, 0, &data).unwrap_or_else(|e| panic!("file {i}: {e:?}"));
        fs.fsync(f).unwrap_or_else(|e| panic!("fsync of file {i}: {e:?}"));
    }
    fs.sync().unwrap();
    for i in 0..1000u32 {
        let f = fs.lookup(d, format!("f{i}").as_bytes()).unwrap();
        assert_eq!(read_all(&mut fs, f), vec![i as u8; size(i)]);
    }
    for i in 0..1000u32 {
        fs.unlink(d, format!("f{i}").as_bytes()).unwrap_or_else(|e| panic!("unlink {i}: {e:?}"));
    }
    fs.rmdir(ROOT_INO, b"small").unwrap();
    fs.sync().unwrap();
    assert!(fsck(fs).clean());
}

/// Drops the clean data blocks from the cache: the next read of them
/// comes from the disk.
fn drop_data(fs: &mut TestFs) {
    for b in 0..fs.xn.nblocks() {
        if fs.xn.cached(b) && !fs.xn.dirty(b) && fs.xn.claims(b).is_none() {
            fs.xn.evict(b).unwrap();
        }
    }
}

/// XCP (paper 000 §7.2): a fragmented file with holes, a one-block file
/// and an inline one copied through the cache; the copies hold the same
/// bytes, their blocks were never cached (the data did not pass through
/// the library), they survive a reboot, and fsck is clean.
#[test]
fn xcp_copies_through_the_cache_without_touching_the_data() {
    let mut fs = fresh(2048, Options::default());
    let d = fs.mkdir(ROOT_INO, b"d", 0o755).unwrap();
    // Fragmented: interleaved with another file, and a hole in the middle.
    let (a, b) = (fs.create(d, b"a", 0o640).unwrap(), fs.create(d, b"b", 0o644).unwrap());
    let piece = |i: u32| -> Vec<u8> { (0..20_000u32).map(|j| ((i * 31 + j * 7) % 253) as u8).collect() };
    for i in 0..6u32 {
        fs.write(a, u64::from(i) * 20_000, &piece(i)).unwrap();
        fs.write(b, u64::from(i) * 20_000, &piece(i + 9)).unwrap();
    }
    fs.write(a, 400_000, b"tail after a hole").unwrap();
    let one = fs.create(ROOT_INO, b"one", 0o600).unwrap();
    fs.write(one, 0, &[7u8; 4096]).unwrap();
    let tiny = fs.create(ROOT_INO, b"tiny", 0o644).unwrap();
    fs.write(tiny, 0, b"inline").unwrap();
    fs.sync().unwrap();
    let want = read_all(&mut fs, a);
    drop_data(&mut fs);
    let copy = fs.xcp(a, ROOT_INO, b"copy").unwrap();
    let copy_one = fs.xcp(one, d, b"one").unwrap();
    let copy_tiny = fs.xcp(tiny, d, b"tiny").unwrap();
    for (ino, orig) in [(copy, a), (copy_one, one)] {
        let (st, so) = (fs.stat(ino).unwrap(), fs.stat(orig).unwrap());
        // The copy is less fragmented: no more blocks (extent blocks too).
        assert_eq!((st.size, st.mode), (so.size, so.mode));
        assert!(st.blocks <= so.blocks && st.blocks > 0);
    }
    let written: Vec<u64> = (0..fs.xn.nblocks()).filter(|&b| fs.xn.pending(b) && !fs.xn.dirty(b)).collect();
    assert!(written.len() >= 31, "{} blocks copied", written.len());
    assert!(written.iter().all(|&b| !fs.xn.cached(b)), "a copied block went through the cache");
    fs.fsync(copy).unwrap();
    assert_eq!(read_all(&mut fs, copy), want);
    assert_eq!(read_all(&mut fs, copy_tiny), b"inline");
    // A tree: three files with one schedule of reads and one of writes.
    let want_b = read_all(&mut fs, b);
    let e = fs.mkdir(ROOT_INO, b"e", 0o755).unwrap();
    drop_data(&mut fs);
    let made = fs.xcp_all(&[(a, e, b"a"), (b, e, b"b"), (tiny, e, b"tiny")]).unwrap();
    assert_eq!(read_all(&mut fs, made[0]), want);
    assert_eq!(read_all(&mut fs, made[1]), want_b);
    assert_eq!(read_all(&mut fs, made[2]), b"inline");
    // Not a regular file; a name taken: refused, and the names made for
    // the list before are gone again.
    assert_eq!(fs.xcp(d, ROOT_INO, b"x"), Err(Errno::IsDir));
    assert_eq!(fs.xcp(a, ROOT_INO, b"copy"), Err(Errno::Exist));
    assert_eq!(fs.xcp_all(&[(a, ROOT_INO, b"first"), (b, ROOT_INO, b"copy")]), Err(Errno::Exist));
    assert_eq!(fs.lookup(ROOT_INO, b"first"), Err(Errno::NoEnt));
    let mut fs = reboot(fs);
    let get = |fs: &mut TestFs, p: &str| {
        let i = fs.resolve(p).unwrap();
        read_all(fs, i)
    };
    assert_eq!(get(&mut fs, "/copy"), want);
    assert_eq!(get(&mut fs, "/d/one"), vec![7u8; 4096]);
    assert_eq!(get(&mut fs, "/d/tiny"), b"inline");
    assert_eq!(get(&mut fs, "/e/b"), want_b);
    assert!(fsck(fs).clean());
}

#[test]
fn a_sync_in_small_steps_makes_everything_durable() {
    for opts in both() {
        let mut fs = fresh(1024, opts);
        let d = fs.mkdir(ROOT_INO, b"d", 0o755).unwrap();
        let files: Vec<u64> = (0..20u8).map(|i| fs.create(d, &[b'f', b'a' + i], 0o644).unwrap()).collect();
        for (i, &f) in files.iter().enumerate() {
            fs.write(f, 0, &vec![i as u8; 5000 + i * 100]).unwrap();
        }
        let (mut steps, mut flushed, mut s) = (0, 0, fs.sync_start());
        loop {
            match fs.sync_step(&mut s, 2).unwrap() {
                Step::Done => break,
                Step::Flushed => flushed += 1,
                Step::Wrote => {}
            }
            steps += 1;
            assert!(flushed <= ROUNDS, "the write order never settled");
        }
        // 40-odd dirty blocks, two a step.
        assert!(steps > 10, "{steps} steps");
        // Mounted as the last write left it: all there.
        let mut fs = crash(fs);
        for (i, name) in (0..20u8).map(|i| [b'f', b'a' + i]).enumerate() {
            let f = fs.resolve(&format!("/d/{}", std::str::from_utf8(&name).unwrap())).unwrap();
            assert_eq!(read_all(&mut fs, f), vec![i as u8; 5000 + i * 100]);
        }
        assert!(fsck(fs).clean());
    }
}

#[test]
fn data_blocks_are_the_files_cached_blocks() {
    let mut fs = fresh(512, Options::default());
    let home = fs.mkdir(ROOT_INO, b"home", 0o755).unwrap();
    fs.setattr(home, None, Some((ALICE.uid, ALICE.gid))).unwrap();
    fs.xn.cred = ALICE;
    let f = fs.create(home, b"prog", 0o700).unwrap();
    // Blocks 0-1 data, 2 a hole, block 3 data.
    fs.write(f, 0, &[1; 8192]).unwrap();
    fs.write(f, 3 * 4096, &[3; 100]).unwrap();
    let size = 3 * 4096 + 100;
    let blocks = fs.data_blocks(f, size).unwrap().unwrap();
    assert_eq!(blocks.len(), 4);
    assert_eq!(blocks[2], None, "the hole");
    for (i, b) in blocks.iter().enumerate().filter(|(i, _)| *i != 2) {
        let byte = if i == 3 { 3 } else { 1 };
        assert_eq!(fs.xn.block(b.unwrap()).unwrap()[0], byte, "file block {i}");
    }
    let mut fs = reboot(fs);
    fs.xn.cred = ALICE;
    let f = fs.resolve("/home/prog").unwrap();
    let again = fs.data_blocks(f, size).unwrap().unwrap();
    assert_eq!(again, blocks, "read back into the cache after a reboot");
    assert!(again.iter().flatten().all(|&b| fs.xn.cached(b)));
    let g = fs.create(home, b"tiny", 0o644).unwrap();
    fs.write(g, 0, b"inline").unwrap();
    assert_eq!(fs.data_blocks(g, 6).unwrap(), None, "inline data has no blocks");
    // Another user may not read it: no blocks, nothing bound.
    let mut fs = reboot(fs);
    fs.xn.cred = BOB;
    let f = fs.resolve("/home/prog").unwrap();
    assert_eq!(fs.data_blocks(f, size), Err(Errno::Access));
    assert!(blocks.iter().flatten().all(|&b| !fs.xn.cached(b)));
}
