# System V message queues and semaphores (libos/tests/c/sysv.c),
# compared with the host.
cbin/sysv
echo "sysv: $?"
