/* Touch an address and report the signal the access raised: its name,
 * si_code and whether si_addr is the address touched. The handler jumps
 * back. Shared by the tests of bad memory accesses, whose output is
 * compared with the host's. */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

static sigjmp_buf back;
static volatile int got_sig, got_code;
static void *volatile got_addr;

static void handler(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    got_sig = sig;
    got_code = si->si_code;
    got_addr = si->si_addr;
    siglongjmp(back, 1);
}

static const char *code_name(int sig, int code)
{
    if (code == SI_KERNEL)
        return "SI_KERNEL";
    if (sig == SIGSEGV)
        return code == SEGV_MAPERR ? "SEGV_MAPERR" : code == SEGV_ACCERR ? "SEGV_ACCERR" : "?";
    if (sig == SIGBUS)
        return code == BUS_ADRERR ? "BUS_ADRERR" : code == BUS_ADRALN ? "BUS_ADRALN" : "?";
    return "?";
}

enum op { READ, WRITE, EXEC };

static void try(const char *what, void *p, enum op op)
{
    got_sig = 0;
    if (sigsetjmp(back, 1) == 0) {
        volatile char *c = p;
        if (op == READ)
            (void)*c;
        else if (op == WRITE)
            *c = 1;
        else
            ((void (*)(void))p)();
        printf("%s: no signal\n", what);
        return;
    }
    printf("%s: %s %s, address %s\n", what, strsignal(got_sig), code_name(got_sig, got_code),
           got_addr == p ? "the one touched" : got_addr == NULL ? "0" : "another");
}

/* Catches SIGSEGV and SIGBUS for `try`. */
static void catch_faults(void)
{
    struct sigaction sa = {.sa_sigaction = handler, .sa_flags = SA_SIGINFO | SA_NODEFER};
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);
}
