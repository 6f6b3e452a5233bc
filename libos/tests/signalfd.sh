# signalfd (libos/tests/c/signalfd.c): signalfd and signalfd4 answered
# ENOSYS; now reads of the reader's pending signals, poll and epoll, a
# blocking read, a POSIX timer's signal, a fork child's own signals.
cbin/signalfd
echo "signalfd: $?"
