# Unix datagram sockets bound to names: addresses, connect, MSG_PEEK,
# a full inbox, poll and epoll, fork, SCM_RIGHTS, unlink, ECONNREFUSED,
# as on Linux (libos/tests/c/dgram.c).
cbin/dgram
echo "dgram: $?"
