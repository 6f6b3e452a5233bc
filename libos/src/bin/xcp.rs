//! XCP, the "zero-touch" file copy (paper 000 §7.2; `docs/cffs.md`,
//! "XCP"): C-FFS, this library, copies a file on the XN disk by reading
//! the source's blocks into cache pages (all reads at once, in disk
//! order), allocating the copy's blocks, and having XN write the cache
//! pages to them (`xn_copy`, sorted by destination), then one `fsync`.
//! The data never passes through this program.
//!
//! `xcp test` (boot test `xn_xcp`, on a fresh C-FFS disk): writes
//! `/src` (4 MiB and a tail), drops its blocks from the cache, copies it
//! to `/copy`, reads the copy back from the disk and compares every
//! byte; then the kernel's refusals of bad copies, each with its own
//! error, after which the copy is unchanged. `xcp check` (the next boot):
//! `/copy` survived. `fsck` of the image afterwards must be clean.
//!
//! `xcp [quick] [NAME..]` (the benchmark rows `xcp` and `xcp_tree`,
//! `cargo xtask bench`): the calibration, then `xcp`: a 16 MiB file (1
//! MiB quick) made and synced before the clock, then per trial XCP and
//! `fsync` of the copy between two markers (`xchg %bx,%bx`: the harness
//! counts the guest instructions between them), the copy checked and
//! removed after; `xcp_tree`: 64 files of 256 KiB (4 quick) in `/tree`,
//! per trial copied into a new `/copy` with one XCP schedule and a
//! `sync`.
#![no_std]
#![no_main]

extern crate alloc;

use abi::syscall::{CRED_DEVICES, CRED_SELF};
use abi::xn::ROOT;
use abi::Error;
use alloc::vec;
use alloc::vec::Vec;
use cffs::format::{Inode, ENTRY};
use cffs::{Fs, XnClient, ROOT_INO};
use libos::fs::xnclient::SysXn;
use libos::native;
use user::{kinfo, println, xn};

const MIB: u64 = 1 << 20;
const CHUNK: usize = 64 * 1024;

type CFs = Fs<SysXn>;

static mut FAILED: u32 = 0;

fn check(what: &str, ok: bool) {
    println!("xcp: {what}: {}", if ok { "ok" } else { "FAILED" });
    if !ok {
        // SAFETY: one thread.
        unsafe { FAILED += 1 };
    }
}

/// The byte at `off` of file `seed`: every offset differs from its
/// neighbours, no block equals another, and files differ.
fn pattern(seed: u64, off: u64) -> u8 {
    (off.wrapping_mul(31) ^ (off >> 12).wrapping_mul(7) ^ seed.wrapping_mul(101)) as u8
}

/// Writes `size` bytes of file `seed`'s pattern to a new file `name` in
/// directory `dir`, durably.
fn make(fs: &mut CFs, dir: u64, name: &[u8], seed: u64, size: u64) -> Result<u64, cffs::Errno> {
    let ino = fs.create(dir, name, 0o100644)?;
    let mut buf = vec![0u8; CHUNK];
    let mut off = 0;
    while off < size {
        let n = (size - off).min(CHUNK as u64) as usize;
        buf[..n].iter_mut().enumerate().for_each(|(i, b)| *b = pattern(seed, off + i as u64));
        fs.write(ino, off, &buf[..n])?;
        off += n as u64;
    }
    fs.fsync(ino)?;
    Ok(ino)
}

/// Whether file `ino` holds `size` bytes of file `seed`'s pattern.
fn holds_pattern(fs: &mut CFs, ino: u64, seed: u64, size: u64) -> bool {
    if fs.stat(ino).map(|s| s.size) != Ok(size) {
        return false;
    }
    let mut buf = vec![0u8; CHUNK];
    let mut off = 0;
    while off < size {
        let Ok(n) = fs.read(ino, off, &mut buf) else { return false };
        if n == 0 || buf[..n].iter().enumerate().any(|(i, &b)| b != pattern(seed, off + i as u64)) {
            return false;
        }
        off += n as u64;
    }
    true
}

/// Drops every clean data block this process has cached (the next read
/// comes from the disk).
fn drop_data(fs: &mut CFs) {
    for b in 0..fs.xn.nblocks() {
        if fs.xn.cached(b) && !fs.xn.dirty(b) && fs.xn.claims(b).is_none() {
            let _ = fs.xn.evict(b);
        }
    }
}

/// The first extent of `ino`'s entry, and the block holding the entry.
fn first_extent(fs: &mut CFs, ino: u64) -> (u64, u64) {
    let loc = fs.location(ino).expect("has an entry");
    let b = fs.xn.block(loc.block).expect("cached");
    (Inode::decode(&b[loc.off()..loc.off() + ENTRY]).ext[0].start, loc.block)
}

fn refused(what: &str, got: Result<u64, Error>, want: Error) {
    if got == Err(want) {
        println!("xcp test: {what}: refused ({want:?})");
    } else {
        println!("xcp test: {what}: FAILED: {got:?}, want {want:?}");
        // SAFETY: one thread.
        unsafe { FAILED += 1 };
    }
}

const TEST_SIZE: u64 = 4 * MIB + 1234;

fn test() {
    let x = SysXn::open(CRED_DEVICES).expect("an XN disk");
    let mut fs = Fs::mount(x).expect("C-FFS mounts");
    let src = make(&mut fs, ROOT_INO, b"src", 0, TEST_SIZE).expect("the source");
    drop_data(&mut fs);
    let before = xn::info().expect("xn_info");
    let copy = fs.xcp(src, ROOT_INO, b"copy").expect("xcp");
    fs.fsync(copy).expect("fsync the copy");
    let after = xn::info().expect("xn_info");
    println!(
        "xcp test: copied {TEST_SIZE} bytes: {} read requests, {} write requests, {} flushes",
        after.reads - before.reads,
        after.writes - before.writes,
        after.flushes - before.flushes
    );
    drop_data(&mut fs);
    check(
        "the copy read back from the disk holds the source's bytes",
        holds_pattern(&mut fs, copy, 0, TEST_SIZE),
    );

    // Bad copies, each refused by the kernel with its own error; the
    // source's first blocks cached again, the copy's not.
    drop_data(&mut fs);
    let (s0, sholder) = first_extent(&mut fs, src);
    let (d0, dholder) = first_extent(&mut fs, copy);
    fs.xn.fetch(::xn::Parent::Block(sholder), s0, 2).expect("the source's first blocks");
    let root = fs.root_block();
    let (root_index, _) = fs.xn.root("cffs").expect("C-FFS's root");
    let nblocks = fs.xn.nblocks();
    refused("no blocks", xn::copy(dholder, d0, s0, 0, CRED_DEVICES), Error::BadLength);
    refused("more than a run", xn::copy(dholder, d0, s0, 65, CRED_DEVICES), Error::BadLength);
    refused("past the disk's end", xn::copy(dholder, nblocks + 5, s0, 1, CRED_DEVICES), Error::BadBlock);
    refused(
        "onto a block its parent does not claim",
        xn::copy(root, d0, s0, 1, CRED_DEVICES),
        Error::NotClaimed,
    );
    refused(
        "onto the root block (metadata)",
        xn::copy(ROOT | root_index as u64, root, s0, 1, CRED_DEVICES),
        Error::ReadOnly,
    );
    refused("onto a cached block", xn::copy(sholder, s0 + 1, s0, 1, CRED_DEVICES), Error::AlreadyCached);
    refused("from a block not cached", xn::copy(dholder, d0, d0 + 1, 1, CRED_DEVICES), Error::NotCached);
    refused("by nobody onto root's 0644 file", xn::copy(dholder, d0, s0, 1, CRED_SELF), Error::Denied);
    drop_data(&mut fs);
    check("the copy unchanged by the refused copies", holds_pattern(&mut fs, copy, 0, TEST_SIZE));
    fs.sync().expect("sync");
}

/// The next boot: the copy survived.
fn after() {
    let x = SysXn::open(CRED_DEVICES).expect("an XN disk");
    let mut fs = Fs::mount(x).expect("C-FFS mounts");
    let copy = fs.resolve("/copy").expect("/copy");
    check("/copy after the reboot", holds_pattern(&mut fs, copy, 0, TEST_SIZE));
}

fn rdtsc() -> u64 {
    // SAFETY: RDTSC only reads the time-stamp counter; lfence keeps it
    // from moving across the measured code.
    unsafe { core::arch::x86_64::_mm_lfence() };
    // SAFETY: as above.
    unsafe { core::arch::x86_64::_rdtsc() }
}

/// The benchmark plugin's marker (66 87 db): a no-op for the processor.
fn mark() {
    // SAFETY: exchanges a register with itself.
    unsafe { core::arch::asm!("xchg bx, bx", options(nomem, nostack)) };
}

fn calib(n: u64) {
    for _ in 0..n {
        // SAFETY: nops only; the loop's dec/jnz are the other two of 1000.
        unsafe { core::arch::asm!(".rept 998", "nop", ".endr", options(nomem, nostack)) };
    }
}

fn fail(why: core::fmt::Arguments) -> ! {
    println!("BENCH-FAIL xcp {why}");
    user::sys::exit(1)
}

/// Files in `xcp_tree`'s tree, each of `TREE_FILE` bytes.
const TREE_FILE: u64 = 256 * 1024;

/// `f` and `i` in decimal (`alloc::format!` would bring in unwinding).
fn tree_name(i: u64) -> Vec<u8> {
    let mut digits = Vec::new();
    let mut n = i;
    loop {
        digits.push(b'0' + (n % 10) as u8);
        n /= 10;
        if n == 0 {
            break;
        }
    }
    digits.push(b'f');
    digits.reverse();
    digits
}

fn or_fail<T>(r: Result<T, cffs::Errno>, what: &str) -> T {
    r.unwrap_or_else(|e| fail(format_args!("{what}: {e:?}")))
}

/// One `xcp` trial: XCP of `/src` (`mib` MiB) and `fsync` of the copy
/// between the markers; the instructions' clock reading.
fn xcp_file(fs: &mut CFs, mib: u64) -> u64 {
    let t0 = rdtsc();
    mark();
    let copied =
        fs.resolve("/src").and_then(|s| fs.xcp(s, ROOT_INO, b"dst")).and_then(|d| fs.fsync(d).map(|_| d));
    mark();
    let total = rdtsc() - t0;
    let dst = or_fail(copied, "xcp");
    if !holds_pattern(fs, dst, 0, mib * MIB) {
        fail(format_args!("the copy differs"));
    }
    or_fail(fs.unlink(ROOT_INO, b"dst").and_then(|_| fs.sync()), "unlink");
    total
}

/// One `xcp_tree` trial: XCP of the `files` files of `/tree` into a new
/// `/copy` with one schedule, and `sync`, between the markers.
fn xcp_tree(fs: &mut CFs, files: u64) -> u64 {
    let tree = or_fail(fs.resolve("/tree"), "/tree");
    let names: Vec<Vec<u8>> = (0..files).map(tree_name).collect();
    let srcs: Vec<u64> = names.iter().map(|n| or_fail(fs.lookup(tree, n), "a source")).collect();
    let t0 = rdtsc();
    mark();
    let copied = fs.mkdir(ROOT_INO, b"copy", 0o40755).and_then(|copy| {
        let list: Vec<(u64, u64, &[u8])> = srcs.iter().zip(&names).map(|(&s, n)| (s, copy, &n[..])).collect();
        fs.xcp_all(&list).and_then(|made| fs.sync().map(|_| (copy, made)))
    });
    mark();
    let total = rdtsc() - t0;
    let (copy, made) = or_fail(copied, "xcp_all");
    for (i, &ino) in made.iter().enumerate() {
        if !holds_pattern(fs, ino, 1 + i as u64, TREE_FILE) {
            fail(format_args!("copy of f{i} differs"));
        }
    }
    for n in &names {
        or_fail(fs.unlink(copy, n), "unlink");
    }
    or_fail(fs.rmdir(ROOT_INO, b"copy").and_then(|_| fs.sync()), "rmdir");
    total
}

/// The benchmark: `words` are the boot's (`quick`, row names).
fn bench(words: &[&str]) {
    let quick = words.contains(&"quick");
    let named: Vec<&str> = words.iter().copied().filter(|w| *w != "quick").collect();
    let rows: Vec<&str> =
        ["xcp", "xcp_tree"].into_iter().filter(|r| named.is_empty() || named.contains(r)).collect();
    println!("BENCH-PLAN calib {}", rows.join(" "));
    let (trials, mib, files) = if quick { (1, 1, 4) } else { (3, 16, 64) };
    for _ in 0..trials {
        let n = if quick { 2000 } else { 10000 };
        let t = rdtsc();
        calib(n);
        println!("BENCH calib {n} {}", rdtsc() - t);
    }
    if rows.is_empty() {
        return;
    }
    let x = SysXn::open(CRED_DEVICES).unwrap_or_else(|e| fail(format_args!("no XN disk: {e:?}")));
    let mut fs = or_fail(Fs::mount(x), "C-FFS");
    if rows.contains(&"xcp") {
        or_fail(make(&mut fs, ROOT_INO, b"src", 0, mib * MIB), "the source");
        for _ in 0..trials {
            println!("BENCH xcp {mib} {}", xcp_file(&mut fs, mib));
        }
    }
    if rows.contains(&"xcp_tree") {
        let tree = or_fail(fs.mkdir(ROOT_INO, b"tree", 0o40755), "mkdir /tree");
        for i in 0..files {
            or_fail(make(&mut fs, tree, &tree_name(i), 1 + i, TREE_FILE), "a source");
        }
        or_fail(fs.sync(), "sync");
        for _ in 0..trials {
            println!("BENCH xcp_tree {files} {}", xcp_tree(&mut fs, files));
        }
    }
}

fn main(_: u64) -> i32 {
    if let Err(e) = native::init(libos::linux::syscall) {
        println!("xcp: {e}");
        return 1;
    }
    let words: Vec<&str> =
        kinfo::cmdline().split_whitespace().skip_while(|w| *w != "init=xcp").skip(1).collect();
    match words.first().copied() {
        Some("test") => test(),
        Some("check") => after(),
        _ => {
            bench(&words);
            println!("BENCH-DONE");
            return 0;
        }
    }
    // SAFETY: one thread.
    let failed = unsafe { FAILED };
    let phase = words.first().copied().unwrap_or("");
    if failed == 0 {
        println!("xcp {phase}: all passed");
        0
    } else {
        println!("xcp {phase}: {failed} FAILED");
        1
    }
}

user::entry!(main);
