# Leaks (issue 11, class 5): a parent that forks, execs and reaps children,
# and a long-lived shell running commands, give back every frame. After N
# cycles (500 here; `init=lxrt /bin/sh /tests/memleak.sh 10000` for the
# full count), free memory must be where it started to within 1% of it per
# 10^4 cycles (scaled to N).
# veneer-only
n=${1:-500}
/cbin/memloop $n || exit 1
free_kib() { awk '/MemFree/ { print $2 }' /proc/meminfo; }
i=0; while [ $i -lt 20 ]; do /bin/true; i=$((i+1)); done
a=$(free_kib)
i=0; while [ $i -lt $n ]; do /bin/true; i=$((i+1)); done
b=$(free_kib)
lost=$((a - b)); bound=$((a / 100 * n / 10000))
echo "shell: $n commands: free $a -> $b KiB, lost $lost KiB (bound $bound)"
[ $lost -le $bound ]
