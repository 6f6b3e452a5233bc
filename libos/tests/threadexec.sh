# execve from a threaded process (libos/tests/c/threadexec.c): the other
# threads (one in a futex wait, one spinning) end; the new program runs
# alone with the same pid.
cbin/threadexec
echo "threadexec: $?"
