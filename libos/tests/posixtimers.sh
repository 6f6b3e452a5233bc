# POSIX timers (libos/tests/c/posixtimers.c): timer_create and the rest
# answered ENOSYS; now signals with SI_TIMER's siginfo, overruns, absolute
# times, a thread's own timer signal, glibc's SIGEV_THREAD callback, CPU
# time, none inherited by a fork child.
cbin/posixtimers
echo "posixtimers: $?"
