/* Signals that cannot be delivered because the stack cannot take the
 * signal frame, run unchanged on Linux and on lxrt (libos/tests/
 * badstack.sh compares the output): an alternate stack that is not mapped,
 * a stack pointer that points at nothing (unmapped, zero, non-canonical)
 * while another process sends a signal, and a stack exhausted by
 * recursion whose SIGSEGV handler has no stack to run on. Linux kills each
 * with SIGSEGV (its default action; no core file, since RLIMIT_CORE is 0
 * here); the handler never runs. A program whose rsp points at nothing
 * but that needs no stack carries on through calls and ignored signals. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static void handler(int sig) {
	(void)sig;
	static const char msg[] = "the handler ran\n";
	if (write(1, msg, sizeof msg - 1) < 0)
		_exit(3);
}

static void catch(int sig, int flags) {
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = handler;
	sa.sa_flags = flags;
	sigaction(sig, &sa, NULL);
}

/* Where a child that is to be poked says its signal is set up. */
static int ready_fd = -1;

static void ready(void) {
	if (ready_fd >= 0 && write(ready_fd, "r", 1) != 1)
		_exit(5);
}

/* Runs `child` in a child process and reports how it ended; with `poke`,
 * sends it SIGUSR1 once it has set its signal up (a fixed delay alone lost
 * the race on a loaded host) and has had 50 ms to get into its loop. */
static void report(const char *what, void (*child)(unsigned long), unsigned long arg, int poke) {
	int fds[2];
	if (poke && pipe(fds))
		exit(6);
	pid_t p = fork();
	if (p == 0) {
		if (poke) {
			close(fds[0]);
			ready_fd = fds[1];
		}
		child(arg);
		_exit(0);
	}
	if (poke) {
		char c;
		close(fds[1]);
		if (read(fds[0], &c, 1) != 1)
			exit(7);
		close(fds[0]);
		usleep(50000);
		kill(p, SIGUSR1);
	}
	int st;
	waitpid(p, &st, 0);
	if (WIFSIGNALED(st))
		printf("%s: killed by signal %d (%s)%s\n", what, WTERMSIG(st), strsignal(WTERMSIG(st)),
		       WCOREDUMP(st) ? ", core dumped" : "");
	else
		printf("%s: exited with %d\n", what, WEXITSTATUS(st));
}

/* A page that was mapped and is not any more. */
static void *hole(void) {
	void *p = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(p, 1 << 16);
	return p;
}

static void unmapped_altstack(unsigned long arg) {
	(void)arg;
	stack_t ss = {.ss_sp = hole(), .ss_size = 1 << 16, .ss_flags = 0};
	if (sigaltstack(&ss, NULL))
		_exit(4);
	catch(SIGUSR1, SA_ONSTACK);
	raise(SIGUSR1);
}

/* Points rsp at `arg` and spins (no calls) until a signal comes. */
static void bad_rsp(unsigned long arg) {
	catch(SIGUSR1, 0);
	ready();
	__asm__ volatile("mov %0, %%rsp\n1: jmp 1b" : : "r"(arg) : "memory");
}

/* With rsp pointing at `arg`: a system call (which needs no stack) and a
 * computation that an ignored signal interrupts both carry on, as on
 * Linux; then rsp comes back and the child exits with 42. */
static void survives(unsigned long arg) {
	signal(SIGUSR1, SIG_IGN);
	ready();
	__asm__ volatile("mov %%rsp, %%rbx\n"
			 "mov %0, %%rsp\n"
			 "mov $39, %%eax\n" /* getpid */
			 "syscall\n"
			 "mov $500000000, %%ecx\n"
			 "1: dec %%ecx\n"
			 "jnz 1b\n"
			 "mov %%rbx, %%rsp\n"
			 :
			 : "r"(arg)
			 : "rax", "rbx", "rcx", "r11", "memory");
	_exit(42);
}

/* Never reached: the recursion runs out of stack long before. */
static volatile int bottomless = 1 << 30;

static int depth(int n) {
	volatile char pad[4096];
	pad[0] = (char)n;
	if (n == bottomless)
		return 0;
	return depth(n + 1) + pad[0];
}

static void exhausted(unsigned long arg) {
	(void)arg;
	catch(SIGSEGV, 0);
	depth(0);
}

/* The same with the handler on a good alternate stack: it runs. */
static void exhausted_altstack(unsigned long arg) {
	(void)arg;
	static char alt[65536];
	stack_t ss = {.ss_sp = alt, .ss_size = sizeof alt, .ss_flags = 0};
	sigaltstack(&ss, NULL);
	catch(SIGSEGV, SA_ONSTACK | SA_RESETHAND);
	depth(0);
}

int main(void) {
	setvbuf(stdout, NULL, _IONBF, 0);
	struct rlimit none = {0, 0};
	setrlimit(RLIMIT_CORE, &none);
	report("alternate stack not mapped", unmapped_altstack, 0, 0);
	report("rsp unmapped", bad_rsp, (unsigned long)hole() + 4096, 1);
	report("rsp zero", bad_rsp, 0, 1);
	report("rsp non-canonical", bad_rsp, 0x8000000000000000ul, 1);
	report("rsp in the kernel's half", bad_rsp, 0xffffffff80001000ul, 1);
	report("rsp unmapped, a call and an ignored signal", survives, (unsigned long)hole() + 4096, 1);
	report("rsp zero, a call and an ignored signal", survives, 0, 1);
	report("stack exhausted", exhausted, 0, 0);
	report("stack exhausted, handler on an alternate stack", exhausted_altstack, 0, 0);
	return 0;
}
