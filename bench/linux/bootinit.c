/*
 * The Linux side of the boot row (`cargo xtask bench boot`), booted as
 * `rdinit=/bin/bootinit`: what a minimal system does before its shell,
 * then busybox's shell on the console as Veneer's `cargo xtask run` starts
 * it (`lxrt -t /bin/sh`).  The harness stops the machine at the first
 * prompt.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

int main(void)
{
	mkdir("/dev", 0755);
	mount("devtmpfs", "/dev", "devtmpfs", 0, NULL);
	mkdir("/proc", 0755);
	mount("proc", "/proc", "proc", 0, NULL);
	setsid();
	int fd = open("/dev/console", O_RDWR);
	if (fd < 0)
		return 1;
	ioctl(fd, TIOCSCTTY, 0);
	dup2(fd, 0), dup2(fd, 1), dup2(fd, 2);
	if (fd > 2)
		close(fd);
	execl("/bin/busybox", "sh", "-i", (char *)NULL);
	return 127;
}
