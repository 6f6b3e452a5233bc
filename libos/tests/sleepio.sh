# Threads asleep in calls that fill their buffers (read on a pipe, recv,
# readv) while another thread keeps reading (libos/tests/c/sleepio.c):
# a sleeping call must not keep the program's memory from its siblings.
cbin/sleepio
echo "sleepio: $?"
