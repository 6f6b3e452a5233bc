# dnotify (fcntl F_NOTIFY) as on Linux (libos/tests/c/dnotify.c).
cbin/dnotify
echo "dnotify: $?"
