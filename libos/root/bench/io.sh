# The Veneer side of the storage rows (issue 23 §3), booted as
# `init=lxrt /bin/sh /bench/io.sh [quick] [NAME..]` on a machine whose
# disk holds an empty C-FFS (lxrt's /data; xtask/src/bench/veneer.rs).
# Each row is /cbin/iobench, the program Linux runs as /bin/iobench on
# ext4, with the iteration counts of bench/linux/init.c.
own="io_file small_files cp_file"
quick=0
named=
for w in "$@"; do
	case $w in
	quick) quick=1 ;;
	*) case " $own " in *" $w "*) named="$named $w" ;; esac ;;
	esac
done
# Named words none of which are ours: only the calibration.
if [ -z "$named" ]; then
	named=" $own"
	for w in "$@"; do [ "$w" = quick ] || named=; done
fi
iterations() { # NAME: full and quick counts, as bench/linux/init.c's
	case $1 in
	calib) set -- 10000 2000 ;;
	io_file) set -- 16 1 ;;
	small_files) set -- 1000 50 ;;
	cp_file) set -- 16 1 ;;
	esac
	if [ $quick = 1 ]; then echo $2; else echo $1; fi
}
trials=3
[ $quick = 1 ] && trials=1
echo "BENCH-PLAN calib$named" | tr -s ' '
for b in calib $named; do
	/cbin/iobench $b $(iterations $b) $trials || echo "BENCH-FAIL $b status $?"
done
echo BENCH-DONE
