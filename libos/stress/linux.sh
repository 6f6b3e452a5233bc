# Stress (Veneer only, never run on the host): hostile Linux load with an
# uninvolved process watching. Arguments: SEED LXCALLS CHURN FILLS (runs
# of tests/fsfull.sh, three fill/empty cycles each).
# `cargo xtask stress` boots `lxrt /bin/sh /stress/linux.sh ...` and reads
# the lines this prints.
seed=$1 calls=$2 churn=$3 fills=$4
# Each phase's start, on the clock heartbeat reports its longest wait by.
phase() { read up idle </proc/uptime; echo "phase: $1 from $up s"; }
memfree() { while read k v u; do [ "$k" = MemFree: ] && echo $v; done </proc/meminfo; }
free0=$(memfree)
cbin/heartbeat >/tmp/heartbeat.out &
hb=$!
phase lxfuzz
cbin/lxfuzz $seed $calls
phase churn
if sh /tests/memleak.sh $churn; then echo "churn: free memory back within 1%"; else echo "churn: NOT within 1%"; fi
n=0
while [ $n -lt $fills ]; do
    n=$((n + 1))
    phase fill
    if sh /tests/fsfull.sh >/tmp/fill.out; then r=ok; else r=FAILED; fi
    echo "fill: run $n of tests/fsfull.sh (3 fill/empty cycles): $r: $(tr '\n' ' ' </tmp/fill.out)"
    rm -f /tmp/fill.out
done
phase forkfull
(ulimit -u 1020; cbin/forkfull)
phase lifetimes
sh /stress/lifetimes.sh
phase end
kill -TERM $hb
wait $hb
cat /tmp/heartbeat.out
sh /stress/forkbomb.sh
rm -f /tmp/heartbeat.out
rm -rf /tmp/fz
free1=$(memfree)
d=$((free0 - free1))
[ $d -lt 0 ] && d=$((-d))
if [ $((d * 100)) -le $free0 ]; then verdict="within 1%"; else verdict="NOT within 1%"; fi
echo "memory: MemFree $free0 kB at the start, $free1 kB at the end: $verdict"
