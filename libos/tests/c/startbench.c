/* The program-start, shell and pipe-streaming rows' program on both sides
 * (issue 26): one static glibc program, which the Linux benchmark
 * initramfs holds as /bin/startbench and Veneer runs under lxrt from
 * /bench/start.sh, both over the same Debian packages (coreutils, sed,
 * grep, bash, python3-minimal) and the same static busybox:
 * `startbench NAME ITERATIONS TRIALS` prints `BENCH NAME ITERATIONS TOTAL`
 * per trial, TOTAL in time-stamp counts (guest instructions under
 * -icount).
 *
 *   calib         the harness's 1000-instruction loop
 *   start_true    fork, exec GNU coreutils' dynamic /bin/true, wait
 *   start_bash    fork, exec `bash -c true`, wait
 *   start_python  fork, exec `python3 -c pass`, wait
 *   shell_build   busybox sh runs a build-like script (below) over
 *                 ITERATIONS small files; one run per trial, charged whole
 *   pipe_stream   1 MiB per iteration from a child to its parent through
 *                 a pipe in 64 KiB writes; ITERATIONS counts KiB moved
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static inline uint64_t now(void)
{
	uint32_t lo, hi;
	__asm__ volatile("lfence; rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

static char *const env[] = { "PATH=/usr/bin:/bin", "HOME=/", "LC_ALL=C",
			     NULL };

/* Forks, executes argv in the child, waits; 0 unless it exited with 0. */
static int run(char *const argv[])
{
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		execve(argv[0], argv, env);
		_exit(127);
	}
	int status;
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

static uint64_t start(long n, char *const argv[])
{
	uint64_t t = now();
	for (long i = 0; i < n; i++)
		if (run(argv))
			return 0;
	return now() - t;
}

/* A build in miniature: make N sources, then per file a command
 * substitution and a pipeline of external programs (each named by its
 * path, so busybox runs the Debian program rather than its own applet),
 * then a summary over all of them. */
static const char script[] =
	"set -e\n"
	"d=/tmp/build.$$\n"
	"/bin/mkdir -p $d/src $d/out\n"
	"i=0\n"
	"while [ $i -lt $1 ]; do\n"
	"  printf 'int f%d(void)\\n{\\n\\treturn %d; /* line */\\n}\\n' $i $i > $d/src/f$i.c\n"
	"  i=$((i + 1))\n"
	"done\n"
	"for f in $d/src/*.c; do\n"
	"  n=$(/usr/bin/basename $f .c)\n"
	"  /bin/sed 's/return/ret/' $f | /bin/grep -v line > $d/out/$n.o\n"
	"  /usr/bin/wc -l < $f >> $d/out/lines\n"
	"done\n"
	"/usr/bin/sort -n $d/out/lines | /usr/bin/uniq -c > $d/out/summary\n"
	"/bin/cat $d/out/*.o | /usr/bin/wc -c > $d/out/size\n"
	"/bin/grep -q \"^ *$1 4\\$\" $d/out/summary\n"
	"/bin/rm -rf $d\n";

static uint64_t shell_build(long files)
{
	FILE *f = fopen("/tmp/build.sh", "w");
	if (!f || fputs(script, f) < 0 || fclose(f))
		return 0;
	char count[24];
	snprintf(count, sizeof count, "%ld", files);
	char *const argv[] = { "/bin/busybox", "sh", "/tmp/build.sh", count,
			       NULL };
	uint64_t t = now();
	if (run(argv))
		return 0;
	return now() - t;
}

#define CHUNK (64 * 1024)
#define MIB (1024 * 1024)

static uint64_t pipe_stream(long kib)
{
	static char buf[CHUNK];
	long mib = kib / 1024;
	int fds[2];
	if (pipe(fds))
		return 0;
	uint64_t t = now();
	pid_t pid = fork();
	if (pid < 0)
		return 0;
	if (pid == 0) {
		close(fds[0]);
		memset(buf, 'x', sizeof buf);
		for (long m = 0; m < mib; m++)
			for (int c = 0; c < MIB / CHUNK; c++)
				if (write(fds[1], buf, CHUNK) != CHUNK)
					_exit(1);
		_exit(0);
	}
	close(fds[1]);
	long total = 0;
	for (;;) {
		ssize_t r = read(fds[0], buf, sizeof buf);
		if (r <= 0)
			break;
		total += r;
	}
	close(fds[0]);
	int status;
	if (waitpid(pid, &status, 0) != pid || status != 0 ||
	    total != mib * MIB)
		return 0;
	return now() - t;
}

static uint64_t calib(long n)
{
	uint64_t t = now();
	for (long i = 0; i < n; i++)
		__asm__ volatile(".rept 998\n nop\n .endr" ::: "memory");
	return now() - t;
}

int main(int argc, char **argv)
{
	if (argc != 4)
		return 2;
	const char *name = argv[1];
	long n = atol(argv[2]), trials = atol(argv[3]);
	char *const true_argv[] = { "/bin/true", NULL };
	char *const bash_argv[] = { "/bin/bash", "-c", "true", NULL };
	char *const python_argv[] = { "/usr/bin/python3", "-c", "pass", NULL };
	for (long t = 0; t < trials; t++) {
		uint64_t total = !strcmp(name, "calib")	       ? calib(n)
				 : !strcmp(name, "start_true")   ? start(n, true_argv)
				 : !strcmp(name, "start_bash")   ? start(n, bash_argv)
				 : !strcmp(name, "start_python") ? start(n, python_argv)
				 : !strcmp(name, "shell_build")  ? shell_build(n)
				 : !strcmp(name, "pipe_stream")  ? pipe_stream(n)
								 : 0;
		if (total == 0) {
			printf("BENCH-FAIL %s trial %ld\n", name, t);
			return 1;
		}
		/* shell_build: one run per trial, over n files. */
		printf("BENCH %s %ld %llu\n", name,
		       !strcmp(name, "shell_build") ? 1 : n,
		       (unsigned long long)total);
		fflush(stdout);
	}
	return 0;
}
