# MSG_PEEK on Unix stream and datagram sockets, as on Linux
# (libos/tests/c/msgpeek.c).
cbin/msgpeek
echo "msgpeek: $?"
