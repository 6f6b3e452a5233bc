# Two shared mappings of one memfd see each other's writes and run code
# written through the other, as Erlang's JIT needs
# (libos/tests/c/memfdviews.c).
cbin/memfdviews
echo "memfdviews: $?"
