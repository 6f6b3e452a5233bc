# Pointers at the very top of the address space (libos/tests/c/badptr.c).
cbin/badptr
echo "badptr: $?"
