# The Veneer side of the program-start, shell and pipe-streaming rows
# (issue 26), booted as `init=lxrt /bin/sh /bench/start.sh [quick] [NAME..]`
# on a root holding the Debian packages Linux's initramfs holds
# (xtask/src/bench/veneer.rs). Each row is /cbin/startbench, the program
# Linux runs as /bin/startbench, with the iteration counts of
# bench/linux/init.c.
own="start_true start_bash start_python shell_build pipe_stream"
program=/cbin/startbench
counts="start_true 50 2
start_bash 20 2
start_python 5 1
shell_build 200 10
pipe_stream 16384 1024"
. /bench/rows.sh "$@"
