/* The I/O-intensive workload of paper 000 §6 (issue 23 §3) on both
 * sides: one static glibc program, which the Linux benchmark initramfs
 * holds as /bin/iotree (over ext4 on a virtio-blk disk, mounted at /data)
 * and Veneer runs under lxrt from /bench/tree.sh (over C-FFS on its XN
 * disk, lxrt's /data). It runs unmodified Debian programs (coreutils,
 * gzip, tar, diffutils: the same packages on both sides) over a real
 * source tree, the headers of a Debian package, which the harness packs
 * on the host as /bench/tree.tar.gz with the md5 of the uncompressed
 * archive in /bench/tree.md5, and this program's own source as
 * /bench/prog.c (xtask/src/bench/tree.rs).
 *
 * `iotree io_tree 1 TRIALS` runs, per trial, in a fresh /data/w, the
 * paper's steps (its Table 1: cp, gunzip, pax, cp, diff, gcc, pax, gzip,
 * rm), each one phase:
 *
 *   tree_cp      cp the compressed archive from the root into /data/w
 *   tree_gunzip  gzip -d it                   (then md5sum: same bytes?)
 *   tree_untar   tar -xf it into a/
 *   tree_cpr     cp -R a b
 *   tree_diff    diff -r a b                  (must exit 0, print nothing)
 *   tree_cc      tcc compiles /bench/prog.c against the headers in b/
 *                and links it             (then ./prog calib must run)
 *   tree_tar     tar -cf out.tar b            (then its md5 is taken)
 *   tree_gzip    gzip out.tar                 (then gzip -dc | md5sum)
 *   tree_rm      rm -rf of everything         (then /data/w must be empty)
 *
 * and prints `BENCH PHASE 1 TOTAL` for each phase, then `BENCH io_tree 1
 * TOTAL` (their sum), TOTAL in time-stamp counts. Each phase is the
 * program's fork, exec and wait, then sync(), between two markers
 * (`xchg %bx,%bx`): the harness counts the guest instructions executed
 * between them with its QEMU plugin (time under -icount also advances
 * while a guest waits, halted, for its disk) and makes io_tree the sum
 * of the phases' counts. The checks run outside the markers; any that
 * fails is the row's failure (`BENCH-FAIL`). `iotree calib N TRIALS` is
 * the harness's calibration loop.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "marks.h"

/* Where it works and where the archive is (other places only to try it
 * on a host: -DWORK=... -DBENCH=...). */
#ifndef WORK
#define WORK "/data/w"
#endif
#ifndef BENCH
#define BENCH "/bench"
#endif

static char *const env[] = { "PATH=/usr/bin:/bin", "HOME=/", "LC_ALL=C",
			     "TZ=UTC", NULL };

/* Forks and executes argv with standard input `in` and output `out`
 * (-1: inherited); the child's pid, or -1. */
static pid_t spawn(char *const argv[], int in, int out)
{
	pid_t pid = fork();
	if (pid == 0) {
		if ((in >= 0 && dup2(in, 0) < 0) ||
		    (out >= 0 && dup2(out, 1) < 0))
			_exit(126);
		execve(argv[0], argv, env);
		_exit(127);
	}
	return pid;
}

/* 0 if `pid` exited with status 0. */
static int reap(pid_t pid)
{
	int status;
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static int run(char *const argv[])
{
	return reap(spawn(argv, -1, -1));
}

/* Runs `argv` with standard input `in` (-1: inherited) and its output to
 * the file `path`; 0 if it exited with 0. */
static int run_from_to(char *const argv[], int in, const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	int r = reap(spawn(argv, in, fd));
	return close(fd) || r ? -1 : 0;
}

static int run_to(char *const argv[], const char *path)
{
	return run_from_to(argv, -1, path);
}

/* The first `n` bytes of the file `path` into `buf` (NUL-terminated);
 * the number read, or -1. */
static long slurp(const char *path, char *buf, long n)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	long got = read(fd, buf, n - 1);
	close(fd);
	if (got < 0)
		return -1;
	buf[got] = 0;
	return got;
}

/* `gzip -dc GZ | md5sum` has the digest at the start of the file `sum`. */
static int unzips_to(const char *gz, const char *sum)
{
	char want[64], got[64];
	int p[2];
	if (slurp(sum, want, sizeof want) < 32 || pipe2(p, O_CLOEXEC))
		return -1;
	pid_t z = spawn((char *const[]){ "/bin/gzip", "-dc", (char *)gz, NULL },
			-1, p[1]);
	close(p[1]);
	int r = run_from_to((char *const[]){ "/usr/bin/md5sum", NULL }, p[0],
			    "/tmp/iotree.sum");
	close(p[0]);
	if (reap(z) || r || slurp("/tmp/iotree.sum", got, sizeof got) < 32)
		return -1;
	return memcmp(want, got, 32) ? -1 : 0;
}

/* Whether the directory `path` holds nothing. */
static int empty(const char *path)
{
	DIR *d = opendir(path);
	if (!d)
		return -1;
	struct dirent *e;
	int n = 0;
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n ? -1 : 0;
}

#define PHASES 9
static const char *const phase[PHASES] = {
	"tree_cp",   "tree_gunzip", "tree_untar", "tree_cpr", "tree_diff",
	"tree_cc",   "tree_tar",    "tree_gzip",  "tree_rm",
};

/* Debian's tcc and its own headers (stddef.h, stdarg.h ...). */
#define TCC "/usr/bin/tcc"
#define TCC_INCLUDE "/usr/lib/x86_64-linux-gnu/tcc/include"

/* The disk's requests (reads, writes and flushes) and the bytes they
 * moved, from /sys/block/vda/stat (Linux's, or lxrt's from the kernel's
 * counts): columns 1, 3, 5, 7 and 16. Zero without one. */
struct io {
	unsigned long long reqs, bytes;
};

static struct io disk_io(void)
{
	struct io io = { 0, 0 };
	char text[512];
	unsigned long long c[17] = { 0 };
	if (slurp("/sys/block/vda/stat", text, sizeof text) <= 0)
		return io;
	char *p = text;
	for (int i = 0; i < 17; i++)
		c[i] = strtoull(p, &p, 10);
	io.reqs = c[0] + c[4] + c[15];
	io.bytes = (c[2] + c[6]) * 512;
	return io;
}

/* Each phase's disk requests and bytes, printed with its figures as
 * `IO PHASE REQUESTS BYTES` (read outside the markers). */
static struct io io_of[PHASES];

/* Runs phase `i` between markers; its time-stamp count, 0 if it failed. */
static uint64_t timed(int i, char *const argv[], const char *out)
{
	struct io before = disk_io();
	uint64_t t = now();
	mark();
	int r = out ? run_to(argv, out) : run(argv);
	sync();
	mark();
	struct io after = disk_io();
	io_of[i].reqs = after.reqs - before.reqs;
	io_of[i].bytes = after.bytes - before.bytes;
	if (r) {
		printf("BENCH-FAIL io_tree %s exited with an error\n", phase[i]);
		return 0;
	}
	return now() - t;
}

/* Fails the trial with a reason when `bad`. */
#define CHECK(bad, why)                                         \
	do {                                                    \
		if (bad) {                                      \
			printf("BENCH-FAIL io_tree %s\n", why); \
			return -1;                              \
		}                                               \
	} while (0)

static int workload(uint64_t t[PHASES])
{
	char diff[8];
	CHECK(mkdir(WORK, 0755) || chdir(WORK) || mkdir("a", 0755),
	      "cannot make " WORK);
	t[0] = timed(0, (char *const[]){ "/bin/cp", BENCH "/tree.tar.gz", "tree.tar.gz", NULL }, 0);
	t[1] = t[0] ? timed(1, (char *const[]){ "/bin/gzip", "-d", "tree.tar.gz", NULL }, 0) : 0;
	CHECK(!t[1], "cp or gunzip failed");
	CHECK(run((char *const[]){ "/usr/bin/md5sum", "-c", "--status", BENCH "/tree.md5", NULL }),
	      "gunzip did not restore the archive's bytes (md5sum -c)");
	t[2] = timed(2, (char *const[]){ "/bin/tar", "-xf", "tree.tar", "-C", "a", NULL }, 0);
	t[3] = t[2] ? timed(3, (char *const[]){ "/bin/cp", "-R", "a", "b", NULL }, 0) : 0;
	t[4] = t[3] ? timed(4, (char *const[]){ "/usr/bin/diff", "-r", "a", "b", NULL }, "/tmp/iotree.diff") : 0;
	CHECK(!t[4], "tar -x, cp -R or diff -r failed (diff exits 1 when the copies differ)");
	CHECK(slurp("/tmp/iotree.diff", diff, sizeof diff) != 0, "diff -r of the copies printed something");
	t[5] = timed(5,
		     (char *const[]){ TCC, "-nostdinc", "-I", TCC_INCLUDE, "-I", "b/include/x86_64-linux-gnu",
				      "-I", "b/include", "-o", "prog", BENCH "/prog.c", NULL },
		     0);
	CHECK(!t[5], "tcc failed");
	CHECK(run_to((char *const[]){ "./prog", "calib", "1000", "1", NULL }, "/tmp/iotree.out") ||
		      slurp("/tmp/iotree.out", diff, sizeof diff) < 7 || memcmp(diff, "BENCH c", 7),
	      "the program tcc built does not run");
	t[6] = timed(6, (char *const[]){ "/bin/tar", "-cf", "out.tar", "b", NULL }, 0);
	CHECK(!t[6], "tar -c failed");
	CHECK(run_to((char *const[]){ "/usr/bin/md5sum", "out.tar", NULL }, "/tmp/iotree.md5"),
	      "md5sum of out.tar failed");
	t[7] = timed(7, (char *const[]){ "/bin/gzip", "out.tar", NULL }, 0);
	CHECK(!t[7], "gzip failed");
	CHECK(unzips_to("out.tar.gz", "/tmp/iotree.md5"), "gzip -dc of out.tar.gz does not give out.tar's bytes");
	t[8] = timed(8, (char *const[]){ "/bin/rm", "-rf", "a", "b", "prog", "tree.tar", "out.tar.gz", NULL }, 0);
	CHECK(!t[8], "rm -rf failed");
	CHECK(empty("."), "rm -rf left something in " WORK);
	CHECK(chdir("/") || rmdir(WORK), "cannot remove " WORK);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: iotree calib|io_tree ITERATIONS TRIALS\n");
		return 2;
	}
	long n = atol(argv[2]), trials = atol(argv[3]);
	for (long k = 0; k < trials; k++) {
		if (!strcmp(argv[1], "calib")) {
			printf("BENCH calib %ld %llu\n", n, (unsigned long long)calib(n));
			continue;
		}
		uint64_t t[PHASES] = { 0 }, sum = 0;
		if (strcmp(argv[1], "io_tree") || n != 1 || workload(t)) {
			printf("BENCH-FAIL %s trial %ld\n", argv[1], k);
			return 1;
		}
		for (int i = 0; i < PHASES; i++) {
			printf("BENCH %s 1 %llu\n", phase[i], (unsigned long long)t[i]);
			printf("IO %s %llu %llu\n", phase[i], io_of[i].reqs, io_of[i].bytes);
			sum += t[i];
		}
		printf("BENCH io_tree 1 %llu\n", (unsigned long long)sum);
		fflush(stdout);
	}
	return 0;
}
