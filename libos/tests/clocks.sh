# clock_nanosleep and nanosleep from an unmodified static glibc program
# (libos/tests/c/clocktest.c): absolute deadlines on CLOCK_MONOTONIC,
# CLOCK_REALTIME and CLOCK_BOOTTIME (200 ms ahead, and already past),
# relative sleeps, Linux's errors for other clocks and bad times, and the
# remaining time after a signal.
cbin/clocktest
echo "clocktest: $?"
