# Signals onto a stack that cannot take the frame, from an unmodified
# static glibc program (libos/tests/c/badstack.c): an unmapped alternate
# stack, rsp unmapped, zero, non-canonical or in the kernel's half while
# another process signals, a stack exhausted by recursion with a SIGSEGV
# handler. Each child dies of SIGSEGV as on Linux; with a good alternate
# stack the handler of the last runs.
cbin/badstack
echo "badstack: $?"
