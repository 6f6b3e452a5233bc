# close_range (libos/tests/c/closerange.c): ranges, close-on-exec marking,
# refusals that close nothing, and glibc's closefrom on top of it.
cbin/closerange
echo "closerange: $?"
