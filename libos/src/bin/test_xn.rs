//! Boot test of XN in the kernel (`docs/xn.md`; `cargo xtask boottest
//! xn_disk`, which makes the disk with `mkfs` and boots this twice).
//!
//! `test_xn first`: C-FFS, this library, mounts the disk through the
//! kernel's XN, reads what mkfs wrote, writes and syncs files; then the
//! hostile requests a library file system could make, each refused with
//! its own error and changing nothing: metadata bound writable, forged
//! metadata claiming another file's block (declared or not), a free of
//! what it never had, a cache page mapped or freed behind XN's back, a
//! fresh insert of a block that holds data, reads through a parent that
//! does not claim the block, changes and bindings by credentials the
//! templates' `acl` refuses, another environment's lock, an unwritten
//! child left under a parent written back, a block moved under itself,
//! templates from a caller without the device capability or that the
//! verifier refuses.
//!
//! `test_xn after` (the next boot, same disk): the files are there.
//!
//! `test_xn append` / `test_xn check`: the power-cut test (`cargo xtask
//! powercut`): records appended to `/log`, each `fsync`ed and then
//! acknowledged on the console, until QEMU is killed; after the reboot,
//! every record up to the last acknowledged one must be there, intact.
#![no_std]
#![no_main]

extern crate alloc;

use abi::ident::Ident;
use abi::syscall::{map as mf, CRED_DEVICES, CRED_SELF, ENV_SELF, FRAME_ANY, XN_SELF};
use abi::xn::{Change, RootAdd, TemplateSpec, ROOT};
use abi::Error;
use alloc::vec;
use alloc::vec::Vec;
use cffs::format::{Inode, ENTRY};
use cffs::{Fs, XnClient};
use libos::fs::xnclient::SysXn;
use libos::layout::SCRATCH;
use libos::linux::nr::{SYS_EXIT, SYS_FORK, SYS_WAIT4};
use libos::native::{self, linux};
use user::{kinfo, println, sys, xn};

static mut FAILED: u32 = 0;

fn check(what: &str, ok: bool) {
    println!("test_xn: {what}: {}", if ok { "ok" } else { "FAILED" });
    if !ok {
        // SAFETY: one thread.
        unsafe { FAILED += 1 };
    }
}

fn refused(what: &str, got: Result<u64, Error>, want: Error) {
    let ok = got == Err(want);
    if ok {
        println!("test_xn: {what}: refused ({want:?})");
    } else {
        println!("test_xn: {what}: FAILED: {got:?}, want {want:?}");
        // SAFETY: one thread.
        unsafe { FAILED += 1 };
    }
}

fn motd() -> Vec<u8> {
    (0..5000u32).map(|i| b"hello from the disk "[i as usize % 20]).collect()
}

type CFs = Fs<SysXn>;

fn mount(slot: u64) -> CFs {
    let x = SysXn::open(slot).unwrap_or_else(|e| panic!("no XN disk: {e:?}"));
    Fs::mount(x).unwrap_or_else(|e| panic!("C-FFS mount: {e:?}"))
}

/// `XN_SELF`: XN judges the caller by the identity the kernel holds for
/// it, whatever capabilities it has: root (this program) binds anything,
/// the same program acting as uid 1000 only what uid 1000 may, and no
/// identity installs or mints anything.
fn as_self(motd_blk: u64, motd_data: u64, notes_blk: u64, notes_data: u64) {
    refused("XN_SELF mints no identity", xn::identity(0, 0, XN_SELF), Error::NotPermitted);
    refused("XN_SELF adds no root", xn::root_add(&RootAdd::default(), XN_SELF), Error::NotPermitted);
    check(
        "root by XN_SELF binds /motd's data writable",
        xn::bind(motd_blk, motd_data, SCRATCH, true, XN_SELF).is_ok(),
    );
    sys::unmap(ENV_SELF, SCRATCH).expect("unmap");
    let root = sys::ident_get(0).expect("ident_get");
    let user = Ident { uid: [0, 1000, 0], gid: [0, 1000, 0], ..root };
    sys::ident_set(&user).expect("root becomes uid 1000 (saved 0)");
    refused(
        "uid 1000 by XN_SELF binds /motd's data writable",
        xn::bind(motd_blk, motd_data, SCRATCH, true, XN_SELF),
        Error::Denied,
    );
    check(
        "uid 1000 by XN_SELF binds its own 0600 file",
        xn::bind(notes_blk, notes_data, SCRATCH, true, XN_SELF).is_ok(),
    );
    sys::unmap(ENV_SELF, SCRATCH).expect("unmap");
    sys::ident_set(&root).expect("back to root (the saved uid)");
}

fn read_all(fs: &mut CFs, path: &str) -> Option<Vec<u8>> {
    let ino = fs.resolve(path).ok()?;
    let size = fs.stat(ino).ok()?.size;
    let mut buf = vec![0u8; size as usize];
    let n = fs.read(ino, 0, &mut buf).ok()?;
    buf.truncate(n);
    Some(buf)
}

/// The inode of `path` and where its entry is.
fn entry(fs: &mut CFs, path: &str) -> (Inode, u64, usize) {
    let ino = fs.resolve(path).expect("resolves");
    let loc = fs.location(ino).expect("has an entry");
    let b = fs.xn.block(loc.block).expect("cached");
    (Inode::decode(&b[loc.off()..loc.off() + ENTRY]), loc.block, loc.off())
}

/// A fresh frame of ours, mapped nowhere.
fn frame() -> u64 {
    sys::frame_alloc(ENV_SELF, FRAME_ANY).expect("a frame")
}

fn change(block: u64, off: usize, bytes: &[u8]) -> Change {
    Change { block, off: off as u32, len: bytes.len() as u32, bytes: bytes.as_ptr() as u64 }
}

fn first() {
    let mut fs = mount(CRED_DEVICES);
    let got = read_all(&mut fs, "/motd");
    if got.as_deref() == Some(&motd()[..]) {
        println!("test_xn first: read /motd through XN: 5000 bytes, as mkfs wrote them");
    } else {
        check("/motd as mkfs wrote it", false);
    }
    check(
        "/etc/small",
        read_all(&mut fs, "/etc/small").as_deref() == Some(b"a small file, inline in its entry\n"),
    );

    // Files that must survive the reboot.
    let root = fs.resolve("/").expect("root");
    let p = fs.create(root, b"persist", 0o100644).expect("create /persist");
    fs.write(p, 0, b"written in the first boot\n").expect("write /persist");
    fs.fsync(p).expect("fsync /persist");
    let home = fs.mkdir(root, b"home", 0o40755).expect("mkdir /home");
    let user = fs.mkdir(home, b"user", 0o40755).expect("mkdir /home/user");
    fs.setattr(user, None, Some((1000, 1000))).expect("chown /home/user");
    let notes = fs.create(user, b"notes", 0o100644).expect("create notes");
    fs.write(notes, 0, &[b'n'; 6000]).expect("write notes");
    fs.setattr(notes, None, Some((1000, 1000))).expect("chown notes");
    fs.sync().expect("sync");
    println!("test_xn first: wrote /persist and /home/user/notes and synced");

    hostile(&mut fs);
    // Nothing the refused requests tried changed a file.
    check("/motd unchanged", read_all(&mut fs, "/motd").as_deref() == Some(&motd()[..]));
    check("/secret unchanged", read_all(&mut fs, "/secret").is_some_and(|s| s.len() == 5000));
    fs.sync().expect("sync");
}

fn hostile(fs: &mut CFs) {
    let (motd_i, motd_blk, motd_off) = entry(fs, "/motd");
    let (secret_i, _, _) = entry(fs, "/secret");
    let root_blk = fs.root_block();
    let motd_data = motd_i.ext[0].start;
    let secret_data = secret_i.ext[0].start;
    let info = xn::info().expect("xn_info");
    check("the disk is XN's", info.nblocks > 0 && info.registry_slots > 0);
    let m = xn::entry(motd_blk, info.registry_slots).expect("the directory block is in the registry");
    check("the registry shows the directory block as metadata", m.flags & abi::xn::reg::METADATA != 0);

    // Metadata is never bound writable.
    let (root_index, _) = xn::root_find("cffs").expect("the C-FFS root");
    refused(
        "the root block bound writable",
        xn::bind(ROOT | root_index, root_blk, SCRATCH, true, CRED_DEVICES),
        Error::ReadOnly,
    );
    let parent = xn::parent(motd_blk).expect("parent");
    refused(
        "a directory block bound writable",
        xn::bind(parent, motd_blk, SCRATCH, true, CRED_DEVICES),
        Error::ReadOnly,
    );

    // Forged metadata: /motd's entry claims /secret's data block (named
    // in the same directory block), then /home/user/notes' (elsewhere).
    let extent = |b: u64| {
        let mut ext = [0u8; 16];
        ext[..8].copy_from_slice(&b.to_le_bytes());
        ext[8..12].copy_from_slice(&1u32.to_le_bytes());
        ext[12..16].copy_from_slice(&2u32.to_le_bytes());
        ext
    };
    let at = motd_off + 64 + 16 * 3;
    let (ext, forged) = (extent(secret_data), abi::xn::Extent { start: secret_data, count: 1 });
    refused(
        "an extent claiming a block its directory block names already",
        xn::modify(&[change(motd_blk, at, &ext)], &[forged], &[], CRED_DEVICES),
        Error::NotFree,
    );
    let notes_data = entry(fs, "/home/user/notes").0.ext[0].start;
    let (ext, forged) = (extent(notes_data), abi::xn::Extent { start: notes_data, count: 1 });
    refused(
        "an extent claiming another file's block, undeclared",
        xn::modify(&[change(motd_blk, at, &ext)], &[], &[], CRED_DEVICES),
        Error::Undeclared,
    );
    refused(
        "an extent claiming another file's block, declared",
        xn::modify(&[change(motd_blk, at, &ext)], &[forged], &[], CRED_DEVICES),
        Error::NotFree,
    );
    // A free of what it never had: a harmless byte changes, a free is declared.
    let t = 7i64.to_le_bytes();
    refused(
        "a free of a block it does not hold",
        xn::modify(&[change(motd_blk, motd_off + 48, &t)], &[], &[forged], CRED_DEVICES),
        Error::Undeclared,
    );
    // The cache page behind XN's back.
    let page = xn::entry(motd_data, info.registry_slots).expect("/motd's data is cached").frame;
    refused("a cache page mapped with map", sys::map(ENV_SELF, SCRATCH, page, mf::WRITE), Error::NotOwner);
    refused("a cache page freed", sys::frame_free(page), Error::NotOwner);
    let f = frame();
    refused(
        "a read through a parent that does not claim the block",
        xn::read(root_blk, secret_data, &[f], CRED_DEVICES),
        Error::NotClaimed,
    );
    refused(
        "a read of a block already cached",
        xn::read(motd_blk, motd_data, &[f], CRED_DEVICES),
        Error::AlreadyCached,
    );
    refused(
        "a cache page offered to read into",
        xn::read(motd_blk, motd_data, &[page], CRED_DEVICES),
        Error::NotOwner,
    );
    sys::map(ENV_SELF, SCRATCH, f, mf::WRITE).expect("map");
    refused(
        "a mapped frame offered to read into",
        xn::read(motd_blk, motd_data + 1, &[f], CRED_DEVICES),
        Error::FrameMapped,
    );
    sys::unmap(ENV_SELF, SCRATCH).expect("unmap");
    refused("a write-back of a block not cached", xn::write(info.nblocks - 1, 1), Error::NotCached);
    refused(
        "a root outside the disk",
        xn::root_add(
            &RootAdd {
                name: *b"bad\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0",
                name_len: 3,
                tid: 1,
                start: info.nblocks + 5,
                count: 1,
                frames: &f as *const u64 as u64,
                persistent: 1,
            },
            CRED_DEVICES,
        ),
        Error::BadBlock,
    );
    refused(
        "a root named as an existing one",
        xn::root_add(
            &RootAdd {
                name: *b"cffs\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0",
                name_len: 4,
                tid: 1,
                start: info.nblocks - 1,
                count: 1,
                frames: &f as *const u64 as u64,
                persistent: 1,
            },
            CRED_DEVICES,
        ),
        Error::BadName,
    );

    // Templates: only with the device capability, and only verified code.
    let exit = bpf::Insn::new(0x95, 0, 0, 0, 0).to_bytes();
    let jump_back = bpf::Insn::new(0x05, 0, 0, -1, 0).to_bytes();
    let spec = |name: &[u8], code: &[[u8; 8]]| TemplateSpec::new(name, 1, code, code, code);
    let good = [bpf::Insn::new(0xb7, 0, 0, 0, 0).to_bytes(), exit];
    refused(
        "templates without the device capability",
        xn::install(&[spec(b"t.hostile", &good)], CRED_SELF),
        Error::NotPermitted,
    );
    refused(
        "a template whose code loops",
        xn::install(&[spec(b"t.loop", &[jump_back, exit])], CRED_DEVICES),
        Error::BadTemplate,
    );
    refused(
        "a template named as an installed one",
        xn::install(&[spec(b"cffs.meta", &good)], CRED_DEVICES),
        Error::BadTemplate,
    );

    // Credentials the templates' acl judges: nobody, and uid 1000.
    let mode = 0o100777u32.to_le_bytes();
    refused(
        "nobody changes /motd's mode",
        xn::modify(&[change(motd_blk, motd_off + 4, &mode)], &[], &[], CRED_SELF),
        Error::Denied,
    );
    refused(
        "nobody binds /secret's data (0600)",
        xn::bind(entry(fs, "/secret").1, secret_data, SCRATCH, false, CRED_SELF),
        Error::Denied,
    );
    refused(
        "nobody binds /motd's data writable",
        xn::bind(motd_blk, motd_data, SCRATCH, true, CRED_SELF),
        Error::Denied,
    );
    check(
        "nobody binds /motd's data to read (0644)",
        xn::bind(motd_blk, motd_data, SCRATCH, false, CRED_SELF).is_ok(),
    );
    // SAFETY: just mapped read-only at SCRATCH.
    check("and reads the one cached copy", unsafe { core::ptr::read_volatile(SCRATCH as *const u8) } == b'h');
    sys::unmap(ENV_SELF, SCRATCH).expect("unmap");
    let user = xn::identity(1000, 1000, CRED_DEVICES).expect("an identity for uid 1000");
    refused("an identity without the device capability", xn::identity(0, 0, CRED_SELF), Error::NotPermitted);
    let (notes_i, notes_blk, notes_off) = entry(fs, "/home/user/notes");
    check(
        "uid 1000 changes its own file's mode",
        xn::modify(&[change(notes_blk, notes_off + 4, &0o100600u32.to_le_bytes())], &[], &[], user).is_ok(),
    );
    refused(
        "uid 1000 changes /motd's mode",
        xn::modify(&[change(motd_blk, motd_off + 4, &mode)], &[], &[], user),
        Error::Denied,
    );
    check("its data block as before", notes_i.ext[0].start == notes_data);
    check(
        "uid 1000 binds its file's data writable",
        xn::bind(notes_blk, notes_data, SCRATCH, true, user).is_ok(),
    );
    sys::unmap(ENV_SELF, SCRATCH).expect("unmap");
    as_self(motd_blk, motd_data, notes_blk, notes_data);

    // A run bound in one call (`xn_bind_run`): /home/user's block claims
    // notes' two data blocks and nothing else; each refusal maps nothing.
    let nothing_mapped = || sys::unmap(ENV_SELF, SCRATCH) == Err(Error::NotMapped);
    refused(
        "a run the parent does not claim",
        xn::bind_run(notes_blk, motd_data, 2, SCRATCH, false, user),
        Error::NotClaimed,
    );
    refused(
        "a run past the file's extent",
        xn::bind_run(notes_blk, notes_data, 3, SCRATCH, false, user),
        Error::NotClaimed,
    );
    refused(
        "a run longer than the bound",
        xn::bind_run(notes_blk, notes_data, abi::xn::MAX_RUN + 1, SCRATCH, false, user),
        Error::BadLength,
    );
    refused(
        "a run running out of user space",
        xn::bind_run(notes_blk, notes_data, 2, abi::layout::USER_END - 4096, false, user),
        Error::BadAddress,
    );
    let g = frame();
    sys::map(ENV_SELF, SCRATCH + 4096, g, 0).expect("map a frame after SCRATCH");
    refused(
        "a run over a page already mapped",
        xn::bind_run(notes_blk, notes_data, 2, SCRATCH, false, user),
        Error::AlreadyMapped,
    );
    sys::unmap(ENV_SELF, SCRATCH + 4096).expect("unmap");
    let _ = sys::frame_free(g);
    refused(
        "nobody binds a run of /motd's data writable",
        xn::bind_run(motd_blk, motd_data, 2, SCRATCH, true, CRED_SELF),
        Error::Denied,
    );
    check("no refused run left a mapping", nothing_mapped());
    check(
        "uid 1000 binds its file's run writable",
        xn::bind_run(notes_blk, notes_data, 2, SCRATCH, true, user).is_ok(),
    );
    // SAFETY: just mapped at SCRATCH and the page after it.
    let second = unsafe { core::ptr::read_volatile((SCRATCH + 4096 + 6000 - 4097) as *const u8) };
    check("and reads the run's second block", second == b'n');
    sys::unmap(ENV_SELF, SCRATCH).expect("unmap");
    sys::unmap(ENV_SELF, SCRATCH + 4096).expect("unmap");

    // A block moved under itself: /home's entry in the root directory
    // gives its extent to an entry inside /home's own block.
    let (home_i, home_at, home_off) = entry(fs, "/home");
    let hb = home_i.ext[0].start;
    let mut moved = fs.xn.block(home_at).expect("cached")[home_off..home_off + ENTRY].to_vec();
    moved[1] = 1;
    moved[136] = b'x';
    let free_slot =
        (1..15).find(|&i| fs.xn.block(hb).expect("cached")[i * ENTRY] == 0).expect("a free entry");
    let cleared = [0u8; 72];
    refused(
        "a directory block moved under itself",
        xn::modify(
            &[change(home_at, home_off + 64, &cleared), change(hb, free_slot * ENTRY, &moved)],
            &[],
            &[],
            CRED_DEVICES,
        ),
        Error::BadMove,
    );

    // Ordered writes: a directory whose new file's block was never written.
    let home = fs.resolve("/home").expect("/home");
    let fresh = fs.create(home, b"fresh", 0o100644).expect("create");
    fs.write(fresh, 0, &[b'f'; 5000]).expect("write");
    let (_, fresh_blk, _) = entry(fs, "/home/fresh");
    refused("a parent written back before its new child", xn::write(fresh_blk, 1), Error::Tainted);

    // Another environment's lock.
    check("lock /motd's directory block", xn::lock(motd_blk).is_ok());
    let pid = linux(SYS_FORK, [0; 6]);
    if pid == 0 {
        let w = xn::write(motd_blk, 1);
        let u = xn::unlock(motd_blk);
        let e = xn::evict(motd_data);
        let code = u64::from(w != Err(Error::Locked))
            | u64::from(u != Err(Error::Locked)) << 1
            | u64::from(e != Err(Error::NotPermitted)) << 2;
        linux(SYS_EXIT, [code, 0, 0, 0, 0, 0]);
    }
    let mut status = 0i32;
    linux(SYS_WAIT4, [pid as u64, &mut status as *mut i32 as u64, 0, 0, 0, 0]);
    check("another environment's write-back, unlock and eviction of our blocks refused", status == 0);
    check("unlock", xn::unlock(motd_blk).is_ok());

    // A block that holds data is inserted only by reading it.
    let (_, secret_blk, _) = entry(fs, "/secret");
    fs.xn.evict(secret_data).expect("evict /secret's clean data block");
    refused(
        "a fresh insert of a block that holds data",
        xn::insert(secret_blk, secret_data, f, CRED_DEVICES),
        Error::NotFresh,
    );
    let _ = sys::frame_free(f);
}

fn after() {
    let mut fs = mount(CRED_DEVICES);
    if read_all(&mut fs, "/persist").as_deref() == Some(b"written in the first boot\n") {
        println!("test_xn after: /persist survived the reboot");
    } else {
        check("/persist after the reboot", false);
    }
    check(
        "/home/user/notes after the reboot",
        read_all(&mut fs, "/home/user/notes").is_some_and(|n| n == [b'n'; 6000]),
    );
    check("/motd after the reboot", read_all(&mut fs, "/motd").as_deref() == Some(&motd()[..]));
    let notes = fs.resolve("/home/user/notes").expect("notes");
    let st = fs.stat(notes).expect("stat");
    check(
        "notes' owner and mode (changed by uid 1000) after the reboot",
        st.uid == 1000 && st.mode & 0o777 == 0o600,
    );
}

/// Bytes in one log record.
const RECORD: usize = 64;

fn record(i: u64) -> [u8; RECORD] {
    let mut r = [b'.'; RECORD];
    let mut n = i;
    for d in (7..17).rev() {
        r[d] = b'0' + (n % 10) as u8;
        n /= 10;
    }
    r[..7].copy_from_slice(b"record ");
    r[RECORD - 1] = b'\n';
    r
}

/// How many whole records `/log` starts with, in order.
fn intact(log: &[u8]) -> u64 {
    log.chunks_exact(RECORD).enumerate().take_while(|(i, r)| *r == record(*i as u64)).count() as u64
}

/// Appends records to `/log` after those already there, fsyncing and
/// acknowledging each, until the machine stops.
fn append() {
    let mut fs = mount(CRED_DEVICES);
    let root = fs.resolve("/").expect("root");
    let ino = fs.lookup(root, b"log").or_else(|_| fs.create(root, b"log", 0o100644)).expect("/log");
    let log = read_all(&mut fs, "/log").unwrap_or_default();
    let mut n = intact(&log);
    // A record cut short by the last power cut goes first.
    fs.truncate(ino, n * RECORD as u64).expect("truncate /log");
    println!("test_xn append: {n} records there, appending");
    loop {
        fs.append(ino, &record(n)).expect("append");
        fs.fsync(ino).expect("fsync");
        println!("acked {n}");
        n += 1;
    }
}

fn check_log() {
    let mut fs = mount(CRED_DEVICES);
    let log = read_all(&mut fs, "/log").unwrap_or_default();
    println!("test_xn check: {} records intact of {} bytes", intact(&log), log.len());
}

fn main(_: u64) -> i32 {
    if let Err(e) = native::init(libos::linux::syscall) {
        println!("test_xn: {e}");
        return 1;
    }
    let phase =
        kinfo::cmdline().split_whitespace().skip_while(|w| *w != "init=test_xn").nth(1).unwrap_or("first");
    match phase {
        "after" => after(),
        "append" => append(),
        "check" => check_log(),
        _ => first(),
    }
    // SAFETY: one thread.
    let failed = unsafe { FAILED };
    if failed == 0 {
        println!("test_xn {phase}: all passed");
        0
    } else {
        println!("test_xn {phase}: {failed} FAILED");
        1
    }
}

user::entry!(main);
