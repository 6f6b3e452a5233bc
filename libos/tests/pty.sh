# Pseudo-terminals (libos/tests/c/pty.c): a pair from /dev/ptmx through
# glibc, Linux's answers to bad arguments, a child on the slave as its
# controlling terminal (echo, canonical lines, ^C, window size), and the
# hang-ups when either end goes.
cbin/pty
echo "pty: $?"
ls -d /dev/pts /dev/ptmx
