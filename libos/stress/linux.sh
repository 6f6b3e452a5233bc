# Stress (Veneer only, never run on the host): hostile Linux load with an
# uninvolved process watching. Arguments: SEED LXCALLS CHURN FILLS.
# `cargo xtask stress` boots `lxrt /bin/sh /stress/linux.sh ...` and reads
# the lines this prints.
seed=$1 calls=$2 churn=$3 fills=$4
memfree() { while read k v u; do [ "$k" = MemFree: ] && echo $v; done </proc/meminfo; }
free0=$(memfree)
cbin/heartbeat >/tmp/heartbeat.out &
hb=$!
cbin/lxfuzz $seed $calls $((calls / 400 + 1))
cbin/churn $churn
n=0
while [ $n -lt $fills ]; do
    n=$((n + 1))
    mkdir -p /tmp/fill
    i=0
    while dd if=/dev/zero of=/tmp/fill/f$i bs=65536 count=16 2>/dev/null; do i=$((i + 1)); done
    full=$(echo "a pipeline while full" | cat)
    rm -rf /tmp/fill
    echo "fill: cycle $n: $i MiB of files until full; '$full'; emptied: $(ls /tmp | grep -c fill) left"
done
cbin/forkfull
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
