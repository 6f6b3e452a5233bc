//! Boot tests of the disk as the root (lxrt `-r`, `cargo xtask run`'s
//! default; `docs/cffs.md`, "The disk as the root"): each boots the
//! archive of programs alone (`build::boot_only`), its root tree made on
//! the disk by `fstools::root_disk`, and runs a case of
//! `libos/hosttests/root.sh`.
//!
//! - `root_persist`: files written in several directories (/root, /etc,
//!   a new one), a hard link, a symbolic link, a rename, an owner and
//!   modes, then `sync`; the next boot on the same image finds each with
//!   its bytes and modes, and /tmp's file gone; `/proc/mounts` and `df /`
//!   say the disk is the root; `fsck` clean.
//! - `root_hostile`: the second user (uid 1000) cannot write /etc/passwd,
//!   read a 0600 root file, make a file in /etc, chmod /etc/passwd or
//!   remove /bin/busybox, and neither its own calls to XN (`xnsteal`:
//!   every block of root's 0600 file bound with `XN_SELF` and with each
//!   capability it holds) nor its own library, reading the file through
//!   an inode it forged in the arena, read any of it, nor the bytes of a
//!   small 0600 file (kept out of its directory entry), and it reads a
//!   0640 file of its supplementary group; it can write its own home and
//!   make, read, rename and remove files there.
//! - `root_dynamic`: Debian's python3 (dynamic: `ld.so`, libc and the
//!   rest read from the disk) runs.
//!
//! The last two share one image, each booted with QEMU's `-snapshot`.

use crate::boottest::BootTest;
use crate::build::{self, Image};
use crate::qemu;
use std::time::Duration;

pub const NAMES: &[&str] = &["root_persist", "root_hostile", "root_dynamic"];

/// What the first process says once `/` is the disk.
const MOUNTED: &str = "lxrt: / is C-FFS on the XN disk (";

pub fn plan(img: &Image, names: &[String]) -> Result<Vec<BootTest>, String> {
    let wanted = |n: &str| names.is_empty() || names.iter().any(|x| x == n);
    if !NAMES.iter().any(|n| wanted(n)) {
        return Ok(Vec::new());
    }
    let boot = build::boot_only(img)?;
    let disks = build::root().join("target/disks");
    let test = |name: &str, image: &std::path::Path, case: &str, expect: &[&str], snapshot: bool| {
        let mut args = qemu::base_args(&boot, &format!("lxrt -r /bin/sh /hosttests/root.sh {case}"));
        args.extend(qemu::device_args(image, 0));
        if snapshot {
            args.push("-snapshot".into());
        }
        let expect = [MOUNTED].iter().chain(expect).map(|s| s.to_string()).collect();
        BootTest::new(name.into(), args, expect, Duration::from_secs(300))
    };
    let mut out = Vec::new();
    if wanted("root_persist") {
        let image = disks.join("root_persist.img");
        crate::fstools::root_disk(&image, &img.bootfs)?;
        let kib = std::fs::metadata(&image).map_err(|e| format!("{}: {e}", image.display()))?.len() >> 10;
        let df = format!("df: / has {kib} KiB");
        let read = test(
            "root_persist",
            &image,
            "read",
            &[
                "note: root's own 640",
                "resolv: # kept across boots",
                "deep: deep 751",
                "big: the same 168,894 bytes under two names",
                "sym: /srv/new/deep/file deep",
                "renamed: renamed",
                "mine: mine 1000:1000",
                "mounts: 1 root on the disk, 1 /tmp in memory",
                &df,
                "root: read",
            ],
            false,
        );
        let mut write = test("root_persist", &image, "write", &["root: written"], false);
        write.then = Some(Box::new(read));
        write.fsck = Some(image);
        out.push(write);
    }
    if wanted("root_hostile") || wanted("root_dynamic") {
        let tree = build::with_packages(img, &["python3-minimal".to_string()])?;
        let image = disks.join("root_shared.img");
        crate::fstools::root_disk(&image, &tree.bootfs)?;
        if wanted("root_hostile") {
            let expect = [
                // Its entry and its three blocks; a small file's entry.
                "xnsteal: 4 places of xnsecret, every bind refused or the bytes not there",
                "xnsteal: forged xnsecret's owner, still unreadable",
                "xnsteal: 2 places of xntiny, every bind refused or the bytes not there",
                "hostile: every change refused; user wrote its home",
            ];
            out.push(test("root_hostile", &image, "hostile", &expect, true));
        }
        if wanted("root_dynamic") {
            out.push(test("root_dynamic", &image, "dynamic", &["dynamic: 3 42"], true));
        }
    }
    Ok(out)
}
