# /proc/PID/status, /proc/sys and a process's own name
# (libos/tests/c/procfiles.c), and busybox ps showing an applet run in a
# forked shell as Linux does: its name, then its command line in braces.
mkdir -p tmp
cbin/procfiles
echo "procfiles: $?"
ps -o comm,args | awk '$1 == "ps" { print "ps lists itself as", $1, $2 }'
