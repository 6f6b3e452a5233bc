memfree() { while read k v u; do [ "$k" = MemFree: ] && echo $v; done </proc/meminfo; }
free0=$(memfree)
sh /stress/forkbomb.sh
ps -o pid,ppid,stat,comm > /tmp/ps1
echo "after: $(wc -l < /tmp/ps1) Z: $(grep -c ' Z ' /tmp/ps1)"
head -5 /tmp/ps1
sleep 2
ps -o pid,ppid,stat,comm > /tmp/ps1
echo "after 2s: $(wc -l < /tmp/ps1) Z: $(grep -c ' Z ' /tmp/ps1)"
head -5 /tmp/ps1; tail -3 /tmp/ps1
free1=$(memfree)
echo "memory: $free0 -> $free1"
