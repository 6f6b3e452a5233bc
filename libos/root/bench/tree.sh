# The Veneer side of the I/O-intensive workload (paper 000 §6, issue 23
# §3), booted as `init=lxrt /bin/sh /bench/tree.sh [quick] [NAME..]` on a
# machine whose disk holds an empty C-FFS (lxrt's /data) and whose root
# holds Debian's coreutils, gzip, tar, diffutils and tcc and the tree's archive
# /bench/tree.tar.gz (xtask/src/bench/tree.rs, veneer.rs). The row is
# /cbin/iotree, the program Linux runs as /bin/iotree on ext4, with the
# iteration counts of bench/linux/init.c; it prints its phases' rows too.
own="io_tree"
# Minutes of guest time: a quick boot runs it only when it is named.
case " $* " in *" quick "*) case " $* " in *" io_tree "*) ;; *) own= ;; esac ;; esac
also="tree_cp tree_gunzip tree_untar tree_cpr tree_diff tree_cc tree_tar tree_gzip tree_rm"
program=/cbin/iotree
counts="io_tree 1 1"
. /bench/rows.sh "$@"
