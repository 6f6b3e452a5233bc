/* Two shared mappings of one memfd, as a JIT keeps them (Erlang's beam.smp
 * writes code through a writable view and runs it through an executable
 * one): what is written through either view is seen through the other and
 * by read(), before and after msync, and after the writable view is
 * unmapped; a view of another part of the file is its own. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int main(void)
{
	int fd = memfd_create("views", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, 3 * 4096) != 0)
		return 1;
	char *rw = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	char *rx = mmap(NULL, 2 * 4096, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 0);
	char *tail = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 2 * 4096);
	if (rw == MAP_FAILED || rx == MAP_FAILED || tail == MAP_FAILED)
		return 2;
	/* An x86 `mov eax, 42; ret`, written through one view, run through the other. */
	static const unsigned char code[] = { 0xb8, 42, 0, 0, 0, 0xc3 };
	memcpy(rw + 4096 + 100, code, sizeof code);
	int (*f)(void) = (int (*)(void))(rx + 4096 + 100);
	printf("code run through the other view: %d\n", f());
	strcpy(rw, "first page");
	printf("other view sees: %s\n", rx);
	strcpy(tail, "tail page");
	printf("tail view separate: %d\n", rw[0] == 'f' && tail[0] == 't');
	char buf[16] = { 0 };
	msync(rw, 2 * 4096, MS_SYNC);
	pread(fd, buf, 10, 0);
	printf("read after msync: %s\n", buf);
	/* A second writable view: a write through it shows in both others. */
	char *rw2 = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (rw2 == MAP_FAILED)
		return 3;
	rw2[0] = 'F';
	printf("after a write through a second view: %c %c\n", rw[0], rx[0]);
	munmap(rw, 2 * 4096);
	munmap(rw2, 4096);
	printf("after unmapping the writable views: %s, %d\n", rx, f());
	pread(fd, buf, 10, 0);
	printf("read after unmapping: %s\n", buf);
	return 0;
}
