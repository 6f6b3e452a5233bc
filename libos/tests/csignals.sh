# An unmodified static glibc program (libos/tests/c/sigtest.c, built by
# the host's gcc): SA_RESTART, a SIGSEGV handler told the faulting address,
# a handler's mask, a computation interrupted by another process's signal,
# sigsuspend, and a child stopped and continued (waitpid WUNTRACED).
cbin/sigtest
echo "sigtest: $?"
