/* Signals as a glibc program sees them, run unchanged on Linux and on
 * lxrt (libos/tests/csignals.sh compares the output): SA_RESTART, a fault
 * caught by a SIGSEGV handler with the faulting address, a handler that
 * interrupts a computation making no system calls, sigsuspend, the mask a
 * handler runs with, the alternate signal stack, sigpending and
 * sigwaitinfo / sigtimedwait, and a stopped child. */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t got;
static sigjmp_buf back;
static void *fault_at;

static void on_usr1(int sig) { got = sig; }

static char altstack[65536];
static volatile int on_alt, alt_flags;

static void on_alt_stack(int sig) {
	char here;
	stack_t now;
	on_alt = &here >= altstack && &here < altstack + sizeof altstack;
	sigaltstack(NULL, &now);
	alt_flags = now.ss_flags;
	got = sig;
}

static void on_segv(int sig, siginfo_t *info, void *uc) {
	(void)uc;
	printf("SIGSEGV handler: signal %d, code %s, address %s\n", sig,
	       info->si_code == SEGV_ACCERR ? "SEGV_ACCERR" : "other",
	       info->si_addr == fault_at ? "the faulting one" : "wrong");
	siglongjmp(back, 1);
}

static void on_usr2(int sig) {
	sigset_t now;
	sigprocmask(SIG_BLOCK, NULL, &now);
	printf("in the handler %d: USR2 %sblocked, TERM %sblocked\n", sig,
	       sigismember(&now, SIGUSR2) ? "" : "not ", sigismember(&now, SIGTERM) ? "" : "not ");
	got = sig;
}

/* A child that signals the parent after a while, then writes to `fd`. */
static pid_t poke(int fd, int sig) {
	pid_t p = fork();
	if (p == 0) {
		usleep(200000);
		kill(getppid(), sig);
		usleep(200000);
		if (fd >= 0 && write(fd, "x", 1) != 1)
			_exit(2);
		_exit(0);
	}
	return p;
}

static void read_through(int restart) {
	int fds[2];
	char c;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr1;
	sa.sa_flags = restart ? SA_RESTART : 0;
	sigaction(SIGUSR1, &sa, NULL);
	if (pipe(fds))
		return;
	got = 0;
	pid_t p = poke(fds[1], SIGUSR1);
	ssize_t n = read(fds[0], &c, 1);
	int e = errno;
	printf("%s: read returned %zd%s, handler %s\n", restart ? "SA_RESTART" : "no SA_RESTART", n,
	       n < 0 && e == EINTR ? " (EINTR)" : "", got == SIGUSR1 ? "ran" : "did not run");
	waitpid(p, NULL, 0);
	close(fds[0]);
	close(fds[1]);
}

int main(void) {
	setvbuf(stdout, NULL, _IONBF, 0);
	read_through(1);
	read_through(0);

	/* A fault caught by the program's own handler. */
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGSEGV, &sa, NULL);
	char *page = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	fault_at = page + 123;
	if (sigsetjmp(back, 1) == 0) {
		*(volatile char *)fault_at = 1;
		printf("the write did not fault\n");
	}
	printf("after the fault: resumed\n");

	/* A handler with sa_mask, interrupting a computation. */
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr2;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGTERM);
	sigaction(SIGUSR2, &sa, NULL);
	got = 0;
	pid_t p = poke(-1, SIGUSR2);
	volatile unsigned long spins = 0;
	while (!got)
		spins++;
	printf("computation interrupted by signal %d\n", got);
	waitpid(p, NULL, 0);

	/* sigsuspend: wait for a blocked signal. */
	sigset_t block, old;
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	sigprocmask(SIG_BLOCK, &block, &old);
	got = 0;
	p = poke(-1, SIGUSR1);
	int r = sigsuspend(&old);
	printf("sigsuspend returned %d (%s), handler %s\n", r, errno == EINTR ? "EINTR" : "?",
	       got == SIGUSR1 ? "ran" : "did not run");
	sigprocmask(SIG_SETMASK, &old, NULL);
	waitpid(p, NULL, 0);

	/* The alternate signal stack. */
	stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack, .ss_flags = 0};
	stack_t small = {.ss_sp = altstack, .ss_size = 100, .ss_flags = 0};
	printf("sigaltstack too small: %s\n", sigaltstack(&small, NULL) < 0 && errno == ENOMEM ? "ENOMEM" : "?");
	sigaltstack(&ss, NULL);
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alt_stack;
	sa.sa_flags = SA_ONSTACK;
	sigaction(SIGUSR1, &sa, NULL);
	raise(SIGUSR1);
	printf("SA_ONSTACK handler on the alternate stack: %s, ss_flags %s\n", on_alt ? "yes" : "no",
	       alt_flags == SS_ONSTACK ? "SS_ONSTACK" : "?");
	stack_t cur;
	sigaltstack(NULL, &cur);
	printf("after it: ss_flags %d, size %zu\n", cur.ss_flags, cur.ss_size);

	/* Pending blocked signals, and waiting for them. */
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	sigaddset(&block, SIGUSR2);
	sigprocmask(SIG_BLOCK, &block, &old);
	raise(SIGUSR1);
	sigset_t pend;
	sigpending(&pend);
	printf("sigpending: USR1 %s, USR2 %s\n", sigismember(&pend, SIGUSR1) ? "yes" : "no",
	       sigismember(&pend, SIGUSR2) ? "yes" : "no");
	siginfo_t si;
	int s1 = sigwaitinfo(&block, &si);
	printf("sigwaitinfo took %d (si_signo %d)\n", s1, si.si_signo);
	struct timespec zero = {0, 0};
	r = sigtimedwait(&block, &si, &zero);
	printf("sigtimedwait with nothing pending: %d (%s)\n", r, errno == EAGAIN ? "EAGAIN" : "?");
	p = poke(-1, SIGUSR2);
	s1 = sigwaitinfo(&block, &si);
	printf("sigwaitinfo waited for %d\n", s1);
	waitpid(p, NULL, 0);
	sigprocmask(SIG_SETMASK, &old, NULL);

	/* A stopped child reported by waitpid(WUNTRACED), then continued. */
	p = fork();
	if (p == 0) {
		raise(SIGSTOP);
		_exit(7);
	}
	int st;
	waitpid(p, &st, WUNTRACED);
	printf("child %s by signal %d\n", WIFSTOPPED(st) ? "stopped" : "not stopped", WSTOPSIG(st));
	kill(p, SIGCONT);
	waitpid(p, &st, 0);
	printf("continued child exited with %d\n", WEXITSTATUS(st));
	return 0;
}
