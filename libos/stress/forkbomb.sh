# Stress (Veneer only, never run on the host): a shell fork bomb under
# `ulimit -u 1000` (RLIMIT_NPROC: it cannot hold more than 1,000 tasks;
# before, the environment table's 1,020 slots bounded it); the shell that
# started it ends it with kill -9 -1 (its own forks fail meanwhile, the
# builtins work): once, and nothing of the bomb may be left when kill
# returns (as on Linux, a SIGKILL has taken effect by then); then a few
# more rounds, and the shell goes on.
ulimit -u 1000
f() { f | f & }
f
i=0
while [ $i -lt 2000 ]; do i=$((i + 1)); done
kill -9 -1 2>/dev/null
# Everything left but init and this shell (read by the shell itself: a
# forked ps would be one more).
left=0
for d in /proc/[0-9]*; do
    [ "$d" = /proc/1 ] || [ "$d" = /proc/$$ ] || left=$((left + 1))
done
if [ $left = 0 ]; then echo "forkbomb: one kill -9 -1 left nothing of the bomb"; else echo "forkbomb: one kill -9 -1 left $left processes: NOT all killed"; fi
n=0
while [ $n -lt 5 ]; do
    kill -9 -1 2>/dev/null
    n=$((n + 1))
done
wait
echo "forkbomb: after kill -9 -1 the shell runs $(echo a pipeline | cat)"
echo "forkbomb: processes left: $(ps -o pid | wc -l)"
