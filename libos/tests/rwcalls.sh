# preadv/pwritev/preadv2/pwritev2, copy_file_range, close_range and
# memfd_create with hostile arguments, as on Linux
# (libos/tests/c/rwcalls.c).
cbin/rwcalls
echo "rwcalls: $?"
