# veneer-only
# A thread the kernel ends (lxrt's handler faulted for it: it pointed its
# gs base at nothing) ends as a Linux thread ends: the first thread hears
# of it (env_exit_bits) and clears its id word, so pthread_join returns,
# and marks its robust mutex owner-died (libos/tests/c/threaddeath.c).
cbin/threaddeath
