# Arguments checked as Linux checks them, the second half
# (libos/tests/c/argcheck2.c): moving data between descriptors, space
# and advice, file system queries, sockets, event objects, small calls.
mkdir -p tmp
cbin/argcheck2
echo "argcheck2: $?"
