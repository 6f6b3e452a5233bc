# Blocking in one process never stalls another (libos/tests/c/pipestall.c).
cbin/pipestall
echo "pipestall: $?"
