# Two threads asleep on different pipes at once (libos/tests/c/pipewait.c):
# each sleep waits for its own pipe's term; both wake.
cbin/pipewait
echo "pipewait: $?"
