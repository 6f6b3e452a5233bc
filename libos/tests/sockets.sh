# Unix-domain sockets as on Linux (libos/tests/c/sockets.c).
cbin/sockets
echo "sockets: $?"
