# CPU-bound programs under interval timers (libos/tests/c/itimerspin.c):
# spinning in plain code, in system calls and in their signal handlers
# with ITIMER_REAL, ITIMER_VIRTUAL and ITIMER_PROF armed, they are never
# ended by the kernel's abort protocol.
cbin/itimerspin
