# FUTEX_WAKE_OP (libos/tests/c/futexop.c): each operation and comparison,
# the errors, and two sleepers woken by one call.
cbin/futexop
echo "futexop: $?"
