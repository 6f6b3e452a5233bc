# Calls made from a stack page made read-only or unmapped, as on Linux
# (libos/tests/c/rostack.c).
cbin/rostack
echo "rostack: $?"
