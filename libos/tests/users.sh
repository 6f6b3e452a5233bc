# Two users (libos/tests/c/users.c): uid 1000 cannot read root's 0600
# file, write root's files, signal root's processes or become root again,
# by Linux's calls or by Veneer's own kernel calls.
mkdir -p tmp
cbin/users
echo "users: $?"
