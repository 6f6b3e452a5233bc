# host: pid namespace
# Issue 27's smaller holes: a thread pointer outside the user half is
# refused with EPERM by arch_prctl and clone (libos/tests/c/tlsperm.c;
# it was accepted, and the process died at its next TLS access), and pids
# stay small after slots are reused (libos/tests/c/pids.c; they grew by
# 1024 per reuse of a slot).
cbin/tlsperm
cbin/pids
