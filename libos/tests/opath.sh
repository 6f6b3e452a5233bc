# O_PATH descriptors and directory sizes (libos/tests/c/opath.c): a link
# opened with O_PATH|O_NOFOLLOW, glibc's fchmodat(AT_SYMLINK_NOFOLLOW),
# reopening through /proc/self/fd, O_PATH directories as bases, a
# directory's size, blocks and links.
mkdir -p tmp
cbin/opath
echo "opath: $?"
