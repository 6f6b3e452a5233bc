# prctl (names, parent-death signal, dumpable, no_new_privs, the bounding
# set), statfs/fstatfs (file system types and space) and fadvise64, with
# hostile arguments, as on Linux (libos/tests/c/calls.c).
cbin/calls
echo "calls: $?"
