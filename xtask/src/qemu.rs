//! Starts QEMU for Veneer: interactively, or headless with a timeout for
//! tests and benchmarks.

use crate::build::Image;
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The exit status QEMU reports when the guest wrote the kernel's success
/// code (0x10) to the isa-debug-exit port: (0x10 << 1) | 1.
pub const EXIT_SUCCESS: i32 = 33;

/// The machine every Veneer boot uses: software emulation, one CPU, the
/// debug-exit device the kernel powers off through with a code.
pub fn machine_args() -> Vec<String> {
    ["-accel", "tcg", "-cpu", "max", "-smp", "1", "-m", "512M", "-no-reboot"]
        .iter()
        .chain(&["-device", "isa-debug-exit,iobase=0xf4,iosize=0x04"])
        .map(|s| s.to_string())
        .collect()
}

/// `machine_args` plus the kernel, the boot file system and the command
/// line naming the first program.
pub fn base_args(img: &Image, init: &str) -> Vec<String> {
    let mut v = machine_args();
    for a in ["-kernel", &img.kernel.display().to_string(), "-initrd", &img.bootfs.display().to_string()] {
        v.push(a.to_string());
    }
    v.push("-append".into());
    v.push(format!("init={init}"));
    v
}

/// The host port (on 127.0.0.1 only) that `cargo xtask run` forwards to
/// the guest's port 80, when it is free.
pub const RUN_HOST_PORT: u16 = 5580;

/// `RUN_HOST_PORT` if nobody listens on it, else any free port.
fn run_port() -> Result<u16, String> {
    match std::net::TcpListener::bind(("127.0.0.1", RUN_HOST_PORT)) {
        Ok(_) => Ok(RUN_HOST_PORT),
        Err(_) => crate::nettest::free_port(),
    }
}

/// The devices every boot gets: a virtio-blk disk on the image `disk` and
/// a virtio-net NIC on QEMU's user-mode network, whose host port
/// `host_port` (0: any free one) on 127.0.0.1 alone forwards to the
/// guest's port 80. Both use the modern (virtio 1.x) PCI transport only.
pub fn device_args(disk: &Path, host_port: u16) -> Vec<String> {
    devices_on(disk, &format!("user,id=net0,hostfwd=tcp:127.0.0.1:{host_port}-:80"), "")
}

/// The disk of `device_args` and a NIC on the network backend `netdev`
/// (its id `net0`), with `nic_options` (e.g. `,mac=...`) added to it.
pub fn devices_on(disk: &Path, netdev: &str, nic_options: &str) -> Vec<String> {
    [
        "-drive",
        // Write-back caching whose flushes stop in QEMU: the device offers
        // VIRTIO_BLK_F_FLUSH and the guest makes every flush, but the host
        // does not fdatasync (tests end QEMU, never the host, so nothing
        // QEMU wrote can be lost: see `durable`). Synced, a flush on a busy
        // host took seconds of guest time, past a request's deadline.
        &format!("file={},format=raw,if=none,id=disk0,cache=unsafe", disk.display()),
        "-device",
        "virtio-blk-pci,drive=disk0,disable-legacy=on",
        "-netdev",
        netdev,
        "-device",
        &format!("virtio-net-pci,netdev=net0,disable-legacy=on{nic_options}"),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// The machine of the IOMMU's boots (`dev_iommu`, the benchmarks'
/// `devbench iommu`): q35 with Intel's remapping unit (VT-d). Every other
/// boot keeps the default machine, so that the benchmark rows stay
/// comparable.
pub const IOMMU_MACHINE: &[&str] = &["-machine", "q35", "-device", "intel-iommu"];

/// Whether `args` boot the IOMMU's machine.
fn behind_iommu(args: &[String]) -> bool {
    args.iter().any(|a| a == "intel-iommu")
}

/// `devices` whose disk's flushes reach the host's disk (`fdatasync`):
/// what XN flushed in `cargo xtask run` survives the host's end too.
fn durable(devices: Vec<String>) -> Vec<String> {
    devices.into_iter().map(|a| a.replace(",cache=unsafe", ",cache=writeback")).collect()
}

/// `device_args` whose devices send their DMA through the IOMMU
/// (`iommu_platform=on`; otherwise QEMU's virtio devices bypass it).
pub fn through_iommu(devices: Vec<String>) -> Vec<String> {
    devices
        .into_iter()
        .map(|a| {
            if a.starts_with("virtio-") {
                a.replace("disable-legacy=on", "disable-legacy=on,iommu_platform=on")
            } else {
                a
            }
        })
        .collect()
}

/// Whether `args` already name the boot's disk (a test that boots twice
/// on the same image).
fn has_devices(args: &[String]) -> bool {
    args.iter().any(|a| a.starts_with("virtio-blk-pci"))
}

/// Boots with the serial console on this terminal, on the disk image
/// `disk`.
pub fn interactive(img: &Image, init: &str, extra: &[&str], disk: &Path) -> Result<(), String> {
    let port = run_port()?;
    println!("xtask: http://127.0.0.1:{port}/ on this machine reaches the guest's port 80");
    let status = Command::new("qemu-system-x86_64")
        .args(base_args(img, init))
        .args(durable(device_args(disk, port)))
        .args(["-nographic"])
        .args(extra)
        .status()
        .map_err(|e| format!("cannot start QEMU: {e}"))?;
    match status.code() {
        Some(EXIT_SUCCESS) | Some(0) => Ok(()),
        other => Err(format!("QEMU exited with {other:?}")),
    }
}

/// The outcome of a headless boot.
pub struct Outcome {
    /// QEMU's exit status (`None` if it was killed at the timeout).
    pub code: Option<i32>,
    /// Everything the guest printed on the serial console.
    pub serial: String,
    pub timed_out: bool,
    /// When each piece of `serial` arrived: (time since QEMU started, bytes
    /// received by then).
    pub arrivals: Vec<(Duration, usize)>,
}

impl Outcome {
    /// When `text` had appeared on the console (to within one read).
    pub fn seen_at(&self, text: &str) -> Option<Duration> {
        let end = self.serial.find(text)? + text.len();
        self.arrivals.iter().find(|&&(_, n)| n >= end).map(|&(t, _)| t)
    }
}

/// A keystroke step for an interactive test: once `after` has appeared on
/// the serial console (after the previous step's text), wait `pause_ms`,
/// then type `send`; an empty `send` stops QEMU instead (SIGTERM: it shuts
/// down in order, so plugins write their results).
pub struct Key {
    pub after: String,
    pub pause_ms: u64,
    pub send: Vec<u8>,
}

/// Runs QEMU with `args`, serial on a pipe, typing `keys` as their text
/// appears, killing it after `timeout`. Unless `args` bring their own
/// disk, the boot gets the devices of `device_args` on a fresh image of its
/// own, removed afterwards.
pub fn headless(args: &[String], timeout: Duration, keys: &[Key]) -> Result<Outcome, String> {
    headless_watched(args, Limits { total: timeout, silent: None }, keys)
}

/// How long a headless boot may run: in all, and (if `silent` is set)
/// without printing anything (a wedged machine is killed then rather
/// than at the end of a long `total`).
pub struct Limits {
    pub total: Duration,
    pub silent: Option<Duration>,
}

/// `headless` with a limit on silence as well.
pub fn headless_watched(args: &[String], limits: Limits, keys: &[Key]) -> Result<Outcome, String> {
    if has_devices(args) {
        return run_headless(args, &limits, keys);
    }
    let disk = crate::disk::scratch_path();
    crate::disk::create(&disk)?;
    let mut with = args.to_vec();
    let devices = device_args(&disk, 0);
    with.extend(if behind_iommu(args) { through_iommu(devices) } else { devices });
    let out = run_headless(&with, &limits, keys);
    let _ = std::fs::remove_file(&disk);
    out
}

/// A machine run in the background, its console collected, until `stop`
/// (a boot test's `companion`).
pub struct Companion {
    child: std::process::Child,
    reader: std::thread::JoinHandle<Vec<u8>>,
}

impl Companion {
    pub fn start(args: &[String]) -> Result<Companion, String> {
        let mut child = Command::new("qemu-system-x86_64")
            .args(args)
            .args(["-display", "none", "-serial", "stdio", "-monitor", "none"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start QEMU: {e}"))?;
        let mut out = child.stdout.take().expect("piped stdout");
        let reader = std::thread::spawn(move || {
            let mut all = Vec::new();
            let _ = out.read_to_end(&mut all);
            all
        });
        Ok(Companion { child, reader })
    }

    /// Kills the machine; what it printed.
    pub fn stop(mut self) -> String {
        let _ = self.child.kill();
        let _ = self.child.wait();
        String::from_utf8_lossy(&self.reader.join().unwrap_or_default()).into_owned()
    }
}

fn run_headless(args: &[String], limits: &Limits, keys: &[Key]) -> Result<Outcome, String> {
    let mut child = Command::new("qemu-system-x86_64")
        .args(args)
        .args(["-display", "none", "-serial", "stdio", "-monitor", "none"])
        .stdin(if keys.is_empty() { Stdio::null() } else { Stdio::piped() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start QEMU: {e}"))?;
    let mut out = child.stdout.take().expect("piped stdout");
    let mut input = child.stdin.take();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = seen.clone();
    let start = Instant::now();
    let reader = std::thread::spawn(move || {
        let mut chunk = [0u8; 4096];
        let mut arrivals = Vec::new();
        while let Ok(n) = out.read(&mut chunk) {
            if n == 0 {
                break;
            }
            let mut all = sink.lock().expect("reader");
            all.extend_from_slice(&chunk[..n]);
            arrivals.push((start.elapsed(), all.len()));
        }
        arrivals
    });
    let (mut step, mut from) = (0, 0);
    let (mut printed, mut last_print) = (0, Instant::now());
    let (code, timed_out) = loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            break (status.code(), false);
        }
        let now_printed = seen.lock().expect("reader").len();
        if now_printed != printed {
            (printed, last_print) = (now_printed, Instant::now());
        }
        let silent_too_long = limits.silent.is_some_and(|s| last_print.elapsed() > s);
        if start.elapsed() > limits.total || silent_too_long {
            let _ = child.kill();
            let _ = child.wait();
            break (None, true);
        }
        if let (Some(k), Some(stdin)) = (keys.get(step), input.as_mut()) {
            let text = String::from_utf8_lossy(&seen.lock().expect("reader")).into_owned();
            if let Some(at) = text.get(from..).and_then(|t| t.find(&k.after)) {
                std::thread::sleep(Duration::from_millis(k.pause_ms));
                if k.send.is_empty() {
                    let _ = Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
                }
                let _ = stdin.write_all(&k.send).and_then(|_| stdin.flush());
                from += at + k.after.len();
                step += 1;
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    drop(input);
    let arrivals = reader.join().unwrap_or_default();
    let bytes = std::mem::take(&mut *seen.lock().expect("reader"));
    let mut serial = String::from_utf8_lossy(&bytes).into_owned();
    if let Some(mut err) = child.stderr.take() {
        let mut e = String::new();
        let _ = err.read_to_string(&mut e);
        if !e.trim().is_empty() {
            serial.push_str("\n[qemu stderr]\n");
            serial.push_str(&e);
        }
    }
    Ok(Outcome { code, serial, timed_out, arrivals })
}
