# Debian's coreutils (dynamic: ld.so, libc, libselinux, libacl, ...):
# `ls -l` of files made here (times left out, and the block total, which
# depends on the file system) and `sort` with keys, numbers and reverse
# order, and nice.
# with: coreutils
mkdir -p /tmp/lsdir
printf 'hello\n' > /tmp/lsdir/a.txt
printf '%s\n' 1 2 3 4 5 6 7 8 9 10 > /tmp/lsdir/numbers
chmod 600 /tmp/lsdir/numbers
ln -s a.txt /tmp/lsdir/link
mkdir /tmp/lsdir/sub
chmod 750 /tmp/lsdir/sub
/bin/ls -l --time-style=+ /tmp/lsdir/a.txt /tmp/lsdir/link /tmp/lsdir/numbers
/bin/ls -ld --time-style=+ /tmp/lsdir/sub | /usr/bin/cut -c1-10
/bin/ls -1 -F /tmp/lsdir
printf 'pear 3\napple 10\nfig 2\nbanana 10\n' | /usr/bin/sort -k2,2n -k1,1r
printf 'b\na\nc\na\n' | /usr/bin/sort -u
/usr/bin/sort -rn /tmp/lsdir/numbers | /usr/bin/head -n 3
echo "status $?"
rm -r /tmp/lsdir
# nice (coreutils': busybox has none): a command run at a nice value,
# nested values add up, the range ends at 19, root may lower it. Each value
# relative to the shell's (the host's side may itself run niced).
base=$(/usr/bin/nice)
echo $(( $(/usr/bin/nice -n 5 /usr/bin/nice) - base ))
echo $(( $(/usr/bin/nice -n 5 /usr/bin/nice -n 3 /usr/bin/nice) - base ))
/usr/bin/nice -n 50 /usr/bin/nice
echo $(( $(/usr/bin/nice -n -5 /usr/bin/nice) - base ))
echo $(( $(/usr/bin/nice -n 7 sh -c 'cut -d" " -f19 /proc/$$/stat') - base ))
