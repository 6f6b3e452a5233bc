/* The benchmarks' halted time (bench/linux/netbench.c, httpbench.c):
 * nanoseconds cpu 0 spent idle, from the idle_sleeptime and
 * iowait_sleeptime lines of /proc/timer_list (Linux's tick accounting;
 * lxrt writes the kernel's halted time there in the same form).  Under
 * `-icount shift=0` nanoseconds are instructions. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int halted_field(const char *text, const char *name, uint64_t *sum)
{
	const char *p = strstr(text, name);
	if (!p || !(p = strchr(p, ':')))
		return -1;
	*sum += strtoull(p + 1, NULL, 10);
	return 0;
}

/* Nanoseconds cpu 0 has spent halted; exits with a BENCH-FAIL line when
 * the kernel does not say. */
static uint64_t halted(void)
{
	static char text[1 << 20];
	int fd = open("/proc/timer_list", O_RDONLY);
	size_t len = 0;
	ssize_t k;
	while (fd >= 0 && len < sizeof text - 1 &&
	       (k = read(fd, text + len, sizeof text - 1 - len)) > 0)
		len += k;
	if (fd >= 0)
		close(fd);
	text[len] = 0;
	uint64_t sum = 0;
	if (fd < 0 || halted_field(text, ".idle_sleeptime", &sum) ||
	    halted_field(text, ".iowait_sleeptime", &sum)) {
		printf("BENCH-FAIL halted: no idle times in /proc/timer_list\n");
		fflush(stdout);
		exit(1);
	}
	return sum;
}
