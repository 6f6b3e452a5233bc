# The process table as Linux shows it: busybox ps and /proc. A child's
# entry (its own page, readable by all) lists it with its parent, command
# and group; once it is reaped it is gone.
sleep 5 & p=$!
# Until the child has started sleep, it is a copy of the shell (and on
# Linux, briefly, "exe").
while [ "$(cat /proc/$p/comm)" != sleep ]; do :; done
ps -o pid,ppid,comm | awk -v p=$p -v me=$$ '$1 == p && $2 == me { print "ps lists the child:", $3 }'
ps -o pid,args | awk -v p=$p '$1 == p { $1 = ""; print "args:" $0 }'
echo "comm: $(cat /proc/$p/comm)"
tr '\0' '|' < /proc/$p/cmdline; echo
[ -d /proc/$$ ] && echo "the shell has a directory"
g() { cut -d' ' -f5 /proc/$1/stat; }
[ "$(g $p)" = "$(g $$)" ] && echo "child in the shell's group"
[ "$(cut -d' ' -f4 /proc/$p/stat)" = $$ ] && echo "stat names the parent"
# (The shell's "Terminated" notice comes when it happens to look.)
{ kill $p; wait $p; echo "killed: $?"; } 2>/dev/null
[ -d /proc/$p ] || echo "gone from /proc"
ps -o pid | grep -q "^ *$p\$" || echo "gone from ps"
# CPU time: the kernel counts the ticks that find each environment running.
i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done
[ "$(cut -d' ' -f14 /proc/$$/stat)" -gt 0 ] && echo "the shell has used CPU time"
sh -c 'i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done'
[ "$(cut -d' ' -f16 /proc/$$/stat)" -gt 0 ] && echo "so has its reaped child"
time -f "%U" sh -c 'i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done' 2>&1 | awk '{ print ($1 > 0) ? "time reports user time" : "time reports none" }'
# System-wide files: what free reads.
free | awk 'NR == 2 { print $1, ($2 > 0 && $4 > 0 && $2 >= $4) ? "total and free known" : "?" }'
grep -q '^MemTotal: ' /proc/meminfo && echo "meminfo has MemTotal"
