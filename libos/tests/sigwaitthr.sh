# sigwait with threads (libos/tests/c/sigwaitthr.c): CPython's
# test_sigwait_thread hung on Veneer.
cbin/sigwaitthr
echo "sigwaitthr: $?"
