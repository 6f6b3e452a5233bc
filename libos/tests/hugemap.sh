# A huge, barely touched mapping (libos/tests/c/hugemap.c).
cbin/hugemap
echo "hugemap: $?"
