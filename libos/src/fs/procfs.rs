//! `/proc`, as much of Linux's as `ps`, `pidof`, `free` and `uptime` read:
//! a directory per process holding `stat`, `cmdline` and `comm`, `self`,
//! `meminfo` and `uptime`. The process
//! table (`proc/table.rs`) is the truth; this is a view of it, brought up to
//! date in the shared file system whenever a path under `/proc` is resolved
//! (with the big lock held, so the caller sees one consistent snapshot).
//! Directories of processes that are still there keep their place, so a
//! reader walking `/proc` while others open files in it sees each once.

use super::node::{self, Ino};
use super::{dir, ROOT, S_IFDIR, S_IFLNK, S_IFREG};
use crate::proc::table::{self, Entry};
use crate::time::clock_ticks;
use abi::tables::{env_state, EnvInfo};
use alloc::vec::Vec;
use user::kinfo;

/// `args` formatted into bytes (without `alloc::format!`, which lxrt's
/// panic-abort build cannot link).
fn text(args: core::fmt::Arguments) -> Vec<u8> {
    struct Buf(Vec<u8>);
    impl core::fmt::Write for Buf {
        fn write_str(&mut self, s: &str) -> core::fmt::Result {
            self.0.extend_from_slice(s.as_bytes());
            Ok(())
        }
    }
    let mut b = Buf(Vec::new());
    let _ = core::fmt::write(&mut b, args);
    b.0
}

/// Whether `path` names something under `/proc`.
pub fn covers(path: &[u8]) -> bool {
    path.strip_prefix(b"/proc").is_some_and(|rest| rest.is_empty() || rest[0] == b'/')
}

/// Brings `/proc` up to date.
pub fn refresh() -> Result<(), i64> {
    let proc_dir = match dir::lookup(ROOT, b"proc") {
        Some(d) => d,
        None => {
            let d = node::alloc(S_IFDIR | 0o555)?;
            dir::add(ROOT, b"proc", d)?;
            d
        }
    };
    let live: Vec<(EnvInfo, Entry)> = table::all().map(|(i, e)| (i, *e)).collect();
    let names: Vec<Vec<u8>> =
        live.iter().map(|(i, _)| text(format_args!("{}", crate::proc::pid::of(i.id)))).collect();
    // Processes that are gone.
    let stale: Vec<Vec<u8>> = dir::with_entries(proc_dir, |es| {
        es.iter()
            .map(|e| e.name().to_vec())
            .filter(|n| n.iter().all(u8::is_ascii_digit) && !names.contains(n))
            .collect()
    });
    for name in stale {
        remove_tree(proc_dir, &name);
    }
    for ((info, entry), name) in live.iter().zip(&names) {
        let d = match dir::lookup(proc_dir, name) {
            Some(d) => d,
            None => {
                let d = node::alloc(S_IFDIR | 0o555)?;
                dir::add(proc_dir, name, d)?;
                d
            }
        };
        put(d, b"stat", S_IFREG | 0o444, &stat(info, entry))?;
        put(d, b"cmdline", S_IFREG | 0o444, cmdline(entry))?;
        let mut comm = comm(entry).to_vec();
        comm.push(b'\n');
        put(d, b"comm", S_IFREG | 0o444, &comm)?;
    }
    put(proc_dir, b"self", S_IFLNK | 0o777, &text(format_args!("{}", crate::proc::pid())))?;
    put(proc_dir, b"meminfo", S_IFREG | 0o444, &meminfo())?;
    let up = crate::time::now_ns();
    let uptime = text(format_args!("{}.{:02} 0.00\n", up / 1_000_000_000, up % 1_000_000_000 / 10_000_000));
    put(proc_dir, b"uptime", S_IFREG | 0o444, &uptime)
}

/// `/proc/meminfo` (what `free` reads), from the kernel's frame counts: the
/// frames it manages and those free; no swap, no page cache.
fn meminfo() -> Vec<u8> {
    let k = kinfo::kernel();
    let (total, free) = (k.frames * 4, kinfo::free_frames() * 4);
    let mut s = Vec::new();
    for (name, kib) in [
        ("MemTotal:", total),
        ("MemFree:", free),
        ("MemAvailable:", free),
        ("Buffers:", 0),
        ("Cached:", 0),
        ("SwapCached:", 0),
        ("SwapTotal:", 0),
        ("SwapFree:", 0),
        ("Shmem:", 0),
        ("SReclaimable:", 0),
    ] {
        s.extend_from_slice(&text(format_args!("{name:<16}{kib:>8} kB\n")));
    }
    s
}

/// Makes `dir/name` a node of `mode` holding `bytes` (replacing what was
/// there).
fn put(d: Ino, name: &[u8], mode: u32, bytes: &[u8]) -> Result<(), i64> {
    let ino = match dir::lookup(d, name) {
        Some(i) => i,
        None => {
            let i = node::alloc(mode)?;
            dir::add(d, name, i)?;
            i
        }
    };
    node::update(ino, |n| {
        node::truncate(n, 0)?;
        node::write_at(n, 0, bytes)
    })?;
    Ok(())
}

/// Unlinks `name` from `d` and, for a directory, everything in it.
fn remove_tree(d: Ino, name: &[u8]) {
    let Some(ino) = dir::lookup(d, name) else { return };
    if node::is_dir(ino) {
        let inner: Vec<Vec<u8>> = dir::with_entries(ino, |es| es.iter().map(|e| e.name().to_vec()).collect());
        for n in inner {
            remove_tree(ino, &n);
        }
    }
    dir::remove(d, name);
    node::release(ino);
}

/// The command line as Linux shows it: the arguments, each ended by NUL.
fn cmdline(e: &Entry) -> &[u8] {
    let end = e.cmd.iter().rposition(|&b| b != 0).map_or(0, |i| i + 2).min(e.cmd.len());
    &e.cmd[..end]
}

/// The program's name: the last part of its first argument, at most 15
/// bytes, as Linux's `comm`.
fn comm(e: &Entry) -> &[u8] {
    let argv0 = e.cmd.split(|&b| b == 0).next().unwrap_or_default();
    let base = argv0.rsplit(|&b| b == b'/').next().unwrap_or_default();
    &base[..base.len().min(15)]
}

/// `/proc/PID/stat`: Linux's 52 fields (CPU time all as user time); what
/// Veneer does not count is 0.
fn stat(info: &EnvInfo, e: &Entry) -> Vec<u8> {
    let state = match info.state {
        env_state::EXITED => 'Z',
        _ if e.stopped != 0 => 'T',
        env_state::SLEEPING | env_state::WAITING => 'S',
        env_state::STOPPED => 'T',
        _ => 'R',
    };
    let ppid = table::ppid(e);
    let pages = info.frames;
    let mut s = text(format_args!(
        "{} ({}) {state} {ppid} {} {} 0 -1 0 0 0 0 0 {} 0 {} 0 20 0 1 0 0 {} {pages} {}",
        crate::proc::pid::of(e.env),
        core::str::from_utf8(comm(e)).unwrap_or("?"),
        e.pgid,
        e.sid,
        clock_ticks(info.ticks * kinfo::clock().tick_ns),
        clock_ticks(e.children_ns),
        pages * 4096,
        u64::MAX
    ));
    // Fields 26 to 52.
    for _ in 26..=52 {
        s.extend_from_slice(b" 0");
    }
    s.push(b'\n');
    s
}
