# sched_yield hands the CPU to another runnable thread
# (libos/tests/c/yield.c): a thread yielding while another computes gets
# the CPU back a few dozen times, as on Linux, not thousands.
cbin/yield 2>/dev/null
echo "yield: $?"
