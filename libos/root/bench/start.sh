# The Veneer side of the program-start, shell and pipe-streaming rows
# (issue 26), booted as `init=lxrt /bin/sh /bench/start.sh [quick] [NAME..]`
# on a root holding the Debian packages Linux's initramfs holds
# (xtask/src/bench/veneer.rs). Each row is /cbin/startbench, the program
# Linux runs as /bin/startbench, and the HTTP rows /cbin/httpbench (Linux's
# /bin/httpbench: nginx over 127.0.0.1), with the iteration counts of
# bench/linux/init.c. The Cheetah rows are httpbench's too, against
# /cbin/cheetah, with the HTTP rows' counts (Linux's figure for them is
# its nginx's).
own="start_true start_bash start_python shell_build pipe_stream http_0 http_1k http_10k http_100k cheetah_0 cheetah_1k cheetah_10k cheetah_100k"
run_row() { # NAME ITERATIONS TRIALS: the HTTP rows are httpbench's
	case $1 in
	http_* | cheetah_*) /cbin/httpbench "$@" ;;
	*) /cbin/startbench "$@" ;;
	esac
}
program=run_row
counts="start_true 50 2
start_bash 20 2
start_python 5 1
shell_build 200 10
pipe_stream 16384 1024
http_0 100 5
http_1k 100 5
http_10k 100 5
http_100k 50 5
cheetah_0 100 5
cheetah_1k 100 5
cheetah_10k 100 5
cheetah_100k 50 5"
. /bench/rows.sh "$@"
