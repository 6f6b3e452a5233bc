# GNU tar (issue 29: extracting a symbolic link reported "Cannot change
# mode to rwxrwxrwx: Too many levels of symbolic links", from glibc's
# fchmodat(AT_SYMLINK_NOFOLLOW) opening the link with O_PATH|O_NOFOLLOW):
# an archive of a file, a link to it, a dangling link and a directory,
# made and extracted with modes and links intact.
# with: tar
rm -rf tmp/gt && mkdir -p tmp/gt/src/sub tmp/gt/out
printf 'data\n' > tmp/gt/src/file
chmod 640 tmp/gt/src/file
ln -s file tmp/gt/src/link
ln -s nowhere tmp/gt/src/dangling
chmod 750 tmp/gt/src/sub
cd tmp/gt
/bin/tar cf a.tar src; echo "create: $?"
/bin/tar tf a.tar | sort
cd out && /bin/tar xpf ../a.tar; echo "extract: $?"
for f in src/file src/link src/dangling src/sub; do
    echo "$f: $(stat -c '%A' $f)"
done
echo "link: $(readlink src/link) dangling: $(readlink src/dangling)"
cat src/link
cd ../../..
rm -rf tmp/gt
