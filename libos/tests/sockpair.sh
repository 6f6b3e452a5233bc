# A socketpair across fork, exec, SCM_RIGHTS (a socket passed itself),
# epoll and shutdown, as on Linux (libos/tests/c/sockpair.c).
cbin/sockpair
echo "sockpair: $?"
