# Advisory file locks between processes (libos/tests/c/locks.c): fcntl
# record locks, F_SETLKW, release by close and exit, OFD locks, flock,
# lockf, errors.
mkdir -p tmp
cbin/locks
echo "locks: $?"
