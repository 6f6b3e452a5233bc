# Two POSIX timers sharing a real-time signal are both delivered (queued,
# not merged while pending); one timer's repeats stay overruns
# (libos/tests/c/rttimers.c).
cbin/rttimers
echo "rttimers: $?"
