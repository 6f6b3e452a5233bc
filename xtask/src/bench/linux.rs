//! The Linux side: Debian's own kernel, booted on an initramfs holding the
//! C programs of `bench/linux/`. Both are cached under `target/bench/linux/`.

use super::{Clock, Options, Side};
use crate::build::root;
use crate::cpio::Archive;
use crate::qemu;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The metapackage whose dependency names the current kernel package.
const METAPACKAGE: &str = "linux-image-amd64";

/// The modules of Debian's kernel that the network rows' NIC needs
/// (`bench/linux/netbench.c` loads them in this order), by their path
/// under the package's `lib/modules/VERSION/kernel/`.
const NET_MODULES: &[&str] = &[
    "drivers/virtio/virtio_ring.ko",
    "drivers/virtio/virtio.ko",
    "drivers/virtio/virtio_pci_legacy_dev.ko",
    "drivers/virtio/virtio_pci_modern_dev.ko",
    "drivers/virtio/virtio_pci.ko",
    "net/core/failover.ko",
    "drivers/net/net_failover.ko",
    "drivers/net/virtio_net.ko",
];

/// The files of Veneer's `/etc` the initramfs holds too.
const ETC: &[&str] = &["passwd", "group", "nsswitch.conf"];

/// Parameters that take randomness out of the measured paths; `panic=-1`
/// and `-no-reboot` turn a kernel panic into QEMU exiting.
const CMDLINE: &str = "console=ttyS0 quiet norandmaps randomize_kstack_offset=off panic=-1";

pub fn run(opts: &Options, clock: Clock, names: &[&str]) -> Result<Side, String> {
    let mut words = String::from("--");
    if opts.quick {
        words.push_str(" quick");
    }
    // Name the experiments only when not all of them run: init runs all of
    // them by default.
    if !opts.names.is_empty() {
        for name in names {
            words.push(' ');
            words.push_str(name);
        }
    }
    let dir = root().join("target/bench/linux");
    let mut args = args(opts, clock, &words, opts.runs_tree())?;
    // The storage rows' disk: a fresh ext4 for each boot.
    let disk = dir.join(format!("data-{}-{}.img", clock.name(), std::process::id()));
    ext4(&disk)?;
    args.extend(qemu::device_args(&disk, 0));
    // The storage rows are counted by the plugin.
    let marks = dir.join(format!("marks-{}.txt", clock.name()));
    let plugin = super::profile::plugin(&dir)?;
    args.extend(super::marks::args(&plugin, &dir.join(format!("counts-{}.txt", clock.name())), &marks));
    println!("xtask: bench: booting Linux ({}) on -cpu {}", kernel_version(&dir), clock.cpu());
    let out = qemu::headless(&args, opts.timeout_with_tree(), &[]);
    let _ = std::fs::remove_file(&disk);
    let out = out?;
    let mut side = Side::parse(&out.serial);
    super::marks::apply(&mut side, &out.serial, &marks);
    if out.timed_out {
        side.problem = Some(format!("timed out after {:?}", opts.timeout_with_tree()));
    } else if out.code != Some(0) {
        side.problem = Some(format!("QEMU exited with {:?}", out.code));
    }
    let log = dir.join(format!("serial-{}.log", clock.name()));
    let _ = std::fs::write(&log, &out.serial);
    if side.problem.is_some() || !side.done {
        eprintln!("xtask: bench: Linux console saved in {}", log.display());
    }
    Ok(side)
}

/// The QEMU arguments of a Linux boot on this run's machine, the kernel
/// command line ending in `words`; with the I/O-intensive workload's
/// programs and files (`workload`) or without (the boot row's root).
fn args(opts: &Options, clock: Clock, words: &str, workload: bool) -> Result<Vec<String>, String> {
    let dir = root().join("target/bench/linux");
    std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let kernel = kernel(&dir)?;
    let initramfs = initramfs(&dir)?;
    let initramfs = if workload { with_workload(&dir, &initramfs)? } else { initramfs };
    let mut args = opts.machine(clock);
    for a in ["-smp", "1", "-m", "512M", "-no-reboot"] {
        args.push(a.into());
    }
    for (flag, value) in [
        ("-kernel", kernel.display().to_string()),
        ("-initrd", initramfs.display().to_string()),
        ("-append", format!("{CMDLINE} {words}")),
    ] {
        args.push(flag.into());
        args.push(value);
    }
    Ok(args)
}

/// Size of the storage rows' disk on both sides (MiB).
pub const DATA_DISK_MIB: u64 = 256;

/// A fresh ext4 image at `path` (`mke2fs`, from e2fsprogs), with its
/// inode tables and journal written now: a lazily initialised one has
/// the guest kernel zero them in the background while the rows run.
fn ext4(path: &Path) -> Result<(), String> {
    let _ = std::fs::remove_file(path);
    exec(
        Command::new("mke2fs")
            .args(["-q", "-F", "-t", "ext4", "-E", "lazy_itable_init=0,lazy_journal_init=0"])
            .arg(path)
            .arg(format!("{DATA_DISK_MIB}M")),
    )
}

/// The Debian kernel's modules the storage rows need (it builds virtio
/// and ext4 as modules), in the order `init` loads them, under
/// `lib/modules/VERSION/kernel/`.
const STORAGE_MODULES: &[&str] = &[
    "lib/crc16.ko",
    "fs/mbcache.ko",
    "fs/jbd2/jbd2.ko",
    "crypto/crc32c_generic.ko",
    "fs/ext4/ext4.ko",
    "drivers/virtio/virtio_ring.ko",
    "drivers/virtio/virtio.ko",
    "drivers/virtio/virtio_pci_modern_dev.ko",
    "drivers/virtio/virtio_pci_legacy_dev.ko",
    "drivers/virtio/virtio_pci.ko",
    "drivers/block/virtio_blk.ko",
];

/// A module's file name (the modules are kept flat, by it).
fn module_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// Where `kernel` keeps the modules of `list`, in its order.
fn kept(dir: &Path, list: &[&str]) -> Vec<PathBuf> {
    list.iter().map(|m| dir.join("modules").join(module_name(m))).collect()
}

/// The boot row's Linux boot (`super::boot`): the shell started by
/// `bench/linux/bootinit.c` instead of the benchmarks.
pub fn boot_args(opts: &Options, clock: Clock) -> Result<Vec<String>, String> {
    args(opts, clock, "rdinit=/bin/bootinit", false)
}

/// The cached kernel package's name and version, for the report.
pub fn kernel_version(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("kernel-version"))
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

/// Fetches (once) the kernel package the metapackage depends on and
/// extracts its `vmlinuz`.
pub fn kernel(dir: &Path) -> Result<PathBuf, String> {
    let vmlinuz = dir.join("vmlinuz");
    let package = match current_package() {
        Ok(p) => p,
        // Offline with a cached kernel: use that one.
        Err(_) if vmlinuz.exists() => return Ok(vmlinuz),
        Err(e) => return Err(e),
    };
    let modules = dir.join("modules");
    let all_kept = kept(dir, NET_MODULES).iter().chain(&kept(dir, STORAGE_MODULES)).all(|m| m.exists());
    if vmlinuz.exists() && all_kept && kernel_version(dir).starts_with(&format!("{package} ")) {
        return Ok(vmlinuz);
    }
    let deb = match find_deb(dir, &package) {
        Some(deb) => deb,
        None => {
            println!("xtask: bench: downloading {package}");
            exec(Command::new("apt-get").args(["download", "-q", &package]).current_dir(dir))?;
            find_deb(dir, &package).ok_or(format!("apt-get download {package} left no .deb"))?
        }
    };
    let extracted = dir.join("deb");
    let _ = std::fs::remove_dir_all(&extracted);
    exec(Command::new("dpkg-deb").arg("-x").arg(&deb).arg(&extracted))?;
    let boot = extracted.join("boot");
    let image = std::fs::read_dir(&boot)
        .map_err(|e| format!("reading {}: {e}", boot.display()))?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .find(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("vmlinuz-")))
        .ok_or(format!("{} has no /boot/vmlinuz-*", deb.display()))?;
    std::fs::rename(&image, &vmlinuz).map_err(|e| format!("moving vmlinuz: {e}"))?;
    keep_modules(&extracted, &modules)?;
    let _ = std::fs::remove_dir_all(&extracted);
    // The .deb is named package_version_arch.deb.
    let version = deb.file_name().and_then(|n| n.to_str()).and_then(|n| n.split('_').nth(1)).unwrap_or("?");
    std::fs::write(dir.join("kernel-version"), format!("{package} {version}\n"))
        .map_err(|e| e.to_string())?;
    Ok(vmlinuz)
}

/// Copies `NET_MODULES` and `STORAGE_MODULES` out of the extracted
/// package into `to`, flat.
fn keep_modules(extracted: &Path, to: &Path) -> Result<(), String> {
    let base = extracted.join("lib/modules");
    let version = std::fs::read_dir(&base)
        .map_err(|e| format!("reading {}: {e}", base.display()))?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .next()
        .ok_or(format!("{} is empty", base.display()))?;
    let _ = std::fs::remove_dir_all(to);
    std::fs::create_dir_all(to).map_err(|e| format!("creating {}: {e}", to.display()))?;
    for module in NET_MODULES.iter().chain(STORAGE_MODULES) {
        let from = version.join("kernel").join(module);
        let name = from.file_name().ok_or("bad module path")?;
        std::fs::copy(&from, to.join(name)).map_err(|e| format!("copying {}: {e}", from.display()))?;
    }
    Ok(())
}

/// `linux-image-amd64` depends on exactly one versioned kernel package.
fn current_package() -> Result<String, String> {
    let out = Command::new("apt-cache")
        .args(["depends", METAPACKAGE])
        .output()
        .map_err(|e| format!("cannot run apt-cache: {e}"))?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.trim().strip_prefix("Depends: "))
        .find(|p| p.starts_with("linux-image-"))
        .map(str::to_string)
        .ok_or(format!("apt-cache does not know {METAPACKAGE}'s kernel; run `apt-get update`"))
}

fn find_deb(dir: &Path, package: &str) -> Option<PathBuf> {
    let prefix = format!("{package}_");
    std::fs::read_dir(dir).ok()?.filter_map(|e| e.ok()).map(|e| e.path()).find(|p| {
        p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with(&prefix) && n.ends_with(".deb"))
    })
}

/// Builds the initramfs unless it is newer than every C source and header and the
/// packages' tree: `/init` from `init.c`, every other `NAME.c` as
/// `/bin/NAME`, the programs Veneer runs for the thread rows and the
/// program-start rows (`libos/tests/c/threadbench.c`, `startbench.c`),
/// for the latter the Debian packages and the static busybox Veneer's
/// root holds (`super::veneer::START_PACKAGES`), the NIC driver's
/// modules (`NET_MODULES`) in `/modules`, the storage rows'
/// (`STORAGE_MODULES`) as `/mods/NN.ko`, and Veneer's `/etc/passwd`,
/// `group` and `nsswitch.conf`.
fn initramfs(dir: &Path) -> Result<PathBuf, String> {
    let src = root().join("bench/linux");
    let cpio = dir.join("initramfs.cpio");
    let files: Vec<PathBuf> = std::fs::read_dir(&src)
        .map_err(|e| format!("reading {}: {e}", src.display()))?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .collect();
    let (mut sources, headers): (Vec<PathBuf>, Vec<PathBuf>) = files
        .into_iter()
        .filter(|p| p.extension().is_some_and(|x| x == "c" || x == "h"))
        .partition(|p| p.extension().is_some_and(|x| x == "c"));
    sources.sort();
    for shared in ["threadbench.c", "startbench.c", "httpbench.c", "iobench.c", "iotree.c"] {
        sources.push(root().join("libos/tests/c").join(shared));
    }
    let packages: Vec<String> = super::veneer::START_PACKAGES.iter().map(|p| p.to_string()).collect();
    let tree = crate::debs::unpacked(&packages)?;
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let marker = tree.join(".unpacked");
    let (net, storage) = (kept(dir, NET_MODULES), kept(dir, STORAGE_MODULES));
    let etc: Vec<PathBuf> = ETC.iter().map(|n| root().join("libos/root/etc").join(n)).collect();
    if let Some(built) = modified(&cpio) {
        if sources
            .iter()
            .chain(&headers)
            .chain([&marker])
            .chain(&net)
            .chain(&storage)
            .chain(&etc)
            .all(|s| modified(s).is_some_and(|m| m <= built))
        {
            return Ok(cpio);
        }
    }
    println!("xtask: bench: building the Linux benchmark programs");
    let mut ar = Archive::default();
    crate::build::add_tree(&mut ar, &tree, "")?;
    ar.dir("bin");
    ar.dir("dev");
    ar.dir("tmp");
    // The users and groups of Veneer's root (nginx looks up its user).
    ar.dir("etc");
    for (name, path) in ETC.iter().zip(&etc) {
        let data = std::fs::read(path).map_err(|e| format!("reading {}: {e}", path.display()))?;
        ar.file(&format!("etc/{name}"), 0o644, &data);
    }
    let busybox = std::fs::read(crate::build::BUSYBOX).map_err(|e| format!("reading busybox: {e}"))?;
    ar.file("bin/busybox", 0o755, &busybox);
    let read = |m: &PathBuf| std::fs::read(m).map_err(|e| format!("reading module {}: {e}", m.display()));
    // The network rows' by name (netbench.c names them), the storage
    // rows' by load order (init loads /mods/NN.ko in turn).
    ar.dir("modules");
    for (module, m) in NET_MODULES.iter().zip(&net) {
        ar.file(&format!("modules/{}", module_name(module)), 0o644, &read(m)?);
    }
    ar.dir("mods");
    for (i, m) in storage.iter().enumerate() {
        ar.file(&format!("mods/{i:02}.ko"), 0o644, &read(m)?);
    }
    for source in &sources {
        let name = source.file_stem().and_then(|s| s.to_str()).ok_or("bad source name")?;
        let exe = dir.join(name);
        exec(
            Command::new("gcc")
                .args(["-O2", "-static", "-Wall", "-Wextra", "-Werror"])
                .args(extra_cflags(source)?)
                .arg("-o")
                .arg(&exe)
                .arg(source),
        )?;
        let data = std::fs::read(&exe).map_err(|e| format!("reading {}: {e}", exe.display()))?;
        let path = if name == "init" { "init".to_string() } else { format!("bin/{name}") };
        ar.file(&path, 0o755, &data);
    }
    std::fs::write(&cpio, ar.finish()).map_err(|e| format!("writing {}: {e}", cpio.display()))?;
    Ok(cpio)
}

/// `base` followed by a second archive holding the I/O-intensive
/// workload's programs and files (`super::tree`), as
/// `initramfs-tree.cpio`: the kernel unpacks both, one after the other.
/// The boot row's Linux boots `base` alone, so its root stays the one
/// Veneer's boot row boots on.
fn with_workload(dir: &Path, base: &Path) -> Result<PathBuf, String> {
    let out = dir.join("initramfs-tree.cpio");
    let tools: Vec<String> = super::tree::TOOLS.iter().map(|p| p.to_string()).collect();
    let tree = crate::debs::unpacked(&tools)?;
    let packages: Vec<String> = super::veneer::START_PACKAGES.iter().map(|p| p.to_string()).collect();
    let base_tree = crate::debs::unpacked(&packages)?;
    let files = super::tree::files()?;
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    if let Some(built) = modified(&out) {
        let inputs = [base.to_path_buf(), tree.join(".unpacked")];
        if inputs.iter().chain(files.iter().map(|(_, p)| p)).all(|s| modified(s).is_some_and(|m| m <= built))
        {
            return Ok(out);
        }
    }
    // Only what the base lacks: a second copy of coreutils and the C
    // library would not fit beside the first in 512 MiB ("Initramfs
    // unpacking failed: write error").
    let mut ar = Archive::default();
    crate::build::add_tree_except(&mut ar, &tree, "", Some(&base_tree))?;
    ar.dir("bench");
    for (name, path) in &files {
        let data = std::fs::read(path).map_err(|e| format!("reading {}: {e}", path.display()))?;
        ar.file(name, 0o644, &data);
    }
    let mut data = std::fs::read(base).map_err(|e| format!("reading {}: {e}", base.display()))?;
    data.extend(ar.finish());
    std::fs::write(&out, data).map_err(|e| format!("writing {}: {e}", out.display()))?;
    Ok(out)
}

/// A source may ask for more compiler flags with a first line
/// `/* cflags: ... */` (the libc-free `tiny` does).
fn extra_cflags(source: &Path) -> Result<Vec<String>, String> {
    let text = std::fs::read_to_string(source).map_err(|e| format!("reading {}: {e}", source.display()))?;
    let flags = text
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("/* cflags:"))
        .and_then(|l| l.strip_suffix("*/"))
        .unwrap_or("");
    Ok(flags.split_whitespace().map(str::to_string).collect())
}

fn exec(cmd: &mut Command) -> Result<(), String> {
    let status = cmd.stdin(Stdio::null()).status().map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{cmd:?} failed ({status})"))
    }
}
