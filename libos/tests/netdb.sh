# The network databases in /etc (services, protocols) through glibc's NSS,
# as on Linux (libos/tests/c/netdb.c).
# with: libc6
cbin/netdb
echo "netdb: $?"
