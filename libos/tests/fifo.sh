# Named pipes (mknod/mknodat, FIFOs opened by path with Linux's waiting
# rules) from C (libos/tests/c/fifo.c) and from busybox's mkfifo and the
# shell's redirections.
cbin/fifo
echo "fifo: $?"
mkfifo -m 600 tmp/p
ls -l tmp/p | cut -c1-10
echo through a fifo > tmp/p &
cat tmp/p
wait
(sleep 0; echo late writer) > tmp/p &
read line < tmp/p
echo "read: $line"
wait
mkfifo tmp/p 2>&1
rm tmp/p
echo done
