/* Hostile: a program started from the disk (issue 26). Its whole pages,
 * its data's included, are mapped from XN's cache pages, read-only (lxrt's
 * exec view); a write copies the page. Each run finds the bytes its file
 * holds, writes over them, and forks a child that writes over them too:
 * neither write may reach the file, the cache page, or the other's view.
 *
 *   execdata   prints "execdata: ok" and exits 0, or a FAIL line. */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#define WORDS (4 * 4096 / 8)

/* Four pages of initialised data: in the file, not bss. */
static volatile unsigned long data[WORDS] = {
	[0] = 0x11, [512] = 0x22, [1024] = 0x33, [1536] = 0x44, [WORDS - 1] = 0x55,
};

/* Whether `data` holds the file's bytes. */
static int pristine(void)
{
	for (long i = 0; i < WORDS; i++) {
		unsigned long want = i == 0 ? 0x11 : i == 512 ? 0x22 : i == 1024 ? 0x33 : i == 1536 ? 0x44
			: i == WORDS - 1 ? 0x55 : 0;
		if (data[i] != want)
			return 0;
	}
	return 1;
}

static void scribble(unsigned long v)
{
	for (long i = 0; i < WORDS; i++)
		data[i] = v;
}

int main(void)
{
	if (!pristine()) {
		printf("FAIL: execdata started with another run's writes\n");
		return 1;
	}
	pid_t pid = fork();
	if (pid == 0) {
		scribble(0xc1);
		_exit(data[WORDS - 1] == 0xc1 ? 0 : 1);
	}
	int status;
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status)) {
		printf("FAIL: the child could not write its data\n");
		return 1;
	}
	if (!pristine()) {
		printf("FAIL: the child's writes reached its parent\n");
		return 1;
	}
	scribble(0xa5);
	printf("execdata: ok\n");
	return 0;
}
