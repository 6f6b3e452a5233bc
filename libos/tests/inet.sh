# Internet sockets over 127.0.0.1 as on Linux (libos/tests/c/inet.c).
cbin/inet
echo "inet: $?"
