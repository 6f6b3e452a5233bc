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
	# The disk's request counts (lxrt's /sys/block/vda/stat, Linux's
	# columns: 5 writes, 7 sectors written, 16 flushes) grow with a sync.
	set -- $(cat /sys/block/vda/stat)
	w=$5 s=$7 f=${16}
	sync
	set -- $(cat /sys/block/vda/stat)
	if [ "$5" -gt "$w" ] && [ "$7" -gt "$s" ] && [ "${16}" -gt "$f" ]; then
		echo "stat: the sync's writes and flushes counted"
	else
		echo "stat: /sys/block/vda/stat did not count the sync: $*"
	fi
	# Closed only: the periodic write-back (30 s after the first change
	# since the last one) puts it on the disk while the shell sleeps.
	echo "closed, written back" > /data/last
	sleep 33
	# Closed only, right before the power goes: close no longer makes a
	# file durable, so the next boot must not find it.
	echo "closed, lost" > /data/dir/volatile
	# Durable by fsync and fdatasync alone (busybox's `sync FILE`, `sync
	# -d FILE`), in another directory block than the one above.
	echo "fsynced" > /data/fsynced
	sync /data/fsynced
	echo "fdatasynced" > /data/fdatasynced
	sync -d /data/fdatasynced
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
	echo "fsynced: $(cat /data/fsynced) $(cat /data/fdatasynced)"
	test -e /data/dir/volatile && { echo "data: /data/dir/volatile was durable at close"; exit 1; }
	echo "ls: $(ls /data | tr '\n' ' ')"
	echo "data: read"
	;;
*)
	echo "usage: data.sh write|read"
	exit 1
	;;
esac
