# waitid: exits, kills, stops and continues as siginfo_t, WNOWAIT,
# WNOHANG, P_PGID and refusals, compared with the host
# (libos/tests/c/waitid.c).
cbin/waitid
echo "waitid: $?"
