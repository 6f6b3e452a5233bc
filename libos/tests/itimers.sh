# alarm, setitimer and getitimer (libos/tests/c/itimers.c): results and
# refusals, SIGALRM ending blocked calls (EINTR, SA_RESTART), the real,
# virtual and profiling timers reaching a program that spins without calls, killing a child that does not handle
# it, and a fork child without its parent's timer.
cbin/itimers
echo "itimers: $?"
