# CPU-time clocks by id (libos/tests/c/cpuclock.c), compared with the host.
cbin/cpuclock
echo "cpuclock: $?"
