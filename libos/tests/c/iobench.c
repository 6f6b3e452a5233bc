/* The storage rows' program on both sides (issue 23 §3; paper 000 §4.5,
 * §6): one static glibc program, which the Linux benchmark initramfs
 * holds as /bin/iobench (over ext4 on a virtio-blk disk, mounted at
 * /data) and Veneer runs under lxrt from /bench/io.sh (over C-FFS on its
 * XN disk, lxrt's /data). `iobench NAME ITERATIONS TRIALS` works in /data
 * and prints `BENCH NAME ITERATIONS TOTAL` per trial, TOTAL in time-stamp
 * counts (guest instructions under -icount).
 *
 *   calib        the harness's 1000-instruction loop
 *   io_file      write ITERATIONS MiB to a file in 64 KiB writes, fsync,
 *                close; open it again, read it back and check every byte;
 *                unlink and sync; per MiB
 *   small_files  create ITERATIONS files of 1-4 KiB in a fresh directory
 *                (write, close), sync; read each back and check it;
 *                unlink each, rmdir, sync; per file (the paper's
 *                small-file benchmark)
 *   cp_file      copy a file of ITERATIONS MiB (made and synced before the
 *                clock starts) with read and write in 64 KiB pieces, as
 *                cp does, fsync the copy; unlink it; per MiB
 *   cp_tree      copy a directory of ITERATIONS files of 256 KiB (made
 *                and synced before the clock starts) into a new one, as
 *                cp -r does, then sync; per file (XCP's tree row)
 *   start_disk   this program copied into /data (synced before the clock
 *                starts), then ITERATIONS times fork, exec of the copy
 *                (`iobench exit`: it exits at once), wait; per start (a
 *                program started from the disk, issue 26)
 *
 * Each measured stretch starts and ends with the marker `xchg %bx,%bx`:
 * the benchmark harness counts the instructions executed between them
 * with its QEMU plugin (bench/profile/insn_count.c), since time under
 * -icount also advances while a guest waits, halted, for its disk.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "marks.h"

#define CHUNK (64 * 1024)
#define MIB (1024 * 1024)

static unsigned char buf[CHUNK], back[CHUNK];

/* The byte at `off` of file `seed`: every file and offset differs. */
static unsigned char pattern(long seed, long off)
{
	return (unsigned char)(off * 31 + seed * 7 + (off >> 12));
}

static void fill(long seed, long off, unsigned char *p, long n)
{
	for (long i = 0; i < n; i++)
		p[i] = pattern(seed, off + i);
}

/* Writes `size` bytes of file `seed` to `path`, fsyncs it; 0 on success. */
static int write_file(const char *path, long seed, long size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return -1;
	for (long off = 0; off < size; off += CHUNK) {
		fill(seed, off, buf, CHUNK);
		if (write(fd, buf, CHUNK) != CHUNK)
			return close(fd), -1;
	}
	int r = fsync(fd);
	return close(fd) || r ? -1 : 0;
}

/* Reads `path` back and checks it holds `size` bytes of file `seed`. */
static int check_file(const char *path, long seed, long size)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	long off = 0;
	ssize_t n;
	while ((n = read(fd, back, CHUNK)) > 0) {
		fill(seed, off, buf, n);
		if (memcmp(buf, back, n))
			return close(fd), -1;
		off += n;
	}
	close(fd);
	return n == 0 && off == size ? 0 : -1;
}

static uint64_t io_file(long mib)
{
	uint64_t t = now();
	mark();
	if (write_file("io", 1, mib * MIB) || check_file("io", 1, mib * MIB) || unlink("io"))
		return 0;
	sync();
	mark();
	return now() - t;
}

/* The size of small file `i`: 1-4 KiB, not a multiple of the block. */
static long small_size(long i)
{
	return 1024 + (i * 997) % 3072;
}

static uint64_t small_files(long n)
{
	char name[32];
	uint64_t t = now();
	mark();
	if (mkdir("small", 0755))
		return 0;
	for (long i = 0; i < n; i++) {
		snprintf(name, sizeof name, "small/f%ld", i);
		int fd = open(name, O_WRONLY | O_CREAT | O_EXCL, 0644);
		fill(i, 0, buf, small_size(i));
		if (fd < 0 || write(fd, buf, small_size(i)) != small_size(i))
			return 0;
		close(fd);
	}
	sync();
	for (long i = 0; i < n; i++) {
		snprintf(name, sizeof name, "small/f%ld", i);
		int fd = open(name, O_RDONLY);
		if (fd < 0 || read(fd, back, CHUNK) != small_size(i))
			return 0;
		close(fd);
		fill(i, 0, buf, small_size(i));
		if (memcmp(buf, back, small_size(i)))
			return 0;
	}
	for (long i = 0; i < n; i++) {
		snprintf(name, sizeof name, "small/f%ld", i);
		if (unlink(name))
			return 0;
	}
	if (rmdir("small"))
		return 0;
	sync();
	mark();
	return now() - t;
}

static uint64_t cp_file(long mib)
{
	if (write_file("src", 2, mib * MIB))
		return 0;
	uint64_t t = now();
	mark();
	int in = open("src", O_RDONLY);
	int out = open("dst", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (in < 0 || out < 0)
		return 0;
	ssize_t n;
	while ((n = read(in, buf, CHUNK)) > 0)
		if (write(out, buf, n) != n)
			return 0;
	if (n < 0 || fsync(out) || close(out) || close(in))
		return 0;
	mark();
	uint64_t total = now() - t;
	if (check_file("dst", 2, mib * MIB) || unlink("dst") || unlink("src"))
		return 0;
	sync();
	return total;
}

#define TREE_FILE (256 * 1024)

/* Copies `from` to `to` with read and write in 64 KiB pieces. */
static int copy(const char *from, const char *to)
{
	int in = open(from, O_RDONLY);
	int out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (in < 0 || out < 0)
		return -1;
	ssize_t n;
	while ((n = read(in, buf, CHUNK)) > 0)
		if (write(out, buf, n) != n)
			return -1;
	return n < 0 || close(out) || close(in) ? -1 : 0;
}

static uint64_t cp_tree(long files)
{
	char from[32], to[32];
	if (mkdir("tree", 0755))
		return 0;
	for (long i = 0; i < files; i++) {
		snprintf(from, sizeof from, "tree/f%ld", i);
		if (write_file(from, 3 + i, TREE_FILE))
			return 0;
	}
	sync();
	uint64_t t = now();
	mark();
	if (mkdir("copy", 0755))
		return 0;
	for (long i = 0; i < files; i++) {
		snprintf(from, sizeof from, "tree/f%ld", i);
		snprintf(to, sizeof to, "copy/f%ld", i);
		if (copy(from, to))
			return 0;
	}
	sync();
	mark();
	uint64_t total = now() - t;
	for (long i = 0; i < files; i++) {
		snprintf(from, sizeof from, "tree/f%ld", i);
		snprintf(to, sizeof to, "copy/f%ld", i);
		if (check_file(to, 3 + i, TREE_FILE) || unlink(to) || unlink(from))
			return 0;
	}
	if (rmdir("copy") || rmdir("tree"))
		return 0;
	sync();
	return total;
}

/* This program's own file: Linux's initramfs holds it as /bin/iobench,
 * Veneer's boot archive as /cbin/iobench. */
static const char *self_path(void)
{
	return access("/bin/iobench", R_OK) ? "/cbin/iobench" : "/bin/iobench";
}

static uint64_t start_disk(long n)
{
	if (copy(self_path(), "prog") || chmod("prog", 0755)) {
		printf("BENCH-FAIL start_disk copy errno %d\n", errno);
		return 0;
	}
	sync();
	uint64_t t = now();
	mark();
	for (long i = 0; i < n; i++) {
		pid_t pid = fork();
		if (pid == 0) {
			execl("/data/prog", "iobench", "exit", (char *)0);
			printf("BENCH-FAIL start_disk exec errno %d\n", errno);
			fflush(stdout);
			_exit(127);
		}
		int status = 0;
		if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status)) {
			printf("BENCH-FAIL start_disk child %d status %#x errno %d\n", pid, status, errno);
			return 0;
		}
	}
	mark();
	uint64_t total = now() - t;
	if (unlink("prog")) {
		printf("BENCH-FAIL start_disk unlink errno %d\n", errno);
		return 0;
	}
	sync();
	return total;
}

int main(int argc, char **argv)
{
	/* start_disk's child: started, done. */
	if (argc == 2 && !strcmp(argv[1], "exit"))
		return 0;
	if (argc != 4) {
		fprintf(stderr, "usage: iobench NAME ITERATIONS TRIALS\n");
		return 2;
	}
	const char *name = argv[1];
	long n = atol(argv[2]), trials = atol(argv[3]);
	if (chdir("/data")) {
		printf("BENCH-FAIL %s no /data\n", name);
		return 1;
	}
	for (long t = 0; t < trials; t++) {
		uint64_t total = !strcmp(name, "calib")	      ? calib(n)
				 : !strcmp(name, "io_file")   ? io_file(n)
				 : !strcmp(name, "small_files") ? small_files(n)
				 : !strcmp(name, "cp_file")   ? cp_file(n)
				 : !strcmp(name, "cp_tree")   ? cp_tree(n)
				 : !strcmp(name, "start_disk") ? start_disk(n)
							      : 0;
		if (!total) {
			printf("BENCH-FAIL %s trial %ld\n", name, t);
			return 1;
		}
		printf("BENCH %s %ld %llu\n", name, n, (unsigned long long)total);
		fflush(stdout);
	}
	return 0;
}
