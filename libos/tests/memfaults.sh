# Bad memory accesses raise Linux's signal, si_code and address in every
# kind of mapping (libos/tests/c/memfaults.c); the handler jumps back.
mkdir -p tmp
cbin/memfaults
echo "memfaults: $?"
