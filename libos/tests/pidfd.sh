# pidfds: pidfd_open, poll, pidfd_send_signal (a pidfd, /proc/PID),
# waitid(P_PIDFD) and bad arguments, as on Linux (libos/tests/c/pidfd.c).
cbin/pidfd
echo "pidfd: $?"
