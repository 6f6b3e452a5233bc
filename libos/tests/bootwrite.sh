# Writing into the middle of a file still read in place from the boot
# archive: the copy it gets must hold the whole file (once it held only up
# to the write's end, and the rest of the copy overran the shared arena).
# (Paths are relative: on the host the script runs in a copy of the root.)
printf 'X' | dd of=etc/passwd bs=1 seek=2 conv=notrunc 2>/dev/null
wc -c < etc/passwd
head -c 5 etc/passwd
echo
i=0; while [ $i -lt 50 ]; do echo $i > tmp/f$i; i=$((i + 1)); done
cat tmp/f49
