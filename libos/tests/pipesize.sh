# A pipe's size (libos/tests/c/pipesize.c): F_GETPIPE_SZ and
# F_SETPIPE_SZ were EINVAL; now the ring's size, rounded, refused, kept
# bytes through shrinking and growing, a blocking writer through one page.
mkdir -p tmp
cbin/pipesize
echo "pipesize: $?"
