# Search permission on every directory of a path and execute permission at
# execve, for a user other than root (libos/tests/c/searchperm.c).
cbin/searchperm
echo "searchperm: $?"
rm -rf sp
