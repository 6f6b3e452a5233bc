# RLIMIT_NPROC (ulimit -u) bounds the processes and threads a process may
# make (libos/tests/c/nproc.c), and a shell's `ulimit -u` bounds a fork
# bomb: `f() { f | f & }; f` under `ulimit -u 150` never makes the
# machine hold more than 150 tasks, while a process without the limit
# (this shell) keeps forking beside it; one `kill -9 -1` ends it all.
# Veneer enforces the limit for root, which every process is here (Linux
# exempts root, so the host cannot run this).
# veneer-only
cbin/nproc || exit 1
tasks() { ps -o pid | wc -l; }
rm -f /tmp/np.done
(
    ulimit -u 150
    f() { f | f & }
    f
    until [ -e /tmp/np.done ]; do :; done
    kill -9 -1
    echo "one kill -9 -1: $(ps -o pid | wc -l) lines of ps left"
) &
bomb=$!
most=0
n=0
while [ $n -lt 30 ]; do
    t=$(tasks)
    [ $t -gt $most ] && most=$t
    n=$((n + 1))
done
: > /tmp/np.done
wait $bomb
echo "fork bomb under ulimit -u 150: at most $most lines of ps (150 tasks and a header) seen beside it"
[ $most -le 151 ] || exit 1
