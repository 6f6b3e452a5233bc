//! `Fs::write_data` and `Fs::settle`: a library that keeps a file's size
//! and times in memory (lxrt's shared inode, as ext4 keeps a dirty inode)
//! writes the data without rewriting the entry each time, and writes the
//! entry once, at close, fsync or sync. Inline data lives in the entry,
//! so it is never left behind; `read_sized` reads to the size the caller
//! knows.

mod common;

use cffs::{Options, ROOT_INO};
use common::*;

#[test]
fn block_writes_leave_the_entry_to_settle() {
    let mut fs = fresh(512, Options::default());
    let f = fs.create(ROOT_INO, b"log", 0o644).unwrap();
    assert!(fs.write_data(f, 0, &[1u8; 5000]).unwrap());
    assert!(fs.write_data(f, 5000, &[2u8; 5000]).unwrap());
    // The entry is behind; the data is there to the size the caller keeps.
    assert!(fs.stat(f).unwrap().size < 10_000);
    let mut buf = vec![0u8; 10_000];
    assert_eq!(fs.read_sized(f, 0, &mut buf, 10_000).unwrap(), 10_000);
    assert_eq!(&buf[4998..5002], &[1, 1, 2, 2]);
    fs.settle(f, 10_000, 7_000_000_000).unwrap();
    let st = fs.stat(f).unwrap();
    assert_eq!((st.size, st.mtime), (10_000, 7_000_000_000));
    // Settled before a crash: the size is durable with the data.
    fs.fsync(f).unwrap();
    let mut fs = crash(fs);
    let f = fs.resolve("/log").unwrap();
    assert_eq!(read_all(&mut fs, f).len(), 10_000);
}

#[test]
fn inline_data_is_never_left_behind() {
    let mut fs = fresh(512, Options::default());
    let f = fs.create(ROOT_INO, b"tiny", 0o644).unwrap();
    assert!(!fs.write_data(f, 0, b"hello").unwrap());
    assert_eq!(fs.stat(f).unwrap().size, 5);
    assert_eq!(read_all(&mut fs, f), b"hello");
}
