# The part of /bench/start.sh and /bench/io.sh they share, sourced with
# the boot's words as arguments once the caller has set `own` (its rows),
# `program` (the program that runs each, as `PROGRAM NAME ITERATIONS
# TRIALS`) and `counts` (each row's full and quick iteration counts, as
# bench/linux/init.c's, `NAME FULL QUICK` a line), and may set `also`
# (the names `program` prints besides its rows', announced when any of
# them runs).
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
iterations() { # NAME
	echo "calib 10000 2000
$counts" | while read -r name full small; do
		[ "$name" = "$1" ] || continue
		if [ $quick = 1 ]; then echo $small; else echo $full; fi
	done
}
trials=3
[ $quick = 1 ] && trials=1
case $named in *[!\ ]*) named_also="$named ${also:-}" ;; esac
echo "BENCH-PLAN calib${named_also:-}" | tr -s ' '
for b in calib $named; do
	$program $b $(iterations $b) $trials || echo "BENCH-FAIL $b status $?"
done
echo BENCH-DONE
