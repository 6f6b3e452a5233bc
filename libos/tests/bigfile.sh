# Impossible file sizes (libos/tests/c/bigfile.c).
cbin/bigfile
echo "bigfile: $?"
