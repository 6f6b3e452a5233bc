/*
 * /init of the Linux benchmark initramfs.  Runs each experiment as
 * `/bin/bench NAME ITERATIONS TRIALS` in a child (a fault in PID 1 would
 * only be logged; the thread experiments run `/bin/threadbench`, Veneer's
 * program for them, so that linking pthreads into `bench` does not change
 * the other experiments: it made fork 4.5% cheaper), relays its BENCH
 * lines on the serial console, and powers off.  The kernel hands init the words after `--` on its command line:
 * `quick` selects tiny iteration counts, any other word names an experiment
 * to run instead of all of them. The program-start, shell and pipe-streaming
 * rows run `/bin/startbench` (`libos/tests/c/startbench.c`, Veneer's program
 * for them too) over the Debian packages the initramfs holds; the network
 * rows run `/bin/netbench`, which loads the NIC's driver from /modules.
 * The storage rows run `/bin/iobench` (`libos/tests/c/iobench.c`) in /data:
 * ext4 on the machine's virtio-blk disk (made by mkfs on the host before
 * each boot), mounted here after loading Debian's modules for it from /mods
 * (00.ko, 01.ko, ... in dependency order: the kernel has virtio and ext4 as
 * modules). The I/O-intensive workload runs `/bin/iotree`
 * (`libos/tests/c/iotree.c`) there too, over Debian's coreutils, gzip,
 * tar, diffutils and tcc and the archive /bench/tree.tar.gz the initramfs
 * holds; it prints its phases' rows besides its own.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Quick runs still calibrate over 2 million instructions: over fewer, one
 * timer interrupt (about 10,000 instructions) moves the reading past the
 * 1% the harness allows. */
static const struct {
	const char *name;
	long iterations, quick;
} experiments[] = {
	{ "calib", 10000, 2000 },     { "getpid", 200000, 1000 },
	{ "sigill", 20000, 100 },     { "trap", 20000, 100 },
	{ "prot1", 20000, 100 },      { "prot100", 2000, 10 },
	{ "unprot100", 2000, 10 },    { "dirty", 50000, 100 },
	{ "appel1", 5000, 50 },	      { "appel2", 5000, 100 },
	{ "pipe_1b", 10000, 100 },    { "pipe_1w", 10000, 100 },
	{ "pipe_8k", 5000, 100 },     { "yield", 20000, 100 },
	{ "futex", 5000, 50 },	      { "fork", 300, 4 },
	{ "thread", 300, 4 },	      { "futex_threads", 5000, 50 },
	{ "fork_exec", 200, 4 },      { "vfork_exec", 200, 4 },
	{ "select_a", 48000, 100 },   { "select_b", 48000, 100 },
	{ "epoll", 10000, 100 },
	{ "vdso_clock", 200000, 1000 },
	{ "start_true", 50, 2 },      { "start_bash", 20, 2 },
	{ "start_python", 5, 1 },     { "shell_build", 200, 10 },
	{ "pipe_stream", 16384, 1024 },
	{ "pkt_tx", 200, 20 },	      { "ping_1", 50, 5 },
	{ "ping_10", 50, 5 },	      { "ping_100", 50, 5 },
	{ "ping_1000", 50, 5 },
	{ "http_0", 100, 5 },	      { "http_1k", 100, 5 },
	{ "http_10k", 100, 5 },	      { "http_100k", 50, 5 },
	{ "io_file", 16, 1 },	      { "small_files", 1000, 50 },
	{ "cp_file", 16, 1 },	      { "cp_tree", 64, 4 },
	{ "start_disk", 50, 5 },
	{ "io_tree", 1, 1 },
};

/* The rows the I/O-intensive workload prints besides its own (its
 * phases: libos/tests/c/iotree.c), announced with it. */
#define IO_TREE_PHASES \
	"tree_cp tree_gunzip tree_untar tree_cpr tree_diff tree_cc tree_tar " \
	"tree_gzip tree_rm"
#define COUNT (sizeof experiments / sizeof experiments[0])

/* The program that runs an experiment. */
static const char *program_of(const char *name)
{
	if (!strcmp(name, "thread") || !strcmp(name, "futex_threads"))
		return "threadbench";
	if (!strcmp(name, "io_file") || !strcmp(name, "small_files") ||
	    !strcmp(name, "cp_file") || !strcmp(name, "cp_tree") ||
	    !strcmp(name, "start_disk"))
		return "iobench";
	if (!strncmp(name, "start_", 6) || !strcmp(name, "shell_build") ||
	    !strcmp(name, "pipe_stream"))
		return "startbench";
	if (!strcmp(name, "pkt_tx") || !strncmp(name, "ping_", 5))
		return "netbench";
	if (!strncmp(name, "http_", 5))
		return "httpbench";
	if (!strcmp(name, "io_tree"))
		return "iotree";
	return "bench";
}

/* The calibration runs in every boot: it proves the clock counts
 * instructions. The I/O-intensive workload (minutes of guest time) runs
 * in a quick boot only when named. */
static int wanted(int argc, char **argv, const char *name)
{
	int named = 0, quick = 0;
	if (!strcmp(name, "calib"))
		return 1;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "quick")) {
			quick = 1;
			continue;
		}
		named = 1;
		if (!strcmp(argv[i], name))
			return 1;
	}
	return !named && !(quick && !strcmp(name, "io_tree"));
}

/* Loads /mods/00.ko, 01.ko, ... and mounts the disk's ext4 at /data;
 * without it there is no /data and the storage rows fail. */
static void mount_data(void)
{
	for (int i = 0;; i++) {
		char path[32];
		snprintf(path, sizeof path, "/mods/%02d.ko", i);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			break;
		if (syscall(SYS_finit_module, fd, "", 0))
			printf("init: cannot load %s\n", path);
		close(fd);
	}
	mkdir("/data", 0755);
	/* The disk's node appears once the driver has probed it. */
	for (int tries = 0; tries < 100; tries++) {
		if (!mount("/dev/vda", "/data", "ext4", 0, "noinit_itable"))
			return;
		usleep(10000);
	}
	printf("init: cannot mount /dev/vda on /data\n");
	rmdir("/data");
}

int main(int argc, char **argv)
{
	/* The archive has no device nodes; devtmpfs provides the console. */
	mkdir("/dev", 0755);
	mount("devtmpfs", "/dev", "devtmpfs", 0, NULL);
	/* dirty reads /proc/self/pagemap. */
	mkdir("/proc", 0755);
	mount("proc", "/proc", "proc", 0, NULL);
	/* iotree reads the disk's counts in /sys/block/vda/stat. */
	mkdir("/sys", 0755);
	mount("sysfs", "/sys", "sysfs", 0, NULL);
	int fd = open("/dev/console", O_RDWR);
	if (fd >= 0) {
		dup2(fd, 0), dup2(fd, 1), dup2(fd, 2);
		if (fd > 2)
			close(fd);
	}
	mount_data();
	int quick = 0;
	for (int i = 1; i < argc; i++)
		quick |= !strcmp(argv[i], "quick");
	int trials = quick ? 1 : 3;

	printf("BENCH-PLAN");
	for (size_t i = 0; i < COUNT; i++)
		if (wanted(argc, argv, experiments[i].name))
			printf(" %s%s", experiments[i].name,
			       strcmp(experiments[i].name, "io_tree") ?
				       "" :
				       " " IO_TREE_PHASES);
	printf("\n");
	fflush(stdout);

	for (size_t i = 0; i < COUNT; i++) {
		if (!wanted(argc, argv, experiments[i].name))
			continue;
		char iterations[32], trials_arg[16];
		snprintf(iterations, sizeof iterations, "%ld",
			 quick ? experiments[i].quick : experiments[i].iterations);
		snprintf(trials_arg, sizeof trials_arg, "%d", trials);
		pid_t pid = fork();
		if (pid == 0) {
			const char *program = program_of(experiments[i].name);
			char path[64];
			snprintf(path, sizeof path, "/bin/%s", program);
			char *args[] = { (char *)program,
					 (char *)experiments[i].name,
					 iterations, trials_arg, NULL };
			execv(path, args);
			_exit(127);
		}
		int status = 0;
		if (pid < 0 || waitpid(pid, &status, 0) != pid ||
		    !WIFEXITED(status) || WEXITSTATUS(status))
			printf("BENCH-FAIL %s status %#x\n", experiments[i].name,
			       status);
		fflush(stdout);
	}
	printf("BENCH-DONE\n");
	fflush(stdout);
	sync();
	reboot(RB_POWER_OFF);
	return 0;
}
