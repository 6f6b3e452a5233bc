# /data on a disk whose files together are larger than lxrt's arena (boot
# test xn_bigdata, xtask/src/xntest.rs): mounting loads no file data, and
# reads come from XN's buffer cache. Record i of bigN is i*N in 15 digits
# and a newline (16 bytes).
test -d /data || { echo "bigdata: no /data"; exit 1; }
for n in 1 2; do
	echo "big$n: $(stat -c %s /data/big$n) bytes, crc $(crc32 < /data/big$n)"
done
r=$(dd if=/data/big2 bs=4096 skip=9000 count=1 2>/dev/null | head -n 1)
[ "$r" -eq $((9000 * 256 * 2)) ] && echo "bigdata: big2's record at block 9000 read"
/cbin/datafile /data
cp /bin/busybox /data/echo && /data/echo "bigdata: a program run from /data"
sync
echo "bigdata: done"
