# inotify (libos/tests/c/inotify.c): bad arguments, and the events a
# directory watch and a file watch see for files made, written, closed,
# changed, renamed and removed, compared with the host's.
cbin/inotify
echo "inotify: $?"
