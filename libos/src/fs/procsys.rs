//! `/proc/sys`: the kernel's tunables programs read to size themselves or
//! check the system (`pid_max`, `tainted`, `ngroups_max`, the System V IPC
//! limits, `file-max`, `nr_open`, `pipe-max-size`, the inotify limits...),
//! each the value the library works with, read-only (the library has no
//! tunables: a write would change nothing). Made once, when `/proc` is
//! first looked at; `random/uuid` is new at every look, as on Linux.

use super::node::Ino;
use super::procfile::{put, text};
use super::{dir, node, S_IFDIR, S_IFREG};
use crate::errno::Errno;
use alloc::vec::Vec;

/// The kernel release and version `uname` and `/proc/sys/kernel` report.
pub const RELEASE: &str = "6.1.0-veneer";
pub const VERSION: &str = "#1 SMP lxrt";

/// The host name (`which` 0) or domain name (1): the one set, else
/// `veneer` and Linux's `(none)`.
pub fn name(which: usize) -> &'static [u8] {
    match crate::shared::name(which) {
        b"" if which == 0 => b"veneer",
        b"" => b"(none)",
        n => n,
    }
}

/// A directory `name` in `d`, made if missing.
fn subdir(d: Ino, name: &[u8]) -> Result<Ino, Errno> {
    match dir::lookup(d, name) {
        Some(i) => Ok(i),
        None => {
            let i = node::alloc_on(S_IFDIR | 0o555, node::FS_PROC)?;
            dir::add(d, name, i)?;
            Ok(i)
        }
    }
}

/// A random version 4 UUID, as Linux's `random/uuid` and `boot_id`.
fn uuid() -> Vec<u8> {
    let mut b = [0u8; 16];
    crate::random::fill(&mut b);
    b[6] = b[6] & 0x0f | 0x40;
    b[8] = b[8] & 0x3f | 0x80;
    let mut s = Vec::new();
    for (i, x) in b.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            s.push(b'-');
        }
        s.extend_from_slice(&text(format_args!("{x:02x}")));
    }
    s.push(b'\n');
    s
}

/// `kernel/hostname` and `kernel/domainname`, as set now.
fn names(kernel: Ino) -> Result<(), Errno> {
    for (file, which) in [(&b"hostname"[..], 0), (b"domainname", 1)] {
        let mut line = name(which).to_vec();
        line.push(b'\n');
        put(kernel, file, S_IFREG | 0o444, &line)?;
    }
    Ok(())
}

/// Brings `/proc/sys` (in `/proc`'s directory `proc_dir`) up to date.
pub fn refresh(proc_dir: Ino) -> Result<(), Errno> {
    let ro = S_IFREG | 0o444;
    if let Some(sys) = dir::lookup(proc_dir, b"sys") {
        let kernel = subdir(sys, b"kernel")?;
        names(kernel)?;
        return put(subdir(kernel, b"random")?, b"uuid", ro, &uuid());
    }
    let sys = subdir(proc_dir, b"sys")?;
    let kernel = subdir(sys, b"kernel")?;
    let pid_max = text(format_args!("{}\n", crate::proc::pid::PID_SPACE));
    let nr_open = text(format_args!("{}\n", crate::fd::MAX_FDS));
    let (release, version) = (text(format_args!("{RELEASE}\n")), text(format_args!("{VERSION}\n")));
    names(kernel)?;
    let files: [(&[u8], &[u8]); 21] = [
        (b"ostype", b"Linux\n"),
        (b"osrelease", &release),
        (b"version", &version),
        (b"pid_max", &pid_max),
        (b"threads-max", &pid_max),
        (b"tainted", b"0\n"),
        (b"ngroups_max", b"65536\n"),
        (b"cap_last_cap", b"40\n"),
        (b"overflowuid", b"65534\n"),
        (b"overflowgid", b"65534\n"),
        (b"core_pattern", b"core\n"),
        // No address-space randomisation (the load base is fixed).
        (b"randomize_va_space", b"0\n"),
        (b"perf_event_paranoid", b"2\n"),
        (b"msgmax", b"8192\n"),
        (b"msgmnb", b"16384\n"),
        (b"msgmni", b"32000\n"),
        (b"sem", b"32000\t1024000000\t500\t32000\n"),
        (b"shmmax", b"18446744073692774399\n"),
        (b"shmall", b"18446744073692774399\n"),
        (b"shmmni", b"4096\n"),
        (b"sched_child_runs_first", b"0\n"),
    ];
    for (name, value) in files {
        put(kernel, name, ro, value)?;
    }
    let random = subdir(kernel, b"random")?;
    put(random, b"boot_id", ro, &uuid())?;
    put(random, b"uuid", ro, &uuid())?;
    let fs = subdir(sys, b"fs")?;
    for (name, value) in [
        (&b"file-max"[..], &b"9223372036854775807\n"[..]),
        (b"nr_open", &nr_open),
        (b"pipe-max-size", b"1048576\n"),
        (b"pipe-user-pages-soft", b"16384\n"),
        (b"aio-max-nr", b"65536\n"),
        (b"protected_symlinks", b"0\n"),
        (b"protected_hardlinks", b"0\n"),
    ] {
        put(fs, name, ro, value)?;
    }
    let inotify = subdir(fs, b"inotify")?;
    for (name, value) in [
        (&b"max_user_watches"[..], &b"8192\n"[..]),
        (b"max_user_instances", b"128\n"),
        (b"max_queued_events", b"16384\n"),
    ] {
        put(inotify, name, ro, value)?;
    }
    let mqueue = subdir(fs, b"mqueue")?;
    put(mqueue, b"msg_max", ro, b"10\n")?;
    put(mqueue, b"queues_max", ro, b"256\n")?;
    let vm = subdir(sys, b"vm")?;
    put(vm, b"overcommit_memory", ro, b"0\n")?;
    put(vm, b"max_map_count", ro, b"65530\n")
}
