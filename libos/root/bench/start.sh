# The Veneer side of the program-start, shell and pipe-streaming rows
# (issue 26), booted as `init=lxrt /bin/sh /bench/start.sh [quick] [NAME..]`
# on a root holding the Debian packages Linux's initramfs holds
# (xtask/src/bench/veneer.rs). Each row is /cbin/startbench, the program
# Linux runs as /bin/startbench, with the iteration counts of
# bench/linux/init.c.
own="start_true start_bash start_python shell_build pipe_stream"
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
	start_true) set -- 50 2 ;;
	start_bash) set -- 20 2 ;;
	start_python) set -- 5 1 ;;
	shell_build) set -- 200 10 ;;
	pipe_stream) set -- 16384 1024 ;;
	esac
	if [ $quick = 1 ]; then echo $2; else echo $1; fi
}
trials=3
[ $quick = 1 ] && trials=1
echo "BENCH-PLAN calib$named" | tr -s ' '
for b in calib $named; do
	/cbin/startbench $b $(iterations $b) $trials || echo "BENCH-FAIL $b status $?"
done
echo BENCH-DONE
