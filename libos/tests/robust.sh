# Robust mutexes (libos/tests/c/robust.c): a thread ending while it holds
# one gives the next locker EOWNERDEAD, woken if it waits.
cbin/robust
echo "robust: $?"
