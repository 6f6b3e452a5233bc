# One user's share of the kernel's frame ranges (issue 25,
# libos/tests/c/hostile.c): a process of user 1000 making pipes is refused
# (ENFILE) after its share, 256, while root and user 1001 still make
# pipes; its ranges come back when it exits.
# veneer-only
/cbin/hostile ranges
