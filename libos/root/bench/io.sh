# The Veneer side of the storage rows (issue 23 §3), booted as
# `init=lxrt /bin/sh /bench/io.sh [quick] [NAME..]` on a machine whose
# disk holds an empty C-FFS (lxrt's /data; xtask/src/bench/veneer.rs).
# Each row is /cbin/iobench, the program Linux runs as /bin/iobench on
# ext4, with the iteration counts of bench/linux/init.c.
own="io_file small_files cp_file start_disk"
program=/cbin/iobench
counts="io_file 16 1
small_files 1000 50
cp_file 16 1
start_disk 50 5"
. /bench/rows.sh "$@"
