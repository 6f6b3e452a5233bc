# /data, the C-FFS of the XN disk, across two boots of one image (boot
# test xn_data, xtask/src/xntest.rs): `data.sh write`, reboot, `data.sh read`.
case "$1" in
write)
	test -d /data || { echo "data: no /data"; exit 1; }
	echo hi > /data/f
	mkdir /data/dir
	echo "in a directory" > /data/dir/g
	echo gone > /data/gone
	rm /data/gone
	echo moved > /data/old
	mv /data/old /data/new
	seq 1 20000 > /data/big
	echo "appended" >> /data/f
	/cbin/pagecache store /data/mapped || echo "data: store failed"
	sync
	# No sync after this one: closing it makes it durable.
	echo "closed, not synced" > /data/last
	echo "data: written"
	;;
read)
	echo "f: $(cat /data/f | tr '\n' ' ')"
	echo "g: $(cat /data/dir/g)"
	for gone in /data/gone /data/old; do
		test -e $gone && { echo "data: $gone is back"; exit 1; }
	done
	echo "new: $(cat /data/new)"
	seq 1 20000 | cmp - /data/big || exit 1
	echo "big: the same 108,894 bytes"
	echo "last: $(cat /data/last)"
	echo "mapped: $(cat /data/mapped)"
	echo "ls: $(ls /data | tr '\n' ' ')"
	echo "data: read"
	;;
*)
	echo "usage: data.sh write|read"
	exit 1
	;;
esac
