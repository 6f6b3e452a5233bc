# Random bytes never repeat between processes: getrandom, /dev/urandom and
# AT_RANDOM in a parent and eight fork children (libos/tests/c/randfork.c),
# and getrandom's argument checks.
cbin/randfork
echo "randfork: $?"
