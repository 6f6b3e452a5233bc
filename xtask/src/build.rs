//! Builds the kernel, the user programs and the boot file system.

use crate::cpio::Archive;
use std::path::{Path, PathBuf};
use std::process::Command;

/// What QEMU boots: the kernel ELF and the boot module.
pub struct Image {
    pub kernel: PathBuf,
    pub bootfs: PathBuf,
}

/// The kernel's build target.
pub const KERNEL_TARGET: &str = "x86_64-unknown-none";
/// User programs are freestanding static ELF executables; the Linux target
/// gives them SSE and the System V ABI without any Linux library.
pub const USER_TARGET: &str = "x86_64-unknown-linux-gnu";

/// The workspace root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask lives in the workspace").to_path_buf()
}

/// Runs cargo with `args` in the workspace root.
pub fn cargo(args: &[&str], env: &[(&str, &str)]) -> Result<(), String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args(args).current_dir(root());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let status = cmd.status().map_err(|e| format!("cannot run cargo: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("cargo {} failed", args.join(" ")))
    }
}

/// Builds everything and writes the boot file system archive.
pub fn all() -> Result<Image, String> {
    crate::deps::ensure_toolchain()?;
    println!("xtask: building the kernel and user programs");
    cargo(&["build", "--release", "-p", "kernel", "--target", KERNEL_TARGET], &[])?;
    let drivers: Vec<String> = DRIVERS.iter().map(|d| format!("{d}-driver")).collect();
    let mut args = vec!["build", "--release", "--target", KERNEL_TARGET];
    for d in &drivers {
        args.extend(["-p", d.as_str()]);
    }
    cargo(&args, &[])?;
    cargo(&["build", "--release", "-p", "user", "-p", "nest", "-p", "libos", "--target", USER_TARGET], &[])?;
    let target = root().join("target");
    let kernel = target.join(KERNEL_TARGET).join("release/kernel");
    let bootfs = target.join("bootfs.cpio");
    write_bootfs(&bootfs, bootfs_archive(&[], &[], &target)?)?;
    Ok(Image { kernel, bootfs })
}

/// Puts a boot archive at `path` whole, by renaming a fresh file over it:
/// a QEMU of another `cargo xtask` in the same tree that is reading the
/// old one keeps it (written in place, it was truncated under that QEMU,
/// which died with nothing on its console).
fn write_bootfs(path: &Path, bytes: Vec<u8>) -> Result<(), String> {
    let fresh = path.with_extension(format!("cpio.{}", std::process::id()));
    std::fs::write(&fresh, bytes)
        .and_then(|_| std::fs::rename(&fresh, path))
        .map_err(|e| format!("writing {}: {e}", path.display()))
}

/// The fault-injection image (after `all`): the kernel and the driver
/// images built with their `inject` feature, in `target/inject/` so the
/// default ones stay untouched; the same user programs. Only the boot
/// tests that inject faults boot it (`devtest.rs`).
pub fn inject() -> Result<Image, String> {
    let dir = root().join("target/inject");
    let dir_arg = dir.to_str().ok_or("the target directory is not UTF-8")?;
    println!("xtask: building the kernel and drivers with fault injection");
    let features: Vec<String> = DRIVERS.iter().map(|d| format!("{d}-driver/inject")).collect();
    let features = format!("kernel/inject,{}", features.join(","));
    let mut args =
        vec!["build", "--release", "--target", KERNEL_TARGET, "--target-dir", dir_arg, "-p", "kernel"];
    let drivers: Vec<String> = DRIVERS.iter().map(|d| format!("{d}-driver")).collect();
    for d in &drivers {
        args.extend(["-p", d.as_str()]);
    }
    args.extend(["--features", features.as_str()]);
    cargo(&args, &[])?;
    let kernel = dir.join(KERNEL_TARGET).join("release/kernel");
    let bootfs = dir.join("bootfs.cpio");
    write_bootfs(&bootfs, bootfs_archive(&[], &[], &dir)?)?;
    Ok(Image { kernel, bootfs })
}

/// `img` with the Debian packages `pkgs` and their dependencies added to
/// the root (`crate::debs`); `img` itself when there are none.
pub fn with_packages(img: &Image, pkgs: &[String]) -> Result<Image, String> {
    if pkgs.is_empty() {
        return Ok(Image { kernel: img.kernel.clone(), bootfs: img.bootfs.clone() });
    }
    let mut names = pkgs.to_vec();
    names.sort();
    let bootfs = root().join("target").join(format!("bootfs-{}.cpio", names.join("+")));
    write_bootfs(&bootfs, bootfs_archive(pkgs, &[], &root().join("target"))?)?;
    Ok(Image { kernel: img.kernel.clone(), bootfs })
}

/// `img` with the Debian packages `pkgs` and the files `extra` (path in
/// the root, contents) in the root, as `target/bootfs-NAME.cpio`.
pub fn with_files(
    img: &Image,
    name: &str,
    pkgs: &[String],
    extra: &[(String, Vec<u8>)],
) -> Result<Image, String> {
    let bootfs = root().join("target").join(format!("bootfs-{name}.cpio"));
    write_bootfs(&bootfs, bootfs_archive(pkgs, extra, &root().join("target"))?)?;
    Ok(Image { kernel: img.kernel.clone(), bootfs })
}

/// `img`'s programs and drivers without the root tree, as
/// `target/bootfs-boot.cpio`: all a boot whose root is the disk needs
/// (lxrt `-r`; the tree is on the disk, `fstools::root_disk`).
pub fn boot_only(img: &Image) -> Result<Image, String> {
    let bootfs = root().join("target/bootfs-boot.cpio");
    let mut ar = Archive::page_aligned();
    programs(&mut ar, &root().join("target"))?;
    write_bootfs(&bootfs, ar.finish())?;
    Ok(Image { kernel: img.kernel.clone(), bootfs })
}

/// The driver images (`drivers/NAME`, crate `NAME-driver`), packed as
/// `drv/NAME` for the kernel to load.
pub const DRIVERS: &[&str] = &["virtio-blk", "virtio-net"];

/// Names of the user programs (`user/src/bin/*.rs`) and the nesters
/// (`nest/src/bin/*.rs`).
pub fn user_programs() -> Result<Vec<String>, String> {
    let mut names = Vec::new();
    for dir in ["user/src/bin", "nest/src/bin"] {
        let dir = root().join(dir);
        let entries = std::fs::read_dir(&dir).map_err(|e| format!("reading {}: {e}", dir.display()))?;
        names.extend(entries.filter_map(|e| e.ok()).filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            name.strip_suffix(".rs").map(str::to_string)
        }));
    }
    names.sort();
    Ok(names)
}

/// Programs of the library OS (`libos/src/bin/*.rs`), packed beside the
/// user programs.
pub const LIBOS_PROGRAMS: &[&str] = &[
    "lxrt",
    "bench_libos",
    "test_ptable",
    "test_pipeguard",
    "test_pipepass",
    "test_fifoguard",
    "test_fileguard",
    "test_ptyguard",
    "test_unixguard",
    "test_dgramguard",
    "test_sysvguard",
    "test_handover",
    "test_xn",
    "xcp",
    "test_netfilter",
    "netthief",
    "netbench",
    "netd",
    "netping",
];

/// The static Linux binary the library OS runs (Debian's busybox-static).
pub const BUSYBOX: &str = "/bin/busybox";

/// The program at `path` without its debugging information (its symbols
/// stay): the boot archive is loaded into the machine's memory, and the
/// library OS's programs carry 8-10 MiB of DWARF each (100 MiB in all, which
/// pushed the stress campaign's fork test into running out of memory).
/// Backtraces are resolved against the programs in `target/`.
fn without_debug_info(path: &Path) -> Result<Vec<u8>, String> {
    let dir = root().join("target/stripped");
    std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let name = path.file_name().ok_or_else(|| format!("{} names no file", path.display()))?;
    // Boots packing at once (the tests run in parallel) each write their own.
    let out = dir.join(format!("{}.{}", name.to_string_lossy(), std::process::id()));
    let status = Command::new("strip")
        .arg("--strip-debug")
        .arg("-o")
        .arg(&out)
        .arg(path)
        .status()
        .map_err(|e| format!("running strip (binutils): {e}"))?;
    if !status.success() {
        return Err(format!("strip --strip-debug {} failed ({status})", path.display()));
    }
    let data = std::fs::read(&out).map_err(|e| format!("reading {}: {e}", out.display()));
    let _ = std::fs::remove_file(&out);
    data
}

/// Packs every user program into `bin/`, the driver images built in
/// `drivers` (a target directory) into `drv/`, and the library OS's root
/// file system under `root/`, with the Debian packages `pkgs` and the
/// files `extra`.
fn bootfs_archive(pkgs: &[String], extra: &[(String, Vec<u8>)], drivers: &Path) -> Result<Vec<u8>, String> {
    let mut ar = Archive::page_aligned();
    programs(&mut ar, drivers)?;
    root_tree(&mut ar, pkgs, "root")?;
    for (path, data) in extra {
        for (i, _) in path.match_indices('/') {
            ar.dir(&format!("root/{}", &path[..i]));
        }
        ar.file(&format!("root/{path}"), 0o644, data);
    }
    Ok(ar.finish())
}

/// Packs every user program into `bin/` and the driver images built in
/// `drivers` (a target directory) into `drv/`.
fn programs(ar: &mut Archive, drivers: &Path) -> Result<(), String> {
    let bin = root().join("target").join(USER_TARGET).join("release");
    ar.dir("bin");
    let libos = LIBOS_PROGRAMS.iter().map(|s| s.to_string());
    for name in user_programs()?.into_iter().chain(libos) {
        ar.file(&format!("bin/{name}"), 0o755, &without_debug_info(&bin.join(&name))?);
    }
    ar.dir("drv");
    let drv = drivers.join(KERNEL_TARGET).join("release");
    for name in DRIVERS {
        let path = drv.join(name);
        let data = std::fs::read(&path).map_err(|e| format!("reading {}: {e}", path.display()))?;
        ar.file(&format!("drv/{name}"), 0o644, &data);
    }
    Ok(())
}

/// The library OS's root file system under `prefix` (`root` in Veneer's
/// boot archive; empty for the Linux guest of `cargo xtask compat`, whose
/// initramfs is the root): the tree in `libos/root/`, the busybox test
/// scripts in `tests/`, the stress scripts (`cargo xtask stress`) in
/// `stress/`, the scripts of the tests with the host in `hosttests/`, the C test programs in `cbin/`, and busybox as
/// `/bin/busybox` with a symbolic link for
/// every applet where busybox says it belongs (`--list-full`), as a
/// busybox-based system installs it. Debian packages (`pkgs`) go in before
/// busybox: the first entry of a name wins (`libos/src/fs/boot.rs`, and
/// `cpio::Archive`, which drops later entries of a name), so a
/// package's `/bin/ls` replaces busybox's applet link.
pub fn root_tree(ar: &mut Archive, pkgs: &[String], prefix: &str) -> Result<(), String> {
    if !prefix.is_empty() {
        ar.dir(prefix);
    }
    // Modes and owners git does not keep (the first entry of a name wins):
    // root's home and the password hashes are root's alone, /tmp is for
    // everyone (sticky), the second user's home is its own.
    ar.dir_owned(&format!("{prefix}/root"), 0o700, (0, 0));
    ar.dir_owned(&format!("{prefix}/home"), 0o755, (0, 0));
    ar.dir_owned(&format!("{prefix}/home/user"), 0o755, (1000, 1000));
    ar.dir_owned(&format!("{prefix}/tmp"), 0o1777, (0, 0));
    ar.dir(&format!("{prefix}/etc"));
    let shadow =
        std::fs::read(root().join("libos/root/etc/shadow")).map_err(|e| format!("reading shadow: {e}"))?;
    ar.file(&format!("{prefix}/etc/shadow"), 0o600, &shadow);
    add_tree(ar, &root().join("libos/root"), prefix)?;
    ar.dir(&format!("{prefix}/tests"));
    let tests = root().join("libos/tests");
    for (name, data) in read_dir_files(&tests)? {
        ar.file(&format!("{prefix}/tests/{name}"), 0o644, &data);
    }
    ar.dir(&format!("{prefix}/stress"));
    for (name, data) in read_dir_files(&root().join("libos/stress"))? {
        ar.file(&format!("{prefix}/stress/{name}"), 0o644, &data);
    }
    ar.dir(&format!("{prefix}/hosttests"));
    for (name, data) in read_dir_files(&root().join("libos/hosttests"))? {
        ar.file(&format!("{prefix}/hosttests/{name}"), 0o644, &data);
    }
    if !pkgs.is_empty() {
        add_tree(ar, &crate::debs::unpacked(pkgs)?, prefix)?;
    }
    let bb = std::fs::read(BUSYBOX).map_err(|e| format!("reading {BUSYBOX}: {e}"))?;
    for d in ["bin", "sbin", "usr", "usr/bin", "usr/sbin", "tmp", "dev", "proc"] {
        ar.dir(&format!("{prefix}/{d}"));
    }
    ar.file(&format!("{prefix}/bin/busybox"), 0o755, &bb);
    ar.dir(&format!("{prefix}/cbin"));
    for (name, exe) in crate::lxtest::c_programs()? {
        let data = std::fs::read(&exe).map_err(|e| format!("reading {}: {e}", exe.display()))?;
        ar.file(&format!("{prefix}/cbin/{name}"), 0o755, &data);
    }
    let out =
        Command::new(BUSYBOX).arg("--list-full").output().map_err(|e| format!("running {BUSYBOX}: {e}"))?;
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        if line == "bin/busybox" || line.is_empty() {
            continue;
        }
        let depth = line.matches('/').count();
        let target = format!("{}bin/busybox", "../".repeat(depth));
        ar.symlink(&format!("{prefix}/{line}"), &target);
    }
    Ok(())
}

fn read_dir_files(dir: &Path) -> Result<Vec<(String, Vec<u8>)>, String> {
    let mut out = Vec::new();
    let rd = std::fs::read_dir(dir).map_err(|e| format!("reading {}: {e}", dir.display()))?;
    for e in rd.filter_map(|e| e.ok()) {
        if e.path().is_file() {
            let data = std::fs::read(e.path()).map_err(|err| format!("{err}"))?;
            out.push((e.file_name().to_string_lossy().into_owned(), data));
        }
    }
    out.sort();
    Ok(out)
}

/// Adds every directory, file (with its permission bits) and symbolic link
/// under `dir` as `prefix/...` (at the archive's top with an empty prefix).
pub fn add_tree(ar: &mut Archive, dir: &Path, prefix: &str) -> Result<(), String> {
    add_tree_except(ar, dir, prefix, None)
}

/// `add_tree`, leaving out the files and links that the tree `except`
/// has at the same place (an archive unpacked after one made from it).
pub fn add_tree_except(
    ar: &mut Archive,
    dir: &Path,
    prefix: &str,
    except: Option<&Path>,
) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| format!("reading {}: {e}", dir.display()))?
        .filter_map(|e| e.ok())
        .collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let file = e.file_name().to_string_lossy().into_owned();
        let name = if prefix.is_empty() { file } else { format!("{prefix}/{file}") };
        let path = e.path();
        let meta = std::fs::symlink_metadata(&path).map_err(|err| format!("{}: {err}", path.display()))?;
        let other = except.map(|x| x.join(e.file_name()));
        let there = other.as_ref().is_some_and(|o| std::fs::symlink_metadata(o).is_ok());
        if there && !meta.is_dir() {
            continue;
        }
        if meta.is_symlink() {
            let target = std::fs::read_link(&path).map_err(|err| format!("{}: {err}", path.display()))?;
            ar.symlink(&name, &target.to_string_lossy());
        } else if meta.is_dir() {
            ar.dir(&name);
            add_tree_except(ar, &path, &name, other.as_deref().filter(|_| there))?;
        } else if meta.is_file() {
            let data = std::fs::read(&path).map_err(|err| format!("{err}"))?;
            ar.file(&name, meta.permissions().mode(), &data);
        }
    }
    Ok(())
}
