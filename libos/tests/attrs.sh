# File attributes and small calls (libos/tests/c/attrs.c): owners and
# set-ID rules, set-group-ID directories, times, fsync, fallocate,
# scheduling policies, affinity, nice values.
mkdir -p tmp
cbin/attrs
echo "attrs: $?"
