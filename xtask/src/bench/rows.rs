//! The experiments: one line per row of the results table. To add a row,
//! add a `Row` here and make the two benchmark programs print its names
//! (`bench/linux/bench.c` plus its iteration counts in `bench/linux/init.c`,
//! and on Veneer `user/src/bin/bench.rs` for the kernel's primitives or
//! `libos/src/bin/bench_libos/` for what goes through the library OS).
//!
//! A Veneer mapping is always readable (`protect` grants or withdraws write
//! and execute), so on Veneer the virtual-memory rows protect pages against
//! writing and access them by writing; Linux protects with `PROT_NONE` and
//! reads.

/// One row of the comparison.
pub struct Row {
    /// What `cargo xtask bench NAME` selects.
    pub name: &'static str,
    pub title: &'static str,
    /// Where the experiment comes from in the papers.
    pub paper: &'static str,
    /// The Linux benchmark's name in `BENCH` lines, if Linux has one.
    pub linux: Option<&'static str>,
    /// The Veneer benchmark's name in `BENCH` lines, if Veneer has one.
    pub veneer: Option<&'static str>,
    /// How the two sides correspond when they do not do the same thing.
    pub pairing: &'static str,
    /// The issues' target for Linux / Veneer.
    pub target: Option<f64>,
    /// Debian 6.1's figure measured this way (issue 6), guest instructions
    /// per operation: the Linux column must reproduce it.
    pub reference: Option<f64>,
}

const fn row(name: &'static str, title: &'static str, paper: &'static str) -> Row {
    Row { name, title, paper, linux: None, veneer: None, pairing: "", target: None, reference: None }
}

impl Row {
    const fn linux(mut self, name: &'static str) -> Self {
        self.linux = Some(name);
        self
    }
    const fn veneer(mut self, name: &'static str) -> Self {
        self.veneer = Some(name);
        self
    }
    const fn pairing(mut self, note: &'static str) -> Self {
        self.pairing = note;
        self
    }
    const fn target(mut self, ratio: f64) -> Self {
        self.target = Some(ratio);
        self
    }
    const fn reference(mut self, insns: f64) -> Self {
        self.reference = Some(insns);
        self
    }
}

/// The calibration row: a loop of exactly this many instructions per
/// iteration, which both sides must read as that many.
pub const CALIBRATION: &str = "calib";
pub const CALIBRATION_INSNS: f64 = 1000.0;

/// The program-start rows (`libos/tests/c/startbench.c` on both sides).
const START_PAIRING: &str =
    "the same static program (libos/tests/c/startbench.c) forks, executes the Debian \
     program (dynamically linked, the same packages on both sides: Linux's initramfs, Veneer's boot root), \
     waits; Veneer: under lxrt, the program's loader and libraries mapped by the library OS";

/// The storage rows (`libos/tests/c/iobench.c` on both sides).
const IO_PAIRING: &str =
    "the same static program (libos/tests/c/iobench.c) in /data, on a fresh 256 MiB virtio-blk disk: Linux: \
     Debian's ext4 (mke2fs on the host, modules loaded by init); Veneer: C-FFS over XN, lxrt's /data (the \
     in-memory tree, each file written through C-FFS and made durable when its last writer closes it); \
     16 MiB (quick: 1 MiB) or 1,000 files (quick: 50)";

/// The I/O-intensive workload (`libos/tests/c/iotree.c`, `tree.rs`).
const TREE_PAIRING: &str =
    "the same static program (libos/tests/c/iotree.c) runs Debian's cp, gzip, tar, diff, tcc and rm (the \
     same packages on both sides) over the usr/include of libc6-dev, libstdc++-12-dev and linux-libc-dev \
     (2,284 files, 21.9 MB), in /data on a fresh 256 MiB virtio-blk disk (Linux: ext4; Veneer: C-FFS over \
     XN, lxrt's /data, on a machine of 1 GiB); each phase is one program's fork, exec and wait, then \
     sync(), counted by the plugin between markers; one run of the workload per trial; the results \
     checked outside the markers (md5 after gunzip and gzip, diff empty, the compiled program runs, \
     /data/w empty)";

const fn tree_phase(name: &'static str, title: &'static str) -> Row {
    row(name, title, "SOSP'97 §6 (issue 23)").linux(name).veneer(name).pairing(TREE_PAIRING)
}

pub const ROWS: &[Row] = &[
    row("calib", "calibration: 1000-instruction loop", "method")
        .linux("calib")
        .veneer("calib")
        .pairing("998 nops + dec + jnz per iteration; must read 1000"),
    row("null_syscall", "null system call", "SOSP'95 Fig. 6")
        .linux("getpid")
        .veneer("null_syscall")
        .pairing("a bare `syscall` instruction on both sides: Linux getpid; Veneer SELF_ID")
        .target(5.0)
        .reference(322.0),
    row("lx_getpid", "getpid via Linux personality", "SOSP'97 §7")
        .linux("getpid")
        .veneer("lx_getpid")
        .pairing("Veneer: syscall rax=39 reflected to the library's Linux personality"),
    row("vdso_clock", "clock_gettime via the vDSO", "issue 14")
        .linux("vdso_clock")
        .veneer("vdso_clock")
        .pairing("CLOCK_MONOTONIC: each side's vDSO __vdso_clock_gettime called directly, no system call"),
    row("exception", "exception round trip", "SOSP'95 Fig. 7")
        .linux("sigill")
        .veneer("exception")
        .pairing("ud2 to a user handler that skips it; Linux: SIGILL handler")
        .target(30.0)
        .reference(3725.0),
    row("pct_roundtrip", "protected control transfer, round trip", "SOSP'95 Fig. 9")
        .linux("futex")
        .veneer("pct_roundtrip")
        .pairing(
            "Linux has no protected control transfer; its row is the nearest thing, two processes handing \
             a shared futex word back and forth (wake, then wait, each way). Veneer: a synchronous PCT to an \
             echo server and its reply",
        )
        .target(50.0)
        .reference(12461.0),
    row("interposed_1", "null system call, 1 interposer passing it", "OSDI'96 §6.2")
        .veneer("interposed_1")
        .pairing(
            "Veneer only: SELF_ID in an interposed child; its parent receives the call and its result \
             (two events) and lets both through (user::nest::serve); the row less null_syscall is the cost of \
             one level of interposition",
        ),
    row("interposed_2", "null system call, 2 interposers", "OSDI'96 §6.3")
        .veneer("interposed_2")
        .pairing("Veneer only: as interposed_1 under a do-nothing nester (passer) that is itself interposed on"),
    row("memtest_0", "memtest, per 4 KiB page, no nester", "OSDI'96 §6 Fig. 10").veneer("memtest_0").pairing(MEMTEST),
    row("memtest_1", "memtest under 1 nester off its path", "OSDI'96 §6 Fig. 10").veneer("memtest_1").pairing(MEMTEST),
    row("memtest_2", "memtest under 2 nesters off its path", "OSDI'96 §6 Fig. 10").veneer("memtest_2").pairing(MEMTEST),
    row("memtest_3", "memtest under 3 nesters off its path", "OSDI'96 §6 Fig. 10").veneer("memtest_3").pairing(MEMTEST),
    row("memtest_4", "memtest under 4 nesters off its path", "OSDI'96 §6 Fig. 10").veneer("memtest_4").pairing(MEMTEST),
    row("memtest_t1", "memtest under 1 nester passing every call", "OSDI'96 §6 Fig. 9").veneer("memtest_t1").pairing(MEMTEST),
    row("memtest_t2", "memtest under 2 nesters passing every call", "OSDI'96 §6 Fig. 9").veneer("memtest_t2").pairing(MEMTEST),
    row("appel2_n1", "appel2 under 1 nester off its path", "OSDI'96 §6 Fig. 10").veneer("appel2_n1").pairing(NESTED),
    row("appel2_n2", "appel2 under 2 nesters off its path", "OSDI'96 §6 Fig. 10").veneer("appel2_n2").pairing(NESTED),
    row("appel2_n3", "appel2 under 3 nesters off its path", "OSDI'96 §6 Fig. 10").veneer("appel2_n3").pairing(NESTED),
    row("appel2_n4", "appel2 under 4 nesters off its path", "OSDI'96 §6 Fig. 10").veneer("appel2_n4").pairing(NESTED),
    row("appel2_t1", "appel2 under 1 nester passing every call", "OSDI'96 §6 Fig. 9").veneer("appel2_t1").pairing(NESTED),
    row("appel2_t2", "appel2 under 2 nesters passing every call", "OSDI'96 §6 Fig. 9").veneer("appel2_t2").pairing(NESTED),
    row("fork_n1", "forktest (fork + exit + wait) under 1 nester off its path", "OSDI'96 §6 Fig. 10").veneer("fork_n1").pairing(NESTED),
    row("fork_n2", "forktest (fork + exit + wait) under 2 nesters off its path", "OSDI'96 §6 Fig. 10").veneer("fork_n2").pairing(NESTED),
    row("fork_n3", "forktest (fork + exit + wait) under 3 nesters off its path", "OSDI'96 §6 Fig. 10").veneer("fork_n3").pairing(NESTED),
    row("fork_n4", "forktest (fork + exit + wait) under 4 nesters off its path", "OSDI'96 §6 Fig. 10").veneer("fork_n4").pairing(NESTED),
    row("fork_t1", "forktest (fork + exit + wait) under 1 nester passing every call", "OSDI'96 §6 Fig. 9").veneer("fork_t1").pairing(NESTED),
    row("fork_t2", "forktest (fork + exit + wait) under 2 nesters passing every call", "OSDI'96 §6 Fig. 9").veneer("fork_t2").pairing(NESTED),
    row("pipe_8k_n1", "readtest (pipe, 8 KiB one way) under 1 nester off its path", "OSDI'96 §6 Fig. 10").veneer("pipe_8k_n1").pairing(NESTED),
    row("pipe_8k_n2", "readtest (pipe, 8 KiB one way) under 2 nesters off its path", "OSDI'96 §6 Fig. 10").veneer("pipe_8k_n2").pairing(NESTED),
    row("pipe_8k_n3", "readtest (pipe, 8 KiB one way) under 3 nesters off its path", "OSDI'96 §6 Fig. 10").veneer("pipe_8k_n3").pairing(NESTED),
    row("pipe_8k_n4", "readtest (pipe, 8 KiB one way) under 4 nesters off its path", "OSDI'96 §6 Fig. 10").veneer("pipe_8k_n4").pairing(NESTED),
    row("pipe_8k_t1", "readtest (pipe, 8 KiB one way) under 1 nester passing every call", "OSDI'96 §6 Fig. 9").veneer("pipe_8k_t1").pairing(NESTED),
    row("pipe_8k_t2", "readtest (pipe, 8 KiB one way) under 2 nesters passing every call", "OSDI'96 §6 Fig. 9").veneer("pipe_8k_t2").pairing(NESTED),
    row("matconn", "matconn: Warshall, 2x2..128x128 via a worker", "OSDI'96 §6")
        .veneer("matconn")
        .pairing(
            "Veneer only (bench_libos/matconn.rs): per round of seven matrices, each sent through a pipe to a \
             forked worker that computes its transitive closure and sends it back",
        ),
    row("matconn_n1", "matconn under 1 nester off its path", "OSDI'96 §6 Fig. 10").veneer("matconn_n1").pairing(NESTED),
    row("matconn_n2", "matconn under 2 nesters off its path", "OSDI'96 §6 Fig. 10").veneer("matconn_n2").pairing(NESTED),
    row("matconn_n3", "matconn under 3 nesters off its path", "OSDI'96 §6 Fig. 10").veneer("matconn_n3").pairing(NESTED),
    row("matconn_n4", "matconn under 4 nesters off its path", "OSDI'96 §6 Fig. 10").veneer("matconn_n4").pairing(NESTED),
    row("matconn_t1", "matconn under 1 nester passing every call", "OSDI'96 §6 Fig. 9").veneer("matconn_t1").pairing(NESTED),
    row("matconn_t2", "matconn under 2 nesters passing every call", "OSDI'96 §6 Fig. 9").veneer("matconn_t2").pairing(NESTED),
    row("yield", "yield ping-pong, one way", "SOSP'95 §5.1")
        .linux("yield")
        .veneer("yield_pingpong")
        .pairing("Linux: sched_yield between two processes on one CPU")
        .target(20.0)
        .reference(2242.0),
    row("dirty", "dirty: query a page", "SOSP'95 Fig. 11")
        .linux("dirty")
        .veneer("dirty")
        .pairing(
            "a random page of 100: Linux pread of its /proc/self/pagemap entry, soft-dirty bit; Veneer: its \
             page-table entry's dirty bit through the kernel's read-only self-map",
        ),
    row("prot1", "(un)prot1: one page", "SOSP'95 Fig. 11")
        .linux("prot1")
        .veneer("prot1")
        .pairing("mprotect / sys::protect of one page, alternately off and on")
        .reference(2994.0),
    row("prot100", "prot100: protect 100 pages", "SOSP'95 Fig. 11")
        .linux("prot100")
        .veneer("prot100")
        .pairing("one call for 100 pages: mprotect; Veneer protect_range"),
    row("unprot100", "unprot100: unprotect 100 pages", "SOSP'95 Fig. 11")
        .linux("unprot100")
        .veneer("unprot100")
        .pairing("one call for 100 pages: mprotect; Veneer protect_range"),
    row("trap", "trap: page-protection fault", "SOSP'95 Fig. 11")
        .linux("trap")
        .veneer("trap")
        .pairing("handler unprotects; its mprotect/protect time is subtracted; Veneer: libos handler")
        .reference(4083.0),
    row("appel1", "appel1: prot1+trap+unprot", "SOSP'95 Fig. 11")
        .linux("appel1")
        .veneer("appel1")
        .pairing("per access, 100-page region")
        .target(15.0)
        .reference(28651.0),
    row("appel2", "appel2: protN+trap+unprot", "SOSP'95 Fig. 11; OSDI'96 §6")
        .linux("appel2")
        .veneer("appel2")
        .pairing("per page, 100 pages per round")
        .target(15.0)
        .reference(16673.0),
    row("pipe_1w", "pipe, 1 word one way", "SOSP'95 Fig. 10")
        .linux("pipe_1w")
        .pairing("Linux only: the issue states the pipe reference for 8 bytes")
        .reference(6445.0),
    row("pipe_1b", "pipe, 1 byte one way", "SOSP'95 Fig. 10")
        .linux("pipe_1b")
        .veneer("pipe_1b")
        .pairing("ping-pong between two processes, halved; Veneer: libos pipes called natively")
        .target(15.0),
    row("pipe_8k", "pipe, 8 KiB one way", "SOSP'95 Fig. 10")
        .linux("pipe_8k")
        .veneer("pipe_8k")
        .pairing("ping-pong between two processes, halved; Veneer: libos pipes called natively"),
    row("epoll", "epoll_wait ping-pong over a pipe, 1 byte one way", "issue 14")
        .linux("epoll")
        .veneer("epoll")
        .pairing(
            "pipe_1b with each side waiting in epoll_wait on its read end (registered once) before every \
             read, halved; Veneer: the library's epoll_wait, read and write called natively",
        ),
    row("fork", "fork + exit + wait", "SOSP'97 §5")
        .linux("fork")
        .veneer("fork")
        .pairing("fork, the child exits at once, the parent waits; Veneer: the library OS's fork through its Linux personality")
        .target(1.5)
        .reference(288362.0),
    row("thread", "thread create + join", "issue 14")
        .linux("thread")
        .veneer("thread")
        .pairing(
            "glibc's pthread_create of a thread that returns at once, then pthread_join: the same static \
             program (libos/tests/c/threadbench.c) on both sides; Veneer: under lxrt, each thread an \
             environment over the process's address space",
        ),
    row("futex_threads", "futex ping-pong between two threads", "issue 14")
        .linux("futex_threads")
        .veneer("futex_threads")
        .pairing(
            "two threads of one process hand a private futex word back and forth (wake, then wait, each \
             way), per round trip: the same static program (threadbench.c) on both sides; Veneer: lxrt's futex, \
             waiters asleep on a wakeup predicate, the waker handing the CPU to the woken thread",
        ),
    row("fork_exec", "fork + exec of a tiny static program + wait", "SOSP'97 §5")
        .linux("fork_exec")
        .veneer("fork_exec")
        .pairing(
            "fork; the child executes a program of one segment whose code is exit(0); the parent waits. \
             Veneer: the library OS's fork and execve through its Linux personality",
        )
        .reference(465097.0),
    row("spawn", "start a tiny program + wait, without fork", "SOSP'97 §5")
        .linux("vfork_exec")
        .veneer("spawn")
        .pairing(
            "Linux: vfork + execve of the same program as fork + exec, waitpid; Veneer: user::spawn loads a \
             native program that exits into a new environment (no process table, no descriptors), waits",
        ),
    row("start_true", "start dynamic /bin/true (coreutils): fork + exec + wait", "issue 26")
        .linux("start_true")
        .veneer("start_true")
        .pairing(START_PAIRING)
        .target(1.5),
    row("start_bash", "start `bash -c true`: fork + exec + wait", "issue 26")
        .linux("start_bash")
        .veneer("start_bash")
        .pairing(START_PAIRING)
        .target(1.5),
    row("start_python", "start `python3 -c pass`: fork + exec + wait", "issue 26")
        .linux("start_python")
        .veneer("start_python")
        .pairing(START_PAIRING)
        .target(1.5),
    row("shell_build", "busybox sh build-like script, 200 files, per run", "issue 26")
        .linux("shell_build")
        .veneer("shell_build")
        .pairing(
            "the same static program (libos/tests/c/startbench.c) runs busybox sh on a script that makes 200 \
             small files, then per file a command substitution (basename) and a pipeline (sed | grep) and wc, \
             then sort | uniq -c and cat | wc -c: about 1,000 forks and execs of Debian's dynamic programs",
        )
        .target(1.5),
    row("pipe_stream", "pipe streaming: 1 MiB in 64 KiB writes, per KiB", "issue 26")
        .linux("pipe_stream")
        .veneer("pipe_stream")
        .pairing(
            "the same static program (startbench.c) forks a child that writes 16 MiB (quick: 1 MiB) into a \
             pipe in 64 KiB writes while the parent reads 64 KiB at a time; per KiB moved, fork and wait \
             included",
        )
        .target(3.0),
    row("io_file", "file I/O: write+fsync, read back, unlink, per MiB", "SOSP'97 §6 (issue 23)")
        .linux("io_file")
        .veneer("io_file")
        .pairing(IO_PAIRING),
    row("small_files", "small files: create+write 1-4 KiB, sync, read, unlink, per file", "SOSP'97 §4.5 (C-FFS)")
        .linux("small_files")
        .veneer("small_files")
        .pairing(IO_PAIRING),
    row("cp_file", "cp of a 16 MiB file (plain read/write, not XCP), per MiB", "SOSP'97 §7.2 (XCP's baseline)")
        .linux("cp_file")
        .veneer("cp_file")
        .pairing(IO_PAIRING),
    row("xcp", "XCP: zero-touch copy of a 16 MiB file, per MiB", "SOSP'97 §7.2")
        .linux("cp_file")
        .veneer("xcp")
        .pairing(
            "Linux: cp_file's run (iobench.c: read/write in 64 KiB pieces from the page cache into a new file \
             on ext4, fsync); Veneer: libos/src/bin/xcp.rs over C-FFS and XN on a fresh 256 MiB disk: the \
             source's blocks (cached since it was written, as Linux's are) bound, the copy's blocks allocated, \
             the cache pages written to them with xn_copy in runs of 64 blocks, fsync (a flush, the entry, a \
             flush); the data never passes through the program; both end with the copy durable; 16 MiB \
             (quick: 1 MiB)",
        ),
    row("xcp_tree", "XCP of a tree: 64 files of 256 KiB, per file", "SOSP'97 §7.2")
        .linux("cp_tree")
        .veneer("xcp_tree")
        .pairing(
            "Linux: iobench.c's cp_tree: a new directory, each file copied with read/write in 64 KiB pieces \
             from the page cache, then one sync, on ext4; Veneer: libos/src/bin/xcp.rs: a new directory, \
             Fs::xcp_all of the 64 files with one schedule (every source block bound in disk order, every \
             copy's blocks allocated, the cache pages written with xn_copy sorted by destination), then one \
             C-FFS sync; the sources made and synced before the clock on both sides; 4 files when quick",
        ),
    row("start_disk", "start a static program from the disk: fork + exec + wait", "issue 26")
        .linux("start_disk")
        .veneer("start_disk")
        .pairing(
            "the same static program (libos/tests/c/iobench.c, 750 KiB) copies itself into /data on a fresh \
             256 MiB virtio-blk disk (Linux: ext4; Veneer: C-FFS over XN, lxrt's /data), syncs, then forks, \
             executes the copy (which exits at once) and waits; the file's blocks cached on both sides",
        ),
    row("io_tree", "I/O-intensive workload: all phases", "SOSP'97 §6 (issue 23)")
        .linux("io_tree")
        .veneer("io_tree")
        .pairing(TREE_PAIRING)
        .target(1.25),
    tree_phase("tree_cp", "workload: cp of the .tar.gz into /data"),
    tree_phase("tree_gunzip", "workload: gzip -d of the archive"),
    tree_phase("tree_untar", "workload: tar -x of the tree"),
    tree_phase("tree_cpr", "workload: cp -R of the tree"),
    tree_phase("tree_diff", "workload: diff -r of the two trees"),
    tree_phase("tree_cc", "workload: tcc builds a program against the copy"),
    tree_phase("tree_tar", "workload: tar -c of the copy"),
    tree_phase("tree_gzip", "workload: gzip of the new archive"),
    tree_phase("tree_rm", "workload: rm -rf of it all"),
    row("boot", "boot: reset to the shell's first prompt", "issue 26")
        .linux("boot")
        .veneer("boot")
        .pairing(
            "instructions executed from reset to busybox's first `/ # ` prompt on the console, counted by the \
             profile's plugin (halted time not charged), the same firmware, loader and root (the start rows' \
             packages) on both sides: Linux's kernel and initramfs with bench/linux/bootinit.c; Veneer's kernel, \
             boot archive and `lxrt -t /bin/sh` as `cargo xtask run` boots; no target",
        ),
    row("select_a", "Fig. 8 A: select before each read", "Knutsson & Gunningberg, Fig. 8")
        .linux("select_a")
        .veneer("select_a")
        .pairing(SELECT_PAIRING),
    row("select_b", "Fig. 8 B: read directly", "Knutsson & Gunningberg, Fig. 8")
        .linux("select_b")
        .veneer("select_b")
        .pairing(SELECT_PAIRING),
    row("xpc", "XPC round trip into an isolated driver", "Nooks §3.1, §5")
        .linux("getpid")
        .veneer("xpc")
        .pairing(
            "Veneer: the kernel crosses into the isolated block driver and back (its submit, refusing an \
             empty request): two page-table switches (flushing the non-global TLB entries without PCIDs, \
             which instruction counts do not show); Linux: getpid, a null system call",
        )
        .target(1.0),
    row("xpc_unisolated", "the same crossing, driver unisolated", "Nooks §5").veneer("xpc_unisolated"),
    row("blk_4k", "4 KiB disk read, isolated driver (CPU)", "Nooks §5").veneer("blk_4k").pairing(DEV_PAIRING),
    row("blk_4k_unisolated", "4 KiB disk read, unisolated driver (CPU)", "Nooks §5").veneer("blk_4k_unisolated"),
    row("blk_64k", "64 KiB sequential read, isolated driver (CPU)", "Nooks §5").veneer("blk_64k"),
    row("blk_64k_unisolated", "64 KiB sequential read, unisolated driver (CPU)", "Nooks §5")
        .veneer("blk_64k_unisolated"),
    row("net_tx", "packet transmit, isolated driver (CPU)", "Nooks §5").veneer("net_tx"),
    row("net_tx_unisolated", "packet transmit, unisolated driver (CPU)", "Nooks §5").veneer("net_tx_unisolated"),
    row("net_arp", "ARP request out, reply in, isolated driver (CPU)", "Nooks §5").veneer("net_arp"),
    row("net_arp_unisolated", "ARP request out, reply in, unisolated driver (CPU)", "Nooks §5")
        .veneer("net_arp_unisolated"),
    row("blk_4k_iommu", "4 KiB disk read, isolated, IOMMU translating (CPU)", "beyond Nooks")
        .veneer("blk_4k_iommu")
        .pairing(IOMMU_PAIRING),
    row("blk_4k_iommu_off", "4 KiB disk read, isolated, IOMMU present, translation off (CPU)", "beyond Nooks")
        .veneer("blk_4k_iommu_off"),
    row("blk_64k_iommu", "64 KiB sequential read, isolated, IOMMU translating (CPU)", "beyond Nooks")
        .veneer("blk_64k_iommu"),
    row("blk_64k_iommu_off", "64 KiB sequential read, IOMMU translation off (CPU)", "beyond Nooks")
        .veneer("blk_64k_iommu_off"),
    row("net_tx_iommu", "packet transmit, isolated, IOMMU translating (CPU)", "beyond Nooks").veneer("net_tx_iommu"),
    row("net_tx_iommu_off", "packet transmit, IOMMU translation off (CPU)", "beyond Nooks")
        .veneer("net_tx_iommu_off"),
    row("net_arp_iommu", "ARP request out, reply in, IOMMU translating (CPU)", "beyond Nooks")
        .veneer("net_arp_iommu"),
    row("net_arp_iommu_off", "ARP request out, reply in, IOMMU translation off (CPU)", "beyond Nooks")
        .veneer("net_arp_iommu_off"),
    row("ep_tx", "packet sent through an endpoint's ring (CPU per frame)", "SOSP'97 §5.2.1; issue 24")
        .linux("pkt_tx")
        .veneer("ep_tx")
        .pairing(NET_TX_PAIRING),
    row("ep_ping_1", "ICMP echo through an endpoint, 1 filter (CPU per round trip)", "SOSP'95 §3.2; DPF")
        .linux("ping_1")
        .veneer("ep_ping_1")
        .pairing(NET_PAIRING),
    row("ep_ping_10", "ICMP echo through an endpoint, 10 filters", "SOSP'95 §3.2; DPF")
        .linux("ping_10")
        .veneer("ep_ping_10")
        .pairing(NET_PAIRING),
    row("ep_ping_100", "ICMP echo through an endpoint, 100 filters", "SOSP'95 §3.2; DPF")
        .linux("ping_100")
        .veneer("ep_ping_100")
        .pairing(NET_PAIRING),
    row("ep_ping_1000", "ICMP echo through an endpoint, 1000 filters", "SOSP'95 §3.2; DPF")
        .linux("ping_1000")
        .veneer("ep_ping_1000")
        .pairing(NET_PAIRING),
    row("http_0", "HTTP GET of a 0 B file from nginx over 127.0.0.1 (per request)", "SOSP'97 §7.3 (not Cheetah)")
        .linux("http_0")
        .veneer("http_0")
        .pairing(HTTP_PAIRING),
    row("http_1k", "HTTP GET of a 1 KiB file from nginx", "SOSP'97 §7.3 (not Cheetah)")
        .linux("http_1k")
        .veneer("http_1k")
        .pairing(HTTP_PAIRING),
    row("http_10k", "HTTP GET of a 10 KiB file from nginx", "SOSP'97 §7.3 (not Cheetah)")
        .linux("http_10k")
        .veneer("http_10k")
        .pairing(HTTP_PAIRING),
    row("http_100k", "HTTP GET of a 100 KiB file from nginx", "SOSP'97 §7.3 (not Cheetah)")
        .linux("http_100k")
        .veneer("http_100k")
        .pairing(HTTP_PAIRING),
    row("cheetah_0", "HTTP GET of a 0 B file: Veneer's Cheetah vs Linux's nginx (per request)", "SOSP'97 §7.3")
        .linux("http_0")
        .veneer("cheetah_0")
        .pairing(CHEETAH_PAIRING),
    row("cheetah_1k", "HTTP GET of a 1 KiB file: Cheetah vs nginx", "SOSP'97 §7.3")
        .linux("http_1k")
        .veneer("cheetah_1k")
        .pairing(CHEETAH_PAIRING),
    row("cheetah_10k", "HTTP GET of a 10 KiB file: Cheetah vs nginx", "SOSP'97 §7.3")
        .linux("http_10k")
        .veneer("cheetah_10k")
        .pairing(CHEETAH_PAIRING),
    row("cheetah_100k", "HTTP GET of a 100 KiB file: Cheetah vs nginx", "SOSP'97 §7.3")
        .linux("http_100k")
        .veneer("cheetah_100k")
        .pairing(CHEETAH_PAIRING),
];

const CHEETAH_PAIRING: &str =
    "per request, the HTTP rows' client (libos/tests/c/httpbench.c: a connection per request, status, length \
     and bytes checked) over 127.0.0.1, the whole processor charged; Linux: the best server it has here, Debian's \
     nginx (one worker, epoll, sendfile) over its kernel's TCP, the same measurement as http_N; Veneer: Cheetah \
     (libos/tests/c/cheetah.c publishes the files into the library stack's Cheetah fast path, \
     netstack/src/cheetah/: responses sent from the file cache with stored chunk checksums, the request's ACK \
     and the FIN merged into the response), the client on the library's smoltcp stack under lxrt";

const HTTP_PAIRING: &str =
    "per request, the same static client (libos/tests/c/httpbench.c: connect, GET with Connection: close, read \
     to the end, status and length checked) and the same Debian nginx (one worker, epoll, sendfile) over \
     127.0.0.1, the whole processor charged (client, server, TCP/IP, kernel), halted time left out on both \
     sides; Linux: its kernel's TCP over lo; Veneer: under lxrt, the library's smoltcp stack shared by both \
     processes (loopback never reaches the NIC or the filters). Cheetah's tricks are not in it: a baseline";

const NET_TX_PAIRING: &str =
    "per frame, the same prebuilt UDP frame (10.0.2.15:4000 to the gateway's port 9, 64 bytes) to the NIC on \
     QEMU's user network: Veneer (libos/src/bin/netbench.rs) writes it into the endpoint's transmit ring and \
     hands the ring over in batches (net_tx: copied out, checked by its mirror against the endpoint's filters, \
     given to the driver); Linux (bench/linux/netbench.c) one sendto per frame on a packet socket (qdisc, \
     virtio-net); time halted waiting for the device left out on both sides";

const NET_PAIRING: &str =
    "per ICMP echo round trip with QEMU's gateway through the NIC, the time halted waiting for QEMU left out \
     on both sides (Veneer: Clock::halted_tsc; Linux: cpu 0's idle time from /proc/timer_list); Veneer \
     (libos/src/bin/netbench.rs): the request built in the program and sent through the endpoint's ring, the \
     reply demultiplexed by the merged filters into the receive ring, with N filters that differ only in the \
     ICMP identifier (one hash table of N entries); Linux (bench/linux/netbench.c): sendto and recv on an ICMP \
     socket, N ICMP sockets bound to N identifiers (the reply found in the kernel's ping hash table)";

const IOMMU_PAIRING: &str =
    "as the rows above, on q35 with intel-iommu (devbench iommu): translating, each lent page is mapped \
     for the device at submit and unmapped (with an IOTLB invalidation) at completion; _off: the same \
     machine and binaries with iommu=off";

const MEMTEST: &str =
    "Veneer only (nest/src/bin/memtest.rs): 1,024 frames allocated and mapped, four write/read \
     passes; under N limiter nesters (a quota each, waiting in the kernel: not on its path; _tN: each also interposing \
     and passing every event); per page";

const NESTED: &str = "Veneer only: bench_libos's row of the same name (before the suffix) booted as \
     `init=limiter @N bench_libos` (xtask/src/bench/veneer.rs, NESTED): N limiter nesters around the library OS, \
     each giving its subtree a quota and waiting in the kernel (_tN: each also interposing and passing every event)";

const DEV_PAIRING: &str =
    "from ring 3 (user/src/bin/devbench.rs) through the device calls (blk_read, net_send, net_recv; \
     completion words, sleeping on a wakeup predicate): instructions per operation with the time spent \
     halted waiting for the device (Clock::halted_tsc) left out; the same driver images, isolated or not \
     (isolation=off); no Linux side";

const SELECT_PAIRING: &str = "per round trip: whole experiment (5 processes x 4,800 200-byte + 4,800 5-byte \
     messages, each through its own forked cat; forks and waits included) / messages; Linux: bench.c \
     with select(2); Veneer: bench_libos, libos pipes and native::select over wakeup predicates";

/// A comparison within each side: row `a`'s figure over row `b`'s.
pub struct Within {
    pub title: &'static str,
    pub a: &'static str,
    pub b: &'static str,
    /// The target for Veneer's a / b (at most).
    pub veneer_max: f64,
}

pub const WITHIN: &[Within] = &[
    Within {
        title: "issue 24: demultiplexing with 1,000 filters / 1 (ICMP echo round trip; goal at most 1.2x)",
        a: "ep_ping_1000",
        b: "ep_ping_1",
        veneer_max: 1.2,
    },
    Within {
        title: "Fig. 8 select overhead (A / B; ExOS >6x, Linux ~1.2x)",
        a: "select_a",
        b: "select_b",
        veneer_max: 1.2,
    },
    Within {
        title: "Nooks §5: 64 KiB read, isolated / unisolated driver (isolated at least 98% as cheap)",
        a: "blk_64k",
        b: "blk_64k_unisolated",
        veneer_max: 1.0 / 0.98,
    },
];
