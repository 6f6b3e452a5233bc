# One page cache (libos/tests/c/pagecache.c): MAP_SHARED mappings of a
# /tmp and a /dev/shm file shared by a fork child and by a process started
# by exec, coherent with read() and write() without msync; growth and
# truncation while mapped in another process (SIGBUS, no other file's
# bytes); named semaphores between unrelated processes; MAP_PRIVATE.
cbin/pagecache
echo "pagecache: $?"
