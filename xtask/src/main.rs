//! `cargo xtask`: the one entry point for building, running, testing,
//! benchmarking and debugging Veneer. Run `cargo xtask help` for the list.

mod bench;
mod boottest;
mod build;
mod compat;
#[cfg(test)]
mod conventions;
mod cpio;
mod debs;
mod deps;
mod devtest;
mod disk;
mod faults;
mod fstools;
mod fuzz;
#[cfg(test)]
mod imports;
mod iso;
mod lxtest;
mod nettest;
mod qemu;
mod roottest;
mod stress;
mod ttytest;
mod xntest;

use std::process::ExitCode;

const USAGE: &str = "\
usage: cargo xtask <command>

  run [--fresh] [--disk IMAGE] [--with PKG].. [PROGRAM]
                     boot Veneer in QEMU with the console on this terminal:
                     busybox sh under lxrt, its root `/` C-FFS on the disk
                     IMAGE (default target/disks/root.img), kept between
                     runs, made from the root tree when missing or with
                     --fresh (--with PKG: Debian's PKG and its dependencies
                     in that tree; a kept disk is not changed). PROGRAM:
                     the first environment instead, with its arguments and
                     the root tree in memory (`run shell`: the native
                     console shell)
  test               lint, then every host unit test and every boot test,
                     the stress, fault-injection and benchmark smoke runs
  lint               rustfmt --check, and clippy (warnings are errors) on the
                     host and on the kernel's and the programs' targets
  boottest [NAME..]  run only the boot tests (all, or those named)
  stress [--quick] [--seed S]
                     hostile load: native and Linux system-call fuzzing,
                     fork/exec churn, file-system fill/empty, fork bombs;
                     the kernel audits itself at the end of each boot
  bench [NAME] [--quick] [--kvm] [--profile]
                     run the papers' experiments on Veneer and Linux
                     (--profile: where Veneer's instructions go in NAME)
  compat [--tcg] [--linux] [MODULE..]
                     CPython's regression tests on Veneer and on Linux in
                     the same QEMU, test by test; writes docs/compat.md
  iso                build target/veneer.iso (hybrid BIOS/UEFI, GRUB)
  gdb [PROGRAM]      boot paused with QEMU's gdb stub on :1234
  fuzz verifier [--programs N] [--seed S]
                     differential verifier fuzzing campaign on the host
  faults DRIVER|all [--trials N] [--first T] [--seed S] [--jobs J]
                     fault-injection campaign (paper 004 §4): N trials of
                     five faults each in the driver's image, each booted
                     native (isolation=off) and isolated
  faults chart OUT.svg REPORT...
                     the campaign's chart from its reports (docs/faults-recovery.svg)
  build              build the kernel, the user programs and the boot image
  mkfs IMAGE [--size MIB] [--from DIR] [--cpio ARCHIVE] [--owner UID:GID] [--no-embed] [--no-group]
                     an XN disk image with a C-FFS holding a copy of DIR
                     (or of boot archive ARCHIVE's root tree)
  fsck IMAGE [--compare DIR]
                     check an image (XN's claims, C-FFS's structures; with
                     --compare, every file against DIR)
  crash [--states N] [--seed S] [--depth D] [--seeded-bug]
                     crash-consistency campaign over XN and C-FFS on the
                     host (every crash state of every 1-2 operation
                     workload, then random ones until N states)
  corrupt [--mutations N] [--seed S]
                     corrupt-image campaign: mount N damaged images
  powercut [--cuts N] [--seed S]
                     kill QEMU N times while a program appends and fsyncs
                     records on a C-FFS disk; after each reboot every
                     acknowledged record must be there and fsck clean
";

/// Formatting and clippy, with the workspace's lints (`[workspace.lints]`),
/// on every target the code is built for: the host (host tests, xtask,
/// and a check of everything), the kernel's (with the driver images), and
/// the programs'.
fn lint() -> Result<(), String> {
    deps::ensure_toolchain()?;
    println!(
        "xtask: lint (cargo fmt --check; cargo clippy on the host, the kernel's and the programs' targets)"
    );
    build::cargo(&["fmt", "--all", "--check"], &[])?;
    let deny = ["--", "-D", "warnings"];
    let host = ["clippy", "--quiet", "--workspace", "--all-targets"];
    let kernel = [
        "clippy",
        "--quiet",
        "-p",
        "kernel",
        "-p",
        "drvapi",
        "-p",
        "drvglue",
        "-p",
        "virtio-blk-driver",
        "-p",
        "virtio-net-driver",
        "--target",
        build::KERNEL_TARGET,
    ];
    let programs = [
        "clippy",
        "--quiet",
        "-p",
        "user",
        "-p",
        "nest",
        "-p",
        "libos",
        "--bins",
        "--lib",
        "--target",
        build::USER_TARGET,
    ];
    // The fault-injection build too (`build::inject`), in its own target
    // directory as it is built.
    let inject_dir = build::root().join("target/inject");
    let inject_dir = inject_dir.to_str().ok_or("the target directory is not UTF-8")?;
    let features = "kernel/inject,drvglue/inject,virtio-blk-driver/inject,virtio-net-driver/inject";
    let inject = [&kernel[..], &["--features", features, "--target-dir", inject_dir][..]].concat();
    for args in [&host[..], &kernel[..], &inject[..], &programs[..]] {
        build::cargo(&[args, &deny[..]].concat(), &[])?;
    }
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (cmd, rest) = match args.split_first() {
        Some((c, r)) => (c.as_str(), r),
        None => ("help", &[][..]),
    };
    let result = match cmd {
        "run" => run(rest),
        "test" => test(),
        "lint" => lint(),
        "boottest" => boottest::run_named(rest),
        "bench" => bench::main(rest),
        "stress" => stress::main(rest),
        "compat" => compat::main(rest),
        "iso" => iso::build().map(|p| println!("xtask: wrote {}", p.display())),
        "gdb" => gdb(rest),
        "fuzz" => fuzz::main(rest),
        "faults" => faults::main(rest),
        "build" => build::all().map(|_| ()),
        "mkfs" => fstools::mkfs(rest),
        "fsck" => fstools::fsck(rest),
        "crash" => fstools::crash(rest),
        "corrupt" => fstools::corrupt(rest),
        "powercut" => xntest::powercut(rest),
        "help" | "-h" | "--help" => {
            print!("{USAGE}");
            Ok(())
        }
        other => Err(format!("unknown command `{other}`\n{USAGE}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// What `cargo xtask run` boots: busybox's shell on the Linux runtime, the
/// console a terminal, the disk's C-FFS the root.
const DEFAULT_RUN: &str = "lxrt -r -t /bin/sh";
/// `cargo xtask run`'s disk, kept between runs (`/` in the guest).
const RUN_DISK: &str = "target/disks/root.img";

fn run(args: &[String]) -> Result<(), String> {
    deps::ensure(deps::RUN)?;
    let mut pkgs = Vec::new();
    let mut disk = build::root().join(RUN_DISK);
    let mut fresh = false;
    let mut args = args;
    loop {
        match args {
            [flag, pkg, rest @ ..] if flag == "--with" => {
                pkgs.push(pkg.clone());
                args = rest;
            }
            [flag, path, rest @ ..] if flag == "--disk" => {
                disk = path.into();
                args = rest;
            }
            [flag, rest @ ..] if flag == "--fresh" => {
                fresh = true;
                args = rest;
            }
            _ => break,
        }
    }
    let built = build::all()?;
    let tree = if fresh || !disk.exists() || !args.is_empty() {
        Some(build::with_packages(&built, &pkgs)?)
    } else {
        None
    };
    match &tree {
        Some(t) if fresh || !disk.exists() => fstools::root_disk(&disk, &t.bootfs)?,
        _ => println!(
            "xtask: keeping the disk {}: it is yours (`--fresh` makes a new one from the root tree{})",
            disk.display(),
            if pkgs.is_empty() { "" } else { "; --with changes only a new one" }
        ),
    }
    let joined = args.join(" ");
    // The default boots with the disk as the root and only the programs
    // in the boot archive; a program named boots the tree in memory too.
    let (init, img, root) = match tree {
        Some(t) if !args.is_empty() => (joined.as_str(), t, "/data (lxrt without -r)"),
        _ => (DEFAULT_RUN, build::boot_only(&built)?, "/"),
    };
    println!(
        "xtask: booting Veneer (init={init}); {root} is the disk {}; exit QEMU with Ctrl-A x",
        disk.display()
    );
    qemu::interactive(&img, init, &[], &disk)
}

fn gdb(args: &[String]) -> Result<(), String> {
    deps::ensure(deps::RUN)?;
    let img = build::all()?;
    let init = args.first().map(String::as_str).unwrap_or("shell");
    println!(
        "xtask: QEMU is paused with a gdb stub on localhost:1234. In another terminal:\n\
         \x20 gdb {} -ex 'target remote :1234'\n\
         then `continue`. Exit QEMU with Ctrl-A x.",
        img.kernel.display()
    );
    let disk = build::root().join("target/disks/gdb.img");
    crate::disk::create(&disk)?;
    qemu::interactive(&img, init, &["-s", "-S"], &disk)
}

fn test() -> Result<(), String> {
    deps::ensure(deps::TEST)?;
    lint()?;
    println!("xtask: host unit tests (cargo test --workspace)");
    build::cargo(&["test", "--workspace", "--exclude", "user"], &[])?;
    boottest::run_all()?;
    println!("xtask: power cuts, short version (powercut --cuts 3)");
    xntest::powercut(&["--cuts".to_string(), "3".to_string()])?;
    println!("xtask: stress, short version (stress --quick)");
    stress::main(&["--quick".to_string()])?;
    println!("xtask: fault injection, a few seeded trials (faults --quick)");
    faults::main(&["--quick".to_string()])?;
    println!("xtask: benchmark harness smoke run (bench --quick)");
    bench::main(&["--quick".to_string()])
}
