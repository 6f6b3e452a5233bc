# An epoll set shared across fork whose watched pipe the child closed: the
# child's waits see the parent's write (libos/tests/c/epollfork.c).
cbin/epollfork
echo "epollfork: $?"
