# An absolute CLOCK_REALTIME timer moves with clock_settime; relative and
# monotonic ones do not (libos/tests/c/walltimer.c, checking itself).
# veneer-only
cbin/walltimer
