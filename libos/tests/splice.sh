# splice and tee: file to pipe, pipe to file and pipe to pipe, tee, offsets,
# nonblocking and hostile arguments, as on Linux (libos/tests/c/splice.c).
cbin/splice
echo "splice: $?"
