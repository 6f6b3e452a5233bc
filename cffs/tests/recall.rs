//! `Fs::recall`: a place for an inode another process saw (the library
//! OS keeps it in shared memory any of its processes can write), checked
//! before it is used. Forged places are refused; one that forges an
//! inode's bytes inside a data block passes C-FFS's check but gets no
//! block through XN that the data block does not claim.

mod common;

use cffs::format::{Inode, ENTRY};
use cffs::{Errno, Fs, Loc, Local, Options, XnClient, ROOT_INO};
use common::*;

/// The disk as it is, opened by a library that has met nothing yet.
fn stranger(mut fs: TestFs) -> TestFs {
    fs.sync().unwrap();
    Fs::open(Local::mount(fs.xn.into_disk(), 1, ROOT).unwrap(), false).unwrap()
}

/// A fresh disk holding `/secret` (0600, three blocks): the file system,
/// the secret's inode and its bytes.
fn with_secret() -> (TestFs, u64, Vec<u8>) {
    let mut fs = fresh(512, Options::default());
    let secret: Vec<u8> = (0..9000u32).map(|i| (i % 200) as u8 + 1).collect();
    let s = fs.create(ROOT_INO, b"secret", 0o600).unwrap();
    fs.write(s, 0, &secret).unwrap();
    (fs, s, secret)
}

#[test]
fn a_true_place_is_recalled_and_forged_ones_are_refused() {
    let (mut fs, s, _) = with_secret();
    let f = fs.create(ROOT_INO, b"plain", 0o644).unwrap();
    fs.write(f, 0, &[7u8; 5000]).unwrap();
    let (at_s, at_f) = (fs.location(s).unwrap(), fs.location(f).unwrap());
    let mut fs = stranger(fs);
    assert!(!fs.exists(f), "a fresh library has met nothing");
    let forged = [
        Loc { block: at_f.block, entry: 0 },
        Loc { block: at_f.block, entry: 16 },
        Loc { block: at_f.block, entry: usize::MAX },
        Loc { block: fs.xn.nblocks(), entry: 1 },
        Loc { block: u64::MAX, entry: 1 },
        Loc { block: 0, entry: 1 },
        at_s,
    ];
    for loc in forged {
        assert!(!fs.recall(f, loc), "{loc:?} taken as file {f}'s place");
        assert!(!fs.exists(f));
    }
    assert!(fs.recall(f, at_f));
    let mut buf = [0u8; 5000];
    assert_eq!(fs.read(f, 0, &mut buf).unwrap(), 5000);
    assert_eq!(buf, [7u8; 5000]);
    // A forged place does not replace a true one.
    assert!(!fs.recall(f, at_s));
    assert!(fs.exists(f));
}

#[test]
fn an_inode_forged_in_a_data_block_reaches_no_other_files_blocks() {
    let (mut fs, s, secret) = with_secret();
    let at_s = fs.location(s).unwrap();
    // A copy of the secret's entry under an unused inode number, written
    // as entry 2 of a plain file's first data block.
    let mut entry = [0u8; ENTRY];
    entry.copy_from_slice(&fs.xn.block(at_s.block).unwrap()[at_s.off()..at_s.off() + ENTRY]);
    let mut fake = Inode::decode(&entry);
    let forged_ino = 999_999;
    fake.ino = forged_ino;
    let f = fs.create(ROOT_INO, b"plain", 0o644).unwrap();
    let mut data = vec![0u8; 3 * ENTRY];
    data[2 * ENTRY..].copy_from_slice(&fake.encode(b"x"));
    data.resize(4096, 0);
    fs.write(f, 0, &data).unwrap();
    let at_f = fs.location(f).unwrap();
    let plain = Inode::decode(&fs.xn.block(at_f.block).unwrap()[at_f.off()..at_f.off() + ENTRY]);
    let data_block = plain.ext[0].start;
    let mut fs = stranger(fs);
    // Uncached, the data block is nobody's metadata: C-FFS cannot find a
    // parent to read it through.
    assert!(!fs.recall(forged_ino, Loc { block: data_block, entry: 2 }));
    // Once the plain file has been read, its block is cached, and C-FFS's
    // own check passes: the bytes there say inode 999,999.
    assert!(fs.recall(f, at_f));
    assert_eq!(read_all(&mut fs, f), data);
    assert!(fs.recall(forged_ino, Loc { block: data_block, entry: 2 }));
    let mut buf = vec![0u8; secret.len()];
    let got = fs.read(forged_ino, 0, &mut buf);
    assert!(matches!(got, Err(Errno::Xn(_))), "read through a forged inode: {got:?}");
    assert!(!buf.iter().any(|&b| b != 0), "the secret's bytes came through");
    // The secret itself is intact and readable through its real entry.
    assert!(fs.recall(s, at_s));
    assert_eq!(read_all(&mut fs, s), secret);
}
