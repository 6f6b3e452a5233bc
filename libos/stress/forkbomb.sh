# Stress (Veneer only, never run on the host): a shell fork bomb fills the
# environment table; the shell that started it kills everything else with
# kill -9 -1 (its own forks fail meanwhile, the builtins work) and goes on.
f() { f | f & }
f
i=0
while [ $i -lt 2000 ]; do i=$((i + 1)); done
n=0
while [ $n -lt 20 ]; do
    kill -9 -1 2>/dev/null
    n=$((n + 1))
    i=0
    while [ $i -lt 200 ]; do i=$((i + 1)); done
done
wait
echo "forkbomb: after kill -9 -1 the shell runs $(echo a pipeline | cat)"
echo "forkbomb: processes left: $(ps -o pid | wc -l)"
