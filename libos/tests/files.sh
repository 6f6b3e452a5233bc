# Files and directories: create, copy, move, remove, list, stat sizes.
mkdir -p tmp/d/sub
echo one > tmp/d/a
echo two > tmp/d/sub/b
cp tmp/d/a tmp/d/c
mv tmp/d/c tmp/d/sub/c
ls tmp/d
ls tmp/d/sub
cat tmp/d/sub/c
rm tmp/d/a
ls tmp/d
rmdir tmp/d/sub 2>/dev/null || echo not-empty
rm -r tmp/d/sub
ls tmp/d
ln -s ../etc/motd tmp/link
readlink tmp/link
cat tmp/link
wc -c < etc/passwd
test -d tmp && echo dir
test -f etc/motd && echo file
echo x > tmp/t; echo y >> tmp/t; cat tmp/t
cd tmp && pwd | sed 's|.*/||' && cd ..
