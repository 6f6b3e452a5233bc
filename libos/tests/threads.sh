# An unmodified static glibc program with threads (libos/tests/c/threads.c,
# built by the host's gcc): pthreads with mutexes, condition variables,
# thread-local storage and joins over 16 threads; raw futex calls (waits
# whose value changed, bad addresses, bad and expired timeouts on both
# clocks, bitsets, requeue, a shared futex between processes); clone's
# refusals and a wild stack; tgkill to a thread and to a foreign process;
# exit vs exit_group; fork from a threaded process.
cbin/threads
echo "threads: $?"
