# MAP_FIXED over the library's own memory (libos/tests/c/mapfixed.c), then
# the file system and pipes must still work.
cbin/mapfixed
echo "mapfixed: $?"
echo "files and pipes still work: $(cat cbin/mapfixed | wc -c)"
ls /bin/busybox
