//! XN's boot tests (`docs/xn.md`): a C-FFS disk made by `mkfs` from a
//! small tree, booted with `init=test_xn` (`libos/src/bin/test_xn.rs`):
//! the first boot reads what mkfs wrote through the kernel's XN, writes
//! and syncs files, and runs the hostile requests (each refused); the
//! second boot, on the same image, finds what the first wrote. `fsck` of
//! the image afterwards must be clean.

use crate::boottest::BootTest;
use crate::build::{self, Image};
use crate::qemu;
use std::path::Path;
use std::time::Duration;

pub const NAMES: &[&str] = &["xn_disk", "xn_corrupt", "xn_data", "xn_bigdata", "xn_xcp"];

/// Damaged copies of the disk: the kernel refuses each with its reason
/// on the console and boots on (`init=test_hello`).
const DAMAGE: &[(&str, &str)] = &[
    ("catalogue", "xn: the disk is refused: BadCatalogue"),
    ("truncated", "xn: the disk is refused: BadSuperblock(\"block count does not fit the disk\")"),
];

/// `image` damaged as `how` says, at `out`.
fn damage(image: &Path, how: &str, out: &Path) -> Result<(), String> {
    let mut data = std::fs::read(image).map_err(|e| format!("{}: {e}", image.display()))?;
    match how {
        // A byte of the first template record: its checksum no longer holds.
        "catalogue" => data[4096 + 40] ^= 0x5A,
        _ => data.truncate(data.len() / 2),
    }
    std::fs::write(out, data).map_err(|e| format!("{}: {e}", out.display()))
}

/// The tree the disk starts with (the test program checks these bytes).
fn tree(dir: &Path) -> Result<(), String> {
    let _ = std::fs::remove_dir_all(dir);
    let w = |p: &str, data: Vec<u8>| {
        let path = dir.join(p);
        std::fs::create_dir_all(path.parent().expect("in the tree")).map_err(|e| e.to_string())?;
        std::fs::write(&path, data).map_err(|e| format!("{}: {e}", path.display()))
    };
    w("motd", (0..5000u32).map(|i| b"hello from the disk "[i as usize % 20]).collect())?;
    w("secret", (0..5000u32).map(|i| (i * 7 % 251) as u8).collect())?;
    w("etc/small", b"a small file, inline in its entry\n".to_vec())?;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir.join("secret"), std::fs::Permissions::from_mode(0o600))
        .map_err(|e| e.to_string())?;
    std::fs::set_permissions(dir.join("motd"), std::fs::Permissions::from_mode(0o644))
        .map_err(|e| e.to_string())
}

pub fn plan(img: &Image, names: &[String]) -> Result<Vec<BootTest>, String> {
    if !(names.is_empty() || names.iter().any(|n| NAMES.contains(&n.as_str()))) {
        return Ok(Vec::new());
    }
    let target = build::root().join("target/xntest");
    let src = target.join("tree");
    tree(&src)?;
    let image = build::root().join("target/disks/xn_disk.img");
    let _ = std::fs::remove_file(&image);
    mkfs64(&image, &src)?;
    let mut out = Vec::new();
    if names.is_empty() || names.iter().any(|n| n == "xn_corrupt") {
        let mut chain = None;
        for (how, reason) in DAMAGE.iter().rev() {
            let path = build::root().join(format!("target/disks/xn_corrupt_{how}.img"));
            damage(&image, how, &path)?;
            let mut args = qemu::base_args(img, "test_hello");
            args.extend(qemu::device_args(&path, 0));
            chain = Some(Box::new(BootTest {
                then: chain,
                ..BootTest::new(
                    "xn_corrupt".into(),
                    args,
                    vec![reason.to_string(), "hello from ring 3".into()],
                    Duration::from_secs(60),
                )
            }));
        }
        out.extend(chain.map(|b| *b));
    }
    if names.is_empty() || names.iter().any(|n| n == "xn_data") {
        out.push(data_test(img)?);
    }
    if names.is_empty() || names.iter().any(|n| n == "xn_bigdata") {
        out.push(bigdata_test(img)?);
    }
    if names.is_empty() || names.iter().any(|n| n == "xn_xcp") {
        out.push(xcp_test(img)?);
    }
    if !(names.is_empty() || names.iter().any(|n| n == "xn_disk")) {
        return Ok(out);
    }
    let boot = |arg: &str, expect: &[&str], then| {
        disk_boot(img, &image, "xn_disk", &format!("test_xn {arg}"), expect, then)
    };
    let second = boot(
        "after",
        &["xn: mounted", "test_xn after: /persist survived the reboot", "test_xn after: all passed"],
        None,
    );
    let mut first = boot(
        "first",
        &[
            "xn: mounted",
            "test_xn first: read /motd through XN: 5000 bytes, as mkfs wrote them",
            "test_xn first: all passed",
        ],
        Some(Box::new(second)),
    );
    first.fsck = Some(image);
    out.push(first);
    Ok(out)
}

/// Test `name`'s boot of `init` on the disk `image`, which must print
/// `expect`, then (if any) the next boot on the same image.
fn disk_boot(
    img: &Image,
    image: &Path,
    name: &str,
    init: &str,
    expect: &[&str],
    then: Option<Box<BootTest>>,
) -> BootTest {
    let mut args = qemu::base_args(img, init);
    args.extend(qemu::device_args(image, 0));
    BootTest {
        then,
        ..BootTest::new(
            name.into(),
            args,
            expect.iter().map(|s| s.to_string()).collect(),
            Duration::from_secs(180),
        )
    }
}

/// `/data` through the ordinary lxrt shell, as `cargo xtask run` has it:
/// on a fresh, empty C-FFS disk the first boot runs
/// `libos/hosttests/data.sh write` (busybox: `echo hi > /data/f`, mkdir,
/// rm, mv, a 106 KiB file, an append, a clean file changed only through
/// a shared mapping (`cbin/pagecache store`), `sync`; a file only closed,
/// then 33 s for the periodic write-back; a file closed right before the
/// end, and two made durable by `fsync` and `fdatasync` alone), the
/// second `data.sh read` on the same image must find each but the file
/// closed last (and neither removed name), and `fsck` the image clean.
fn data_test(img: &Image) -> Result<BootTest, String> {
    let target = build::root().join("target/xntest");
    let empty = target.join("empty-data");
    let _ = std::fs::remove_dir_all(&empty);
    std::fs::create_dir_all(&empty).map_err(|e| e.to_string())?;
    let image = build::root().join("target/disks/xn_data.img");
    let _ = std::fs::remove_file(&image);
    mkfs64(&image, &empty)?;
    let boot = |arg: &str, expect: &[&str], then| {
        disk_boot(img, &image, "xn_data", &format!("lxrt /bin/sh /hosttests/data.sh {arg}"), expect, then)
    };
    let read = boot(
        "read",
        &[
            "lxrt: /data is C-FFS on the XN disk (",
            "f: hi appended ",
            "g: in a directory",
            "new: moved",
            "big: the same 108,894 bytes",
            "last: closed, written back",
            "mapped: stored through a shared mapping",
            "fsynced: fsynced fdatasynced",
            "ls: big dir f fdatasynced fsynced last mapped new ",
            "data: read",
        ],
        None,
    );
    let mut write = boot(
        "write",
        &[
            "lxrt: /data is C-FFS on the XN disk (0 names)",
            "stat: the sync's writes and flushes counted",
            "data: written",
        ],
        Some(Box::new(read)),
    );
    write.fsck = Some(image);
    Ok(write)
}

/// Bytes of `/data/bigN` in the big-disk test: record `i` (16 bytes) is
/// `i * N` in 15 digits and a newline.
const BIG_FILE: u64 = 40 << 20;

/// The big-disk test's file `n`.
fn big_file(n: u64) -> Vec<u8> {
    (0..BIG_FILE / 16).flat_map(|i| format!("{:015}\n", i * n).into_bytes()).collect()
}

/// CRC-32 (IEEE, as busybox's `crc32` prints it).
fn crc32(data: &[u8]) -> u32 {
    let table: Vec<u32> = (0..256u32)
        .map(|i| (0..8).fold(i, |c, _| if c & 1 != 0 { 0xEDB8_8320 ^ (c >> 1) } else { c >> 1 }))
        .collect();
    !data.iter().fold(!0u32, |c, &b| table[((c ^ u32::from(b)) & 0xFF) as usize] ^ (c >> 8))
}

/// `/data` on a disk whose files (two of 40 MiB) are larger together than
/// lxrt's arena (64 MiB of the test machine's 512): it mounts (no file
/// data loaded), both files read back whole (their CRC-32s, computed here
/// from the bytes mkfs wrote) and at a record; `cbin/datafile` runs on it
/// (two processes' writes seen at once, without a close) and a program
/// is run from it (`libos/hosttests/bigdata.sh`); `fsck` clean afterwards.
fn bigdata_test(img: &Image) -> Result<BootTest, String> {
    let src = build::root().join("target/xntest/big-data");
    let _ = std::fs::remove_dir_all(&src);
    std::fs::create_dir_all(&src).map_err(|e| e.to_string())?;
    let mut expect = vec!["lxrt: /data is C-FFS on the XN disk (2 names)".to_string()];
    for n in 1..=2 {
        let data = big_file(n);
        std::fs::write(src.join(format!("big{n}")), &data).map_err(|e| e.to_string())?;
        expect.push(format!("big{n}: {} bytes, crc {:08x}", data.len(), crc32(&data)));
    }
    let image = build::root().join("target/disks/xn_bigdata.img");
    let _ = std::fs::remove_file(&image);
    mkfs_sized(&image, &src, 160)?;
    expect.extend(
        [
            "bigdata: big2's record at block 9000 read",
            "datafile: all passed",
            "bigdata: a program run from /data",
            "bigdata: done",
        ]
        .map(String::from),
    );
    let mut args = qemu::base_args(img, "lxrt /bin/sh /hosttests/bigdata.sh");
    args.extend(qemu::device_args(&image, 0));
    let mut t = BootTest::new("xn_bigdata".into(), args, expect, Duration::from_secs(400));
    t.fsck = Some(image);
    Ok(t)
}

/// XCP (`libos/src/bin/xcp.rs`): on a fresh, empty C-FFS disk the first
/// boot (`xcp test`) copies a 4 MiB file through the cache with
/// `xn_copy`, reads the copy back from the disk and compares every byte,
/// and has each bad copy refused with its own error; the second (`xcp
/// check`) finds the copy intact; `fsck` the image clean.
fn xcp_test(img: &Image) -> Result<BootTest, String> {
    let empty = build::root().join("target/xntest/empty-xcp");
    let _ = std::fs::remove_dir_all(&empty);
    std::fs::create_dir_all(&empty).map_err(|e| e.to_string())?;
    let image = build::root().join("target/disks/xn_xcp.img");
    let _ = std::fs::remove_file(&image);
    mkfs64(&image, &empty)?;
    // Named apart: each boot's console is kept (target/boottest/NAME.serial).
    let boot = |name: &str, arg: &str, expect: &[&str], then| {
        disk_boot(img, &image, name, &format!("xcp {arg}"), expect, then)
    };
    let check =
        boot("xn_xcp check", "check", &["xcp: /copy after the reboot: ok", "xcp check: all passed"], None);
    let mut test = boot(
        "xn_xcp",
        "test",
        &[
            "xcp test: copied 4195538 bytes: ",
            "xcp: the copy read back from the disk holds the source's bytes: ok",
            "xcp: the copy unchanged by the refused copies: ok",
            "xcp test: all passed",
        ],
        Some(Box::new(check)),
    );
    test.fsck = Some(image);
    Ok(test)
}

/// `cargo xtask powercut [--cuts N] [--seed S]`: the power-cut test. On
/// one C-FFS disk, `test_xn append` appends records to `/log`, each
/// `fsync`ed and then acknowledged on the console, and QEMU is killed
/// (SIGKILL) at a random moment 3-9 s after it starts; the next boot
/// (`test_xn check`) must find every acknowledged record intact, and
/// `fsck` the image clean. The next cut appends after what is there.
pub fn powercut(args: &[String]) -> Result<(), String> {
    let mut cuts = 20u64;
    let mut seed =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_secs());
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let v = it.next().and_then(|v| v.parse().ok());
        match (a.as_str(), v) {
            ("--cuts", Some(v)) => cuts = v,
            ("--seed", Some(v)) => seed = v,
            _ => return Err(format!("powercut: unknown or incomplete option {a} (--cuts N, --seed S)")),
        }
    }
    let img = build::all()?;
    let target = build::root().join("target/xntest");
    let empty = target.join("empty");
    let _ = std::fs::remove_dir_all(&empty);
    std::fs::create_dir_all(&empty).map_err(|e| e.to_string())?;
    // Its own image: campaigns may run beside `cargo xtask test`'s.
    let image = build::root().join(format!("target/disks/powercut-{}.img", std::process::id()));
    let _ = std::fs::remove_file(&image);
    mkfs64(&image, &empty)?;
    println!("xtask: powercut: {cuts} cuts, seed {seed}, disk {}", image.display());
    let mut rng = seed | 1;
    let mut acked_total = 0u64;
    let mut log = String::new();
    for c in 0..cuts {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let after = Duration::from_millis(3000 + rng % 6000);
        let mut args = qemu::base_args(&img, "test_xn append");
        args.extend(qemu::device_args(&image, 0));
        let out = qemu::headless(&args, after, &[])?;
        log.push_str(&out.serial);
        if !out.timed_out {
            return Err(format!("cut {c}: the appender stopped by itself:\n{}", tail(&out.serial)));
        }
        let acked =
            out.serial.lines().filter_map(|l| l.strip_prefix("acked ")?.trim().parse::<u64>().ok()).max();
        if let Some(k) = acked {
            acked_total = acked_total.max(k + 1);
        }
        let mut args = qemu::base_args(&img, "test_xn check");
        args.extend(qemu::device_args(&image, 0));
        let out = qemu::headless(&args, Duration::from_secs(60), &[])?;
        log.push_str(&out.serial);
        let intact = out
            .serial
            .lines()
            .find_map(|l| l.strip_prefix("test_xn check: ")?.split(' ').next()?.parse::<u64>().ok())
            .ok_or_else(|| format!("cut {c}: the check found no log:\n{}", tail(&out.serial)))?;
        if intact < acked_total {
            return Err(format!("cut {c}: {intact} records intact, {acked_total} acknowledged"));
        }
        crate::fstools::fsck(&[image.display().to_string()]).map_err(|e| format!("cut {c}: {e}"))?;
        let last = acked.map_or("none this boot".to_string(), |k| format!("the last was record {k}"));
        println!(
            "cut {c} at {:.1} s: {acked_total} records acknowledged ({last}), {intact} intact after the reboot, fsck clean",
            after.as_secs_f64(),
        );
    }
    let _ = std::fs::write(target.join("powercut.serial"), log);
    let _ = std::fs::remove_file(&image);
    println!("xtask: powercut: {cuts} cuts, every acknowledged record intact ({acked_total} records), fsck clean after each");
    Ok(())
}

fn tail(serial: &str) -> String {
    let lines: Vec<&str> = serial.lines().collect();
    lines[lines.len().saturating_sub(20)..].join("\n")
}

/// `cargo xtask mkfs` of a 64 MiB C-FFS image at `image` holding the tree
/// `from`, every file owned by root.
fn mkfs64(image: &std::path::Path, from: &std::path::Path) -> Result<(), String> {
    mkfs_sized(image, from, 64)
}

/// A C-FFS disk of `mib` MiB holding a copy of `from`.
fn mkfs_sized(image: &std::path::Path, from: &std::path::Path, mib: u64) -> Result<(), String> {
    if let Some(dir) = image.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    crate::fstools::mkfs(&[
        image.display().to_string(),
        "--size".into(),
        mib.to_string(),
        "--from".into(),
        from.display().to_string(),
        "--owner".into(),
        "0:0".into(),
    ])
}
