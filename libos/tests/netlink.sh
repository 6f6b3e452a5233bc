# Route netlink sockets as on Linux (libos/tests/c/netlink.c): link and
# address dumps, glibc's if_nameindex and getifaddrs, bad requests.
cbin/netlink
echo "netlink: $?"
