# 100 processes in FUTEX_WAIT on a word of a shared mapping, woken and
# requeued with FUTEX_CMP_REQUEUE (libos/tests/c/futexcrowd.c): every
# waiter is woken (none times out) and a process napping meanwhile is on time.
cbin/futexcrowd
