# mlock, munlock, mlockall, munlockall, mlock2 and mincore
# (libos/tests/c/mlock.c), compared with the host.
cbin/mlock
echo "mlock: $?"
