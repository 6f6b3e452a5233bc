# IPv6 sockets over ::1 and dual stack as on Linux (libos/tests/c/inet6.c).
cbin/inet6
echo "inet6: $?"
