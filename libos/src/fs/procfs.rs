//! `/proc`, as much of Linux's as `ps`, `pidof`, `free` and `uptime` read:
//! a directory per process holding `stat`, `cmdline` and `comm`, `self`,
//! `meminfo`, `uptime` and the idle lines of `timer_list`. The process
//! table (`proc/table.rs`) is the truth; this is a view of it, brought up to
//! date in the shared file system whenever a path under `/proc` is resolved
//! (with the big lock held, so the caller sees one consistent snapshot).
//! Directories of processes that are still there keep their place, so a
//! reader walking `/proc` while others open files in it sees each once.

use super::node::{self, Ino};
use super::procfile::{comm, put, text};
use super::{dir, ROOT, S_IFDIR, S_IFLNK, S_IFREG};
use crate::errno::Errno;
use crate::errno::ENOENT;
use crate::proc::table::{self, Entry};
use crate::time::clock_ticks;
use abi::tables::{env_state, EnvInfo};
use alloc::vec::Vec;
use user::kinfo;

/// `/proc`, brought up to date whenever a path under it is resolved
/// (`mount`, registered at start).
pub static PROC: super::mount::Synthetic = super::mount::Synthetic { at: b"/proc", refresh };

/// Brings up to date the part of `/proc` a path names (`rest`: the path
/// below `/proc`). Each resolution runs with the big lock held, so it does
/// only what the path needs: `ps` resolves `/proc/PID/...` for every
/// process, and rebuilding every process's files for each made its run
/// O(processes^2) under the lock (1.4 s beside 35 processes, issue 27).
/// `/proc` itself (a listing) brings every process's files up to date,
/// so a reader that opens them relative to the directory sees this
/// snapshot; `/proc/PID` and `/proc/self` that process's; any other name
/// that one of the files that are not a process's (`machine`).
pub fn refresh(rest: &[u8]) -> Result<(), Errno> {
    let proc_dir = proc_dir()?;
    let first = rest.split(|&c| c == b'/').find(|p| !p.is_empty()).unwrap_or(b"");
    let me = text(format_args!("{}", crate::proc::pid()));
    if first.is_empty() {
        processes(proc_dir)?;
        return machine(proc_dir, &me, None);
    }
    if first == b"self" {
        put(proc_dir, b"self", S_IFLNK | 0o777, &me)?;
        return process(proc_dir, crate::proc::pid());
    }
    match core::str::from_utf8(first).ok().and_then(|n| n.parse::<u32>().ok()) {
        Some(pid) if first.iter().all(u8::is_ascii_digit) => process(proc_dir, pid),
        _ => machine(proc_dir, &me, Some(first)),
    }
}

/// The pid whose `/proc/PID` directory is inode `ino` (a directory
/// records its parent; its name there is the pid), if it is one.
pub fn pid_of_dir(ino: Ino) -> Option<u32> {
    let proc_dir = dir::lookup(ROOT, b"proc")?;
    if ino == proc_dir || node::get(ino).parent != proc_dir || !node::is_dir(ino) {
        return None;
    }
    let name = dir::with_entries(proc_dir, |es| es.iter().find(|e| e.ino == ino).map(|e| e.name().to_vec()))?;
    core::str::from_utf8(&name).ok().filter(|n| n.bytes().all(|c| c.is_ascii_digit()))?.parse().ok()
}

/// `/proc` itself (the boot archive's empty directory becomes procfs's).
fn proc_dir() -> Result<Ino, Errno> {
    match dir::lookup(ROOT, b"proc") {
        Some(d) => {
            node::update(d, |n| n.fs = node::FS_PROC);
            Ok(d)
        }
        None => {
            let d = node::alloc_on(S_IFDIR | 0o555, node::FS_PROC)?;
            dir::add(ROOT, b"proc", d)?;
            Ok(d)
        }
    }
}

/// A directory per process, each brought up to date; those of processes
/// that are gone removed.
fn processes(proc_dir: Ino) -> Result<(), Errno> {
    let live: Vec<(EnvInfo, Entry)> = table::all().map(|(i, e)| (i, *e)).collect();
    let names: Vec<Vec<u8>> =
        live.iter().map(|(i, _)| text(format_args!("{}", crate::proc::pid::of(i.id)))).collect();
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
        files(proc_dir, name, info, entry)?;
    }
    if let Some(me) = dir::lookup(proc_dir, &text(format_args!("{}", crate::proc::pid()))) {
        own(me)?;
    }
    Ok(())
}

/// Process `pid`'s directory brought up to date, or removed if it is gone.
fn process(proc_dir: Ino, pid: u32) -> Result<(), Errno> {
    let name = text(format_args!("{pid}"));
    let found =
        crate::proc::pid::env(pid).and_then(|env| Some((kinfo::env_by_id(env as u64)?, *table::get(env)?)));
    let Some((info, entry)) = found.filter(|(i, _)| i.state != env_state::FREE) else {
        remove_tree(proc_dir, &name);
        return Ok(());
    };
    let d = files(proc_dir, &name, &info, &entry)?;
    if pid == crate::proc::pid() {
        own(d)?;
    }
    Ok(())
}

/// The files every process's directory holds (made if need be).
fn files(proc_dir: Ino, name: &[u8], info: &EnvInfo, entry: &Entry) -> Result<Ino, Errno> {
    let d = match dir::lookup(proc_dir, name) {
        Some(d) => d,
        None => {
            let d = node::alloc_on(S_IFDIR | 0o555, node::FS_PROC)?;
            dir::add(proc_dir, name, d)?;
            d
        }
    };
    put(d, b"stat", S_IFREG | 0o444, &stat(info, entry))?;
    put(d, b"cmdline", S_IFREG | 0o444, cmdline(entry))?;
    let mut comm = comm(entry).to_vec();
    comm.push(b'\n');
    put(d, b"comm", S_IFREG | 0o444, &comm)?;
    put(d, b"status", S_IFREG | 0o444, &super::procstatus::status(info, entry, None))?;
    Ok(d)
}

/// The files that are not a process's, and `self` (`me`): only the one
/// named `only` when a path below it is resolved (each is made afresh, and
/// `/proc/stat` and `/proc/loadavg` scan the whole environment table:
/// `shell_build`'s programs resolved a path under `/proc` about once per
/// start, and making them all had cost a third of the row), all of them
/// for a listing of `/proc`.
fn machine(proc_dir: Ino, me: &[u8], only: Option<&[u8]>) -> Result<(), Errno> {
    let want = |name: &[u8]| only.is_none_or(|o| o == name);
    put(proc_dir, b"self", S_IFLNK | 0o777, me)?;
    if want(b"sys") {
        super::procsys::refresh(proc_dir)?;
    }
    if want(b"mounts") {
        put(proc_dir, b"mounts", S_IFREG | 0o444, &mounts())?;
    }
    if want(b"cpuinfo") {
        put(proc_dir, b"cpuinfo", S_IFREG | 0o444, &cpuinfo())?;
    }
    if want(b"meminfo") {
        put(proc_dir, b"meminfo", S_IFREG | 0o444, &meminfo())?;
    }
    if want(b"stat") {
        put(proc_dir, b"stat", S_IFREG | 0o444, &super::procload::stat())?;
    }
    if want(b"loadavg") {
        put(proc_dir, b"loadavg", S_IFREG | 0o444, &super::procload::loadavg())?;
    }
    if want(b"net") {
        let net = match dir::lookup(proc_dir, b"net") {
            Some(d) => d,
            None => {
                let d = node::alloc(S_IFDIR | 0o555)?;
                dir::add(proc_dir, b"net", d)?;
                d
            }
        };
        put(net, b"dev", S_IFREG | 0o444, &net_dev())?;
    }
    if want(b"timer_list") {
        put(proc_dir, b"timer_list", S_IFREG | 0o444, &timer_list())?;
    }
    if want(b"uptime") {
        let up = crate::time::now_ns();
        let uptime =
            text(format_args!("{}.{:02} 0.00\n", up / 1_000_000_000, up % 1_000_000_000 / 10_000_000));
        put(proc_dir, b"uptime", S_IFREG | 0o444, &uptime)?;
    }
    Ok(())
}

/// What only the calling process can tell about itself, in its directory
/// `d`: `fd/N` (a symbolic link per descriptor, to what it is open on),
/// `exe` and `maps`. Another process's directory keeps what that process
/// last wrote there.
fn own(d: Ino) -> Result<(), Errno> {
    remove_tree(d, b"fd");
    let fds = node::alloc_on(S_IFDIR | 0o500, node::FS_PROC)?;
    dir::add(d, b"fd", fds)?;
    for n in crate::fd::all() {
        let Ok(f) = crate::fd::get_raw(n) else { continue };
        // SAFETY: the descriptor keeps the file live; no other reference to it here.
        let target = describe(unsafe { crate::fd::file(&f) });
        put(fds, &text(format_args!("{n}")), S_IFLNK | 0o700, &target)?;
    }
    put(d, b"exe", S_IFLNK | 0o777, &crate::proc::exe())?;
    let me = crate::proc::table::mine();
    if let Some(info) = user::kinfo::env_by_id(me.env as u64) {
        let own = super::procstatus::Own::mine();
        put(d, b"status", S_IFREG | 0o444, &super::procstatus::status(&info, &me, Some(&own)))?;
    }
    put(d, b"maps", S_IFREG | 0o444, &maps())
}

/// The `/proc/self/fd` directory's inode, if it has been made.
pub fn self_fd_dir() -> Option<Ino> {
    let proc_dir = dir::lookup(ROOT, b"proc")?;
    let me = dir::lookup(proc_dir, &text(format_args!("{}", crate::proc::pid())))?;
    dir::lookup(me, b"fd")
}

/// The descriptor `path` names when it leads, through symbolic links
/// (followed only if `follow`), to an entry of this process's
/// `/proc/PID/fd` (`/dev/fd/3`, `/dev/stdin`, `/proc/self/fd/0`): opening
/// it opens that descriptor's file, as Linux does for pipes and the
/// terminal. ENOENT for an entry that is not open.
pub fn fd_alias(cwd: Ino, path: &[u8], follow: bool) -> Result<Option<i64>, Errno> {
    let (mut cwd, mut path) = (cwd, path.to_vec());
    for _ in 0..40 {
        super::mount::refresh_for(&path)?;
        let Ok((d, name)) = super::path::parent(cwd, &path) else {
            return Ok(None);
        };
        // (A number first: most opens never look for the directory.)
        let number = core::str::from_utf8(&name).ok().and_then(|s| s.parse::<i64>().ok());
        if let Some(n) = number.filter(|_| follow && Some(d) == self_fd_dir()) {
            return crate::fd::get_raw(n).map(|_| Some(n)).map_err(|_| ENOENT);
        }
        let Some(ino) = dir::lookup(d, &name) else {
            return Ok(None);
        };
        let n = node::get(ino);
        if !follow || n.mode & super::S_IFMT != S_IFLNK {
            return Ok(None);
        }
        (cwd, path) = (d, node::bytes(&n).to_vec());
    }
    Ok(None)
}

/// What a `/proc/PID/fd` link says a descriptor is open on, as Linux
/// writes it.
fn describe(f: &crate::obj::File) -> Vec<u8> {
    use crate::obj::Kind;
    let name: &[u8] = match f.kind {
        Kind::Regular | Kind::Dir | Kind::Path | Kind::PtyMaster | Kind::PtySlave => return path_of(f.ino),
        Kind::PipeRead | Kind::PipeWrite => {
            let (ring, _) = crate::obj::pipe::wait_info(f);
            return text(format_args!("pipe:[{}]", ring % 1_000_000_007));
        }
        Kind::Console => b"/dev/console",
        Kind::Null => b"/dev/null",
        Kind::Zero => b"/dev/zero",
        Kind::Full => b"/dev/full",
        Kind::Random => b"/dev/urandom",
        Kind::Epoll => b"anon_inode:[eventpoll]",
        Kind::EventFd => b"anon_inode:[eventfd]",
        Kind::Inotify => b"anon_inode:inotify",
        Kind::TimerFd => b"anon_inode:[timerfd]",
        Kind::SignalFd => b"anon_inode:[signalfd]",
        Kind::PidFd => b"anon_inode:[pidfd]",
        Kind::Socket | Kind::Inet | Kind::Netlink => {
            return text(format_args!("socket:[{}]", f.obj.addr() % 1_000_000_007))
        }
    };
    name.to_vec()
}

/// A path naming inode `ino`: a directory's own, or for a file the first
/// name found for it walking the tree from the root.
fn path_of(ino: Ino) -> Vec<u8> {
    if node::is_dir(ino) {
        return super::path::absolute(ino);
    }
    fn find(d: Ino, ino: Ino, depth: u32, at: &mut Vec<u8>) -> bool {
        let entries: Vec<(Vec<u8>, Ino)> =
            dir::with_entries(d, |es| es.iter().map(|e| (e.name().to_vec(), e.ino)).collect());
        for (name, i) in entries {
            let len = at.len();
            at.push(b'/');
            at.extend_from_slice(&name);
            if i == ino || (depth > 0 && node::is_dir(i) && name != b"proc" && find(i, ino, depth - 1, at)) {
                return true;
            }
            at.truncate(len);
        }
        false
    }
    let mut at = Vec::new();
    if find(ROOT, ino, 16, &mut at) {
        at
    } else {
        b"/".to_vec()
    }
}

/// `/proc/self/maps`: the program's regions (anonymous: the library keeps
/// no file names for them).
fn maps() -> Vec<u8> {
    let mut s = Vec::new();
    for r in crate::vm::regions() {
        let p = |bit: u32, c: char| if r.prot & bit != 0 { c } else { '-' };
        s.extend_from_slice(&text(format_args!(
            "{:08x}-{:08x} {}{}{}p 00000000 00:00 0\n",
            r.start,
            r.end,
            p(crate::vm::R, 'r'),
            p(crate::vm::W, 'w'),
            p(crate::vm::X, 'x')
        )));
    }
    s
}

/// `/proc/mounts`: the root, and `/proc`, `/sys` and `/dev` in it. An
/// in-memory root is `tmpfs` (Linux's "rootfs", the initramfs's, is one
/// `df` and `mount` tools leave out); the disk's C-FFS as the root has
/// `/tmp` in memory over it (`boot::root_is_disk`).
fn mounts() -> Vec<u8> {
    let root: &[u8] = match super::boot::root_is_disk() {
        true => b"/dev/vda / cffs rw 0 0\ntmpfs /tmp tmpfs rw 0 0\n",
        false => b"tmpfs / tmpfs rw 0 0\n",
    };
    [root, b"proc /proc proc rw 0 0\nsysfs /sys sysfs rw 0 0\ndevtmpfs /dev devtmpfs rw 0 0\n"].concat()
}

/// `/proc/cpuinfo`: one processor, named by the CPU itself (`cpuid`).
fn cpuinfo() -> Vec<u8> {
    use core::arch::x86_64::__cpuid;
    let v = __cpuid(0);
    let mut vendor = [0u8; 12];
    vendor[..4].copy_from_slice(&v.ebx.to_le_bytes());
    vendor[4..8].copy_from_slice(&v.edx.to_le_bytes());
    vendor[8..].copy_from_slice(&v.ecx.to_le_bytes());
    let mut model = [0u8; 48];
    for (i, leaf) in (0x8000_0002u32..=0x8000_0004).enumerate() {
        let r = __cpuid(leaf);
        for (j, w) in [r.eax, r.ebx, r.ecx, r.edx].iter().enumerate() {
            model[16 * i + 4 * j..16 * i + 4 * j + 4].copy_from_slice(&w.to_le_bytes());
        }
    }
    let model = core::str::from_utf8(&model).unwrap_or("?").trim_end_matches('\0').trim();
    text(format_args!(
        "processor\t: 0\nvendor_id\t: {}\nmodel name\t: {model}\ncpu cores\t: 1\n\n",
        core::str::from_utf8(&vendor).unwrap_or("?")
    ))
}

/// `/proc/net/dev` (what `ifconfig` lists), in Linux's layout.
fn net_dev() -> Vec<u8> {
    let mut out = b"Inter-|   Receive                                                |  Transmit\n face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n".to_vec();
    for i in crate::net::stack::interfaces() {
        let c = i.counters;
        out.extend_from_slice(&text(format_args!(
            "{:>6}:{:>8} {:>7} {:>4} {:>4} {:>4} {:>5} {:>10} {:>9} {:>8} {:>7} {:>4} {:>4} {:>4} {:>5} {:>7} {:>10}\n",
            core::str::from_utf8(i.name).unwrap_or("?"),
            c.rx_bytes, c.rx_frames, 0, 0, 0, 0, 0, 0, c.tx_bytes, c.tx_frames, 0, 0, 0, 0, 0, 0
        )));
    }
    out
}

/// `/proc/timer_list`, only the lines that say how long the processor was
/// idle, in Linux's form: the kernel's halted time (`Clock::halted_tsc`,
/// halts a device's interrupt ended) in nanoseconds. The benchmarks'
/// `httpbench` leaves it out on both systems.
fn timer_list() -> Vec<u8> {
    let c = kinfo::clock();
    let idle = (c.halted_tsc as u128 * c.tsc_ns_mult as u128) >> 32;
    text(format_args!("cpu: 0\n  .idle_sleeptime : {idle} nsecs\n  .iowait_sleeptime: 0 nsecs\n"))
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
        "{} ({}) {state} {ppid} {} {} 0 -1 0 0 0 0 0 {} 0 {} 0 {} {} 1 0 0 {} {pages} {}",
        crate::proc::pid::of(e.env),
        core::str::from_utf8(comm(e)).unwrap_or("?"),
        e.pgid,
        e.sid,
        clock_ticks(info.ticks * kinfo::clock().tick_ns),
        clock_ticks(e.children_ns),
        20 + i32::from(e.nice),
        e.nice,
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
