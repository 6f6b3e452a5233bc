/* A user's attacks on another user's disk file past the library
 * (issue 25, docs/protection.md; Veneer only: it makes XN's calls itself
 * and writes lxrt's arena).
 *
 *   xnsteal PATH MARK  (1) finds the C-FFS directory blocks holding PATH's
 *                      entry, binds each block the entry's extents claim
 *                      with XN_SELF and with every capability slot it
 *                      holds, and looks for MARK in whatever it mapped,
 *                      the entry itself included (a small file's data);
 *                      (2) forges PATH's inode in lxrt's arena (owner: this
 *                      user), so that the library's check lets it open the
 *                      file, and reads it: XN must still refuse the bytes.
 *
 * Prints "xnsteal: N blocks of NAME, every bind refused" and "xnsteal:
 * forged NAME's owner, still unreadable" and exits 0 when nothing was
 * read; "xnsteal: read NAME's bytes ..." and exits 1 when the file
 * leaked; "xnsteal: FAIL ..." and exits 2 when an attack found nothing to
 * try (the test would prove nothing). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define VENEER(n) (0x10000 + (n))
#define XN_INFO VENEER(60)
#define XN_BIND VENEER(67)
#define XN_CLAIMS VENEER(74)
#define XN_PARENT VENEER(75)
/* abi::syscall::XN_SELF: act as my own effective uid and gid. */
#define XN_SELF (1ull << 32)
#define SLOTS 64
#define PAGE 4096
/* A gap in lxrt's layout (libos/src/layout.rs: below the stack, above
 * the pipes): one page per bind tried, never reused. */
#define WINDOW 0x7C0000000000ull

struct info {
	uint64_t nblocks, registry_slots, cached, allocated, reads, writes, flushes;
};
struct claim {
	uint64_t start, count;
	uint32_t tid, slot;
};

static uint64_t next_va = WINDOW;

/* Block b bound read-only at a fresh address with credential cred, or 0. */
static const char *bind(uint64_t parent, uint64_t b, uint64_t cred)
{
	uint64_t va = next_va;
	next_va += PAGE;
	if (syscall(XN_BIND, parent, b, va, 0, cred) < 0)
		return 0;
	return (const char *)va;
}

/* Block b mapped with any credential this process holds: XN_SELF, then
 * every slot of its list. */
static const char *bind_any(uint64_t parent, uint64_t b)
{
	for (uint64_t cred = 0; cred <= SLOTS; cred++) {
		const char *p = bind(parent, b, cred == SLOTS ? XN_SELF : cred);
		if (p)
			return p;
	}
	return 0;
}

/* C-FFS's meta.owns: slot 5e + k is extent k (0-3) of entry e + 1. */
#define SLOTS_PER_ENTRY 5
#define EXTENTS 4
#define ENTRY 256

/* Attack (1): XN's calls with every credential held. */
static int by_xn(const char *name, const char *mark)
{
	struct info in;
	if (syscall(XN_INFO, &in) < 0 || in.nblocks == 0) {
		printf("xnsteal: FAIL no XN disk (errno %d)\n", errno);
		return 2;
	}
	static struct claim cl[256];
	/* Touched first: the kernel writes only pages lxrt has mapped. */
	memset(cl, 0, sizeof cl);
	int tried = 0;
	for (uint64_t b = 0; b < in.nblocks; b++) {
		long n = syscall(XN_CLAIMS, b, cl, 256);
		if (n <= 0)
			continue;
		uint64_t parent = (uint64_t)syscall(XN_PARENT, b);
		const char *dir = bind_any(parent, b);
		if (!dir)
			continue;
		const char *hit = memmem(dir, PAGE, name, strlen(name));
		if (!hit || hit - dir < ENTRY)
			continue;
		uint32_t entry = (hit - dir) / ENTRY;
		/* A small file's bytes may sit in its entry (C-FFS's inline
		 * data): the directory's block is bound, so look there too. */
		tried++;
		if (memmem(dir + entry * ENTRY, ENTRY, mark, strlen(mark))) {
			printf("xnsteal: read %s's bytes in its directory entry (block %lu)\n", name, (unsigned long)b);
			return 1;
		}
		for (long i = 0; i < n && i < 256; i++) {
			if (cl[i].slot / SLOTS_PER_ENTRY + 1 != entry || cl[i].slot % SLOTS_PER_ENTRY >= EXTENTS)
				continue;
			for (uint64_t c = cl[i].start; c < cl[i].start + cl[i].count; c++) {
				tried++;
				const char *p = bind_any(b, c);
				if (p && memmem(p, PAGE, mark, strlen(mark))) {
					printf("xnsteal: read %s's bytes (block %lu)\n", name, (unsigned long)c);
					return 1;
				}
			}
		}
	}
	if (tried == 0) {
		printf("xnsteal: FAIL no block of %s found to try\n", name);
		return 2;
	}
	printf("xnsteal: %d places of %s, every bind refused or the bytes not there\n", tried, name);
	return 0;
}

/* lxrt's shared arena (libos/src/layout.rs SHARED, SHARED_MAX) and the
 * fields of its inode (libos/src/fs/inode.rs, repr(C)). */
#define ARENA 0x70000000UL
#define ARENA_MAX (1UL << 30)
struct inode {
	uint32_t mode, nlink, opens, parent;
	uint64_t size, cap, data, ticket, mtime, atime, ctime;
	uint32_t uid, gid, rdev, maps;
	uint64_t disk, disk_at;
};

static sigjmp_buf skip;

static void on_fault(int sig)
{
	(void)sig;
	siglongjmp(skip, 1);
}

/* Attack (2): the arena says the file is this user's; the disk does not. */
static int by_arena(const char *path, const char *name, const char *mark)
{
	struct stat st;
	if (stat(path, &st) < 0) {
		printf("xnsteal: FAIL stat %s: errno %d\n", path, errno);
		return 2;
	}
	struct sigaction sa = { .sa_handler = on_fault };
	sigaction(SIGSEGV, &sa, 0);
	int forged = 0;
	for (volatile uint64_t va = ARENA; va < ARENA + ARENA_MAX; va += PAGE) {
		if (sigsetjmp(skip, 1))
			continue;
		for (uint64_t at = va; at + sizeof(struct inode) <= va + PAGE; at += 8) {
			struct inode *n = (struct inode *)at;
			if (n->mode == st.st_mode && n->size == (uint64_t)st.st_size && n->uid == st.st_uid &&
			    n->gid == st.st_gid && n->disk != 0 && n->nlink == st.st_nlink) {
				n->uid = getuid();
				n->gid = getgid();
				forged++;
			}
		}
	}
	signal(SIGSEGV, SIG_DFL);
	if (stat(path, &st) < 0 || st.st_uid != getuid()) {
		printf("xnsteal: FAIL no inode of %s forged (%d tried)\n", name, forged);
		return 2;
	}
	static char buf[1 << 16];
	int fd = open(path, O_RDONLY);
	ssize_t got = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
	if (got > 0) {
		buf[got] = 0;
		if (strstr(buf, mark)) {
			printf("xnsteal: read %s's bytes through a forged inode\n", name);
			return 1;
		}
	}
	printf("xnsteal: forged %s's owner, still unreadable\n", name);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 3 || !strrchr(argv[1], '/')) {
		printf("xnsteal: FAIL usage: xnsteal PATH MARK\n");
		return 2;
	}
	const char *name = strrchr(argv[1], '/') + 1;
	int a = by_xn(name, argv[2]);
	int b = by_arena(argv[1], name, argv[2]);
	return a > b ? a : b;
}
